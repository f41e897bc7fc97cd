"""Findings a linted file takes part in are reported even when their anchor is a context file
(issue 25): a commit that changes only a Job sees the EML101 error of the NodePool it lands on."""

from __future__ import annotations

import os

import pytest
from repository import EFA_JOB, EFA_POOL, examples_with_multi_zone_efa_pool

from eksmllint.config import resolve_config, with_overrides
from eksmllint.core.engine import lint_paths


@pytest.fixture
def repo(tmp_path, monkeypatch):
    root = examples_with_multi_zone_efa_pool(tmp_path / "repo")
    monkeypatch.chdir(root)
    return root


def lint(paths, context=(".",), **config):
    cfg = with_overrides(resolve_config(None), context=tuple(context) or None, **config)
    return lint_paths(list(paths), cfg)


def efa_errors(result):
    return [f for f in result.active if f.code == "EML101"]


def test_only_the_job_changed_reports_the_pool_error_on_the_job(repo):
    [found] = efa_errors(lint([EFA_JOB]))
    assert found.location.file == EFA_JOB
    assert f"[at {EFA_POOL}:24]" in found.message  # names the anchor
    assert found.related[0].file.endswith(EFA_POOL)
    assert found.fix is None  # the pool's fix edits the pool, never the job's file


def test_only_the_pool_changed_reports_it_once_with_the_whole_repository_as_context(repo):
    result = lint([EFA_POOL])
    [found] = efa_errors(result)
    assert found.location.file == EFA_POOL
    # `--context .` names the linted file again (as ./platform/...): it is read once.
    assert len([f for f in result.run.files if os.path.realpath(f.path).endswith(EFA_POOL)]) == 1


def test_a_suppression_in_the_context_file_still_holds(repo):
    pool = repo / EFA_POOL
    text = pool.read_text(encoding="utf-8")
    pool.write_text(
        text.replace("  name: h100-efa\n", "  name: h100-efa\n  annotations:\n    eksmllint.io/ignore: EML101\n", 1)
    )
    assert efa_errors(lint([EFA_JOB])) == []


def test_unrelated_context_findings_stay_dropped(repo):
    result = lint([EFA_JOB])
    assert all(f.location.file == EFA_JOB for f in result.findings)
    assert efa_errors(lint([EFA_JOB], context=())) == []  # without context nothing makes it an error
