"""Keep the benchmark script working (a tiny size; not a timed test)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from repository import ROOT


@pytest.mark.slow
def test_bench_runs_on_a_tiny_corpus(tmp_path):
    out = tmp_path / "results.json"
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "run.py"),
            "--sizes",
            "120",
            "--repeat",
            "1",
            "--out",
            str(tmp_path),
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(out.read_text())["sizes"]["120"]
    assert result["documents"] >= 120
    assert result["eksmllint"]["wall_s"] > 0 and result["floor"]["wall_s"] > 0


def test_generator_is_deterministic(tmp_path):
    sys.path.insert(0, str(ROOT / "bench"))
    from generate import generate

    generate(60, tmp_path / "a")
    generate(60, tmp_path / "b")
    a = sorted(p.read_text() for p in (tmp_path / "a").rglob("*.yaml"))
    b = sorted(p.read_text() for p in (tmp_path / "b").rglob("*.yaml"))
    assert a == b and a
