"""The guard rails run as tests, so the README's one test command also keeps the tree linted and
formatted (the versions are pinned in the ``test`` extra, so a new ruff release cannot turn CI red)."""

from __future__ import annotations

import importlib.util
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


@pytest.mark.slow
def test_mypy_is_clean():
    """scripts/typecheck.py: mypy over the whole package, failing on any error."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "typecheck.py")], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_typecheck_counts_errors_not_notes():
    spec = importlib.util.spec_from_file_location("typecheck", ROOT / "scripts" / "typecheck.py")
    typecheck = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(typecheck)
    output = "\n".join(
        [
            'eksmllint/quantity.py:58: error: Argument 1 to "Decimal" has incompatible type  [arg-type]',
            "eksmllint/fix/model.py:47: note: a note is not an error",
            "Found 1 error in 1 file (checked 106 source files)",
        ]
    )
    assert typecheck.errors_in(output) == [output.splitlines()[0]]
