"""End to end: the real pre-commit installs this checkout as a hook and runs it on a commit."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from repository import EFA_JOB, EFA_POOL, ROOT, examples_with_multi_zone_efa_pool, registry_unreachable

pytestmark = pytest.mark.slow  # pre-commit builds a hook environment with pip (minutes)

FIXTURE = ROOT / "fixtures" / "rules" / "EML301-shm-missing"


@pytest.fixture(scope="module")
def precommit():
    exe = shutil.which("pre-commit") or str(Path(sys.executable).with_name("pre-commit"))
    if not Path(exe).exists():
        pytest.skip("pre-commit is not installed (it is in the test extras)")
    reason = registry_unreachable()
    if reason:
        pytest.skip(f"package registry unreachable, pre-commit cannot build the hook env: {reason}")
    return exe


def git(repo: Path, *args: str) -> None:
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.com",
    )
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, env=env)


def test_hook_fails_on_bad_manifest_and_passes_when_fixed(tmp_path, precommit):
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    shutil.copy(FIXTURE / "bad.yaml", repo / "job.yaml")
    git(repo, "add", "job.yaml")
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "cache"))
    cmd = [precommit, "try-repo", str(ROOT), "eksmllint", "--files", "job.yaml"]
    bad = subprocess.run(cmd, cwd=repo, capture_output=True, text=True, env=env, timeout=900)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "EML301" in bad.stdout
    shutil.copy(FIXTURE / "good.yaml", repo / "job.yaml")
    git(repo, "add", "job.yaml")
    good = subprocess.run(cmd, cwd=repo, capture_output=True, text=True, env=env, timeout=900)
    assert good.returncode == 0, good.stdout + good.stderr


@pytest.mark.parametrize("staged", [EFA_POOL, EFA_JOB], ids=["only-the-nodepool", "only-the-job"])
def test_hook_sees_what_a_commit_breaks_with_its_default_context(tmp_path, precommit, staged):
    """The EFA pool now spans three zones: EML101 needs the pool and its EFA jobs together. The
    hook's default (`--context .`) reports it whichever of the two the commit stages."""
    repo = examples_with_multi_zone_efa_pool(tmp_path / "repo")
    git(repo, "init", "-q")
    pool = repo / EFA_POOL
    multi_zone = pool.read_text(encoding="utf-8")
    if staged == EFA_JOB:  # the pool's change is already committed; the commit touches the job
        git(repo, "add", ".")
        git(repo, "commit", "-q", "-m", "platform", "--no-verify")
        job = repo / EFA_JOB
        job.write_text(job.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    else:  # the pool is committed pinned to one zone; the commit widens it
        pool.write_text(multi_zone.replace('"us-west-2a", "us-west-2b", "us-west-2c"', '"us-west-2a"'))
        git(repo, "add", ".")
        git(repo, "commit", "-q", "-m", "platform", "--no-verify")
        pool.write_text(multi_zone, encoding="utf-8")
    git(repo, "add", staged)
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "cache"))
    run = subprocess.run(
        [precommit, "try-repo", str(ROOT), "eksmllint"], cwd=repo, capture_output=True, text=True, env=env, timeout=900
    )
    assert run.returncode == 1, run.stdout + run.stderr
    reported = [line for line in run.stdout.splitlines() if "EML101" in line]
    assert reported and all(line.startswith(staged) for line in reported), run.stdout
