"""The repository itself: no merge left half-done in a tracked file."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from repository import ROOT

CONFLICT = re.compile(rb"^(<{7} |>{7} |={7}$)", re.M)


def tracked_files() -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [ROOT / name for name in out.decode().split("\0") if name]


def test_no_merge_conflict_markers_in_tracked_files() -> None:
    marked = [
        str(p.relative_to(ROOT))
        for p in tracked_files()
        if p.is_file() and p.suffix not in {".png", ".json"} and CONFLICT.search(p.read_bytes())
    ]
    assert marked == []
