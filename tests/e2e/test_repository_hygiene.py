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


# How a test could reach outside the repository: an absolute path, a climb above the root, or the
# shared folder's variable (repository.find_shared and the ``shared`` fixture are the one way).
OUTSIDE = re.compile(r"/work/shared|parents\[[2-9]\]|parent\.parent\.parent|ROOT\.parent|EKSMLLINT_SHARED")
ONE_WAY_OUT = {"tests/conftest.py", "tests/repository.py"}


def test_tests_reach_the_shared_material_only_through_the_fixture() -> None:
    offending = [
        f"{p.relative_to(ROOT)}:{n}: {line.strip()}"
        for p in sorted((ROOT / "tests").rglob("*.py"))
        if str(p.relative_to(ROOT)) not in ONE_WAY_OUT
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if OUTSIDE.search(line) and p.resolve() != Path(__file__).resolve()
    ]
    assert offending == []


CONTRIBUTOR_DOCS = ("CONTRIBUTING.md", "docs/writing-rules.md")
#: A `path` in backticks under one of the repository's top-level folders (placeholders left out).
DOC_PATH = re.compile(r"`((?:eksmllint|tests|scripts|fixtures|docs|rules|\.ci|charts|deploy|examples|bench)/[\w./-]*)`")


@pytest.mark.parametrize("doc", CONTRIBUTOR_DOCS)
def test_paths_named_in_the_contributor_docs_exist(doc: str) -> None:
    named = [p for p in DOC_PATH.findall((ROOT / doc).read_text(encoding="utf-8")) if "nnn" not in p.lower()]
    assert named  # the pattern still finds the paths
    assert [p for p in named if not (ROOT / p).exists()] == []
