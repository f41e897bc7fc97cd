"""Peak memory of ``eksmllint lint`` on hostile inputs against their size (issue 16, item 9).

    python bench/memory.py [--out DIR] [--json results/memory.json]

Each case is written to DIR and linted in a fresh process (``-j 1``, JSON to /dev/null); the
peak RSS of that process is read from its resource usage when it ends
(``os.wait4``: that child's own figure). ``python -c pass`` with the same
imports is measured too: the start-up floor every run pays whatever its input.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MiB = 1024 * 1024


def _tiny_documents(target: int) -> str:
    """Many tiny Kubernetes documents (each is a resource every rule looks at)."""
    doc = "---\nkind: A\n"
    return doc * (target // len(doc))


def _tiny_empty_documents(target: int) -> str:
    """Many tiny documents that are not Kubernetes objects (plain mappings)."""
    doc = "---\na: 1\n"
    return doc * (target // len(doc))


def _single_line(target: int) -> str:
    """One flow sequence on one line: a node every two bytes."""
    return "[" + "1," * (target // 2 - 1) + "1]\n"


def _single_line_mapping(target: int) -> str:
    """One flow mapping on one line: a key and a value every 13 bytes."""
    return "{" + ", ".join(f"k{i:07d}: 1" for i in range(target // 13)) + "}\n"


CASES = {
    "tiny-docs-2.8MB": (_tiny_documents, int(2.8e6), "m.yaml"),
    "tiny-plain-docs-2.8MB": (_tiny_empty_documents, int(2.8e6), "m.yaml"),
    "single-line-seq-4.9MB": (_single_line, int(4.9e6), "m.yaml"),
    "single-line-map-4.9MB": (_single_line_mapping, int(4.9e6), "m.yaml"),
}


def peak_rss_mib(args: list[str]) -> tuple[float, float, int]:
    """(peak RSS MiB, wall seconds, exit code) of one child process (``os.wait4``: that child's
    own resource usage, not the maximum over every child so far)."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        args,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_maxrss / 1024, time.perf_counter() - start, proc.returncode


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "bench" / "out" / "memory"))
    ap.add_argument("--json", help="also write the figures to this file")
    ap.add_argument("--case", action="append", choices=sorted(CASES), help="only these cases")
    opts = ap.parse_args()
    out = Path(opts.out)
    out.mkdir(parents=True, exist_ok=True)
    floor, _, _ = peak_rss_mib([sys.executable, "-c", "import eksmllint.cli, eksmllint.core.engine"])
    rows = [{"case": "start-up floor", "bytes": 0, "peak_rss_mib": round(floor, 1)}]
    print(f"{'case':28} {'input':>9} {'peak RSS':>10} {'x input':>8} {'wall':>7}  exit")
    print(f"{'start-up floor':28} {'-':>9} {floor:9.1f}M {'-':>8} {'-':>7}")
    for name in opts.case or list(CASES):
        make, size, filename = CASES[name]
        folder = out / name
        folder.mkdir(exist_ok=True)
        path = folder / filename
        path.write_text(make(size))
        nbytes = path.stat().st_size
        rss, wall, code = peak_rss_mib(
            [sys.executable, "-m", "eksmllint", "lint", "-j", "1", "--format", "json", "--exit-zero", str(path)]
        )
        ratio = (rss - floor) * MiB / nbytes
        rows.append(
            {
                "case": name,
                "bytes": nbytes,
                "peak_rss_mib": round(rss, 1),
                "above_floor_per_input_byte": round(ratio, 1),
                "wall_s": round(wall, 2),
                "exit": code,
            }
        )
        print(f"{name:28} {nbytes / 1e6:8.2f}M {rss:9.1f}M {ratio:7.1f}x {wall:6.2f}s  {code}")
    if opts.json:
        Path(opts.json).write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
