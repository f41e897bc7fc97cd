"""The project's own .pre-commit-config.yaml (ruff, mypy, eksmllint on its examples) runs green on a
copy of the working tree, offline: every hook is local and runs this environment's tools."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from repository import ROOT

pytestmark = pytest.mark.slow  # mypy over the whole tree without a cache

BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def checkout(tmp_path_factory) -> Path:
    """The files git tracks or would track, as they are now (uncommitted edits included), in a fresh
    git repository."""
    precommit = BIN / "pre-commit"
    if not precommit.exists() or shutil.which("git") is None:
        pytest.skip("pre-commit (test extra) and git are needed to run the project's hooks")
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT, capture_output=True
    )
    if listed.returncode != 0:
        pytest.skip("not a git checkout: no tracked files to copy")
    repo = tmp_path_factory.mktemp("checkout")
    for name in listed.stdout.decode().split("\0"):
        if name and (ROOT / name).is_file():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, repo / name)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    return repo


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def pre_commit(repo: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the copy's code, not this one's
    env.update(PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}", PRE_COMMIT_HOME=str(repo.parent / "pre-commit-home"))
    return subprocess.run(
        [str(BIN / "pre-commit"), "run", *args], cwd=repo, capture_output=True, text=True, env=env, timeout=900
    )


def test_every_hook_passes_on_the_tree(checkout):
    result = pre_commit(checkout, "--all-files", "--show-diff-on-failure")
    assert result.returncode == 0, result.stdout + result.stderr
    passed = {line.split("..")[0] for line in result.stdout.splitlines() if line.endswith("Passed")}  # name....Passed
    assert passed == {"ruff check", "ruff format", "mypy (scripts/typecheck.py)", "eksmllint lint fixtures/examples"}


def test_a_new_finding_in_the_examples_fails_the_eksmllint_hook(checkout):
    added = checkout / "fixtures" / "examples" / "jobs" / "new-job.yaml"
    shutil.copy(ROOT / "fixtures" / "rules" / "EML301-shm-missing" / "bad.yaml", added)
    git(checkout, "add", str(added))
    try:
        result = pre_commit(checkout, "eksmllint-examples", "--all-files")
    finally:
        git(checkout, "rm", "-q", "-f", str(added))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "EML301" in result.stdout
