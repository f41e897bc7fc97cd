"""A file whose name is not UTF-8 (bytes ``\\xff\\xfe``) gets a report in every format and a
baseline, with the name escaped and no traceback (issue 22). Subprocesses: the names travel
through ``sys.argv``, ``os.walk`` and stdout exactly as for a user."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from eksmllint.formatters import FORMATTERS

POD = (
    "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n"
    "    image: python:3.11.9-slim\n    resources: {requests: {nvidia.com/gpu: 1}}\n"
)


@pytest.fixture()
def tree(tmp_path):
    if sys.platform == "darwin":
        pytest.skip("macOS file systems refuse names that are not UTF-8")
    directory = tmp_path / "manifests"
    directory.mkdir()
    with open(os.fsencode(directory) + b"/bad-\xff\xfe.yaml", "w") as fh:
        fh.write(POD)
    return directory


def _lint(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "eksmllint", "lint", *args], capture_output=True, timeout=120, check=False
    )


@pytest.mark.parametrize("fmt", sorted(FORMATTERS))
def test_every_format_reports_a_non_utf8_file_name(tree, tmp_path, fmt):
    out = tmp_path / f"report.{fmt}"
    run = _lint(str(tree), "--format", fmt, "--output", str(out))
    assert b"Traceback" not in run.stderr, run.stderr.decode(errors="replace")
    assert run.returncode == 1  # the finding, not a crash
    report = out.read_text(encoding="utf-8")  # valid UTF-8
    assert "EML601" in report
    assert "bad-" in report and "\ufffd" not in report
    stdout = _lint(str(tree), "--format", fmt)
    assert b"Traceback" not in stdout.stderr and stdout.returncode == 1
    stdout.stdout.decode("utf-8")  # the report on stdout is valid UTF-8 too


def test_a_baseline_with_a_non_utf8_file_name_is_written_and_matches(tree, tmp_path):
    baseline = tmp_path / "baseline.json"
    run = _lint(str(tree), "--write-baseline", str(baseline))
    assert b"Traceback" not in run.stderr, run.stderr.decode(errors="replace")
    assert json.loads(baseline.read_text(encoding="utf-8"))["findings"]
    again = _lint(str(tree), "--baseline", str(baseline), "--format", "json")
    assert again.returncode == 0, again.stdout.decode(errors="replace")
