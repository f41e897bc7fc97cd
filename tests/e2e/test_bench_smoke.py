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
            "--shapes",
            "mixed",
            "external-refs",
            "--sizes",
            "120",
            "240",
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
    shapes = json.loads(out.read_text())["shapes"]
    assert set(shapes) == {"mixed", "external-refs"}
    for shape in shapes.values():
        result = shape["sizes"]["120"]
        assert result["documents"] >= 120
        assert result["jobs1"]["wall_s"] > 0 and result["default"]["wall_s"] > 0 and result["floor"]["wall_s"] > 0
        assert shape["scaling"]["sizes"] == [120, 240]


def test_generator_is_deterministic(tmp_path):
    sys.path.insert(0, str(ROOT / "bench"))
    from generate import SHAPES, generate

    for shape in SHAPES:
        assert generate(60, tmp_path / shape / "a", shape=shape) >= 60
        generate(60, tmp_path / shape / "b", shape=shape)
        a = sorted((p.name, p.read_text()) for p in (tmp_path / shape / "a").rglob("*") if p.is_file())
        b = sorted((p.name, p.read_text()) for p in (tmp_path / shape / "b").rglob("*") if p.is_file())
        assert a == b and a, shape


def test_webhook_cost_runs():
    """bench/webhook_cost.py (a webhook request's work, counted under callgrind) keeps working."""
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "webhook_cost.py"), "--requests", "2", "--nodepools", "3"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("2 requests, ") and "3 NodePools of context" in proc.stdout
