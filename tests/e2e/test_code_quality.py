"""The guard rails run as tests, so the README's one test command also keeps the tree linted and
formatted (the versions are pinned in the ``test`` extra, so a new ruff release cannot turn CI red)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from repository import ROOT


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("args", [("ruff", "check", "."), ("ruff", "format", "--check", ".")], ids=["lint", "format"])
def test_ruff_is_clean(args):
    result = _run(*args)
    assert result.returncode == 0, result.stdout + result.stderr
