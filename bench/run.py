"""Benchmark eksmllint against the YAML parse floor (and Checkov, when asked).

    python bench/run.py --sizes 1000 10000 50000 --repeat 3 [--checkov] [--json bench/results.json]

For each size it generates the corpus (bench/generate.py, fixed seed) and measures, in one run:
(a) the floor: composing every file with PyYAML's CSafeLoader in a fresh interpreter;
(b) `eksmllint lint` end to end (a fresh process, as a user runs it);
(c) `checkov --framework kubernetes` when --checkov is given (installed into bench/out/checkov-venv).
It prints medians of --repeat runs: wall time, time per document, peak RSS and the ratios.
Not a timed test: CI runs only `--sizes 200 --repeat 1` to keep this script working.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from generate import generate  # noqa: E402

FLOOR = """
import sys, pathlib, yaml
n = 0
for p in sorted(pathlib.Path(sys.argv[1]).rglob('*.yaml')):
    for node in yaml.compose_all(p.read_text(), Loader=yaml.CSafeLoader):
        n += node is not None
print(n)
"""


def timed(cmd: list[str], env: dict | None = None) -> tuple[float, int, int]:
    """(wall seconds, peak RSS in KiB, exit code) of a child process."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    return wall, usage.ru_maxrss, os.waitstatus_to_exitcode(status)


def checkov_exe(out: Path) -> str:
    venv = out / "checkov-venv"
    exe = venv / "bin" / "checkov"
    if not exe.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", "checkov"], check=True)
    return str(exe)


def measure(size: int, repeat: int, with_checkov: bool, out: Path, extra: list[str]) -> dict:
    corpus = out / f"corpus-{size}"
    docs = generate(size, corpus)
    runs: dict[str, list[tuple[float, int]]] = {"floor": [], "eksmllint": [], "checkov": []}
    lint = [sys.executable, "-m", "eksmllint", "lint", "--fail-on", "never", *extra, str(corpus)]
    for _ in range(repeat):
        wall, rss, _ = timed([sys.executable, "-c", FLOOR, str(corpus)])
        runs["floor"].append((wall, rss))
        wall, rss, code = timed(lint)
        if code not in (0, 1):
            raise SystemExit(f"eksmllint failed with exit code {code} on {corpus}")
        runs["eksmllint"].append((wall, rss))
        if with_checkov:
            wall, rss, _ = timed([checkov_exe(out), "--framework", "kubernetes", "-d", str(corpus), "--quiet", "--compact"])
            runs["checkov"].append((wall, rss))
    result = {"documents": docs}
    for name, values in runs.items():
        if values:
            wall = statistics.median(v[0] for v in values)
            result[name] = {"wall_s": round(wall, 3), "per_doc_ms": round(wall / docs * 1000, 4),
                            "peak_rss_mb": round(max(v[1] for v in values) / 1024, 1)}
    result["eksmllint_over_floor"] = round(result["eksmllint"]["wall_s"] / result["floor"]["wall_s"], 2)
    if "checkov" in result:
        result["checkov_over_eksmllint"] = round(result["checkov"]["wall_s"] / result["eksmllint"]["wall_s"], 1)
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--checkov", action="store_true", help="also run Checkov (installs it into its own venv)")
    ap.add_argument("--out", type=Path, default=HERE / "out")
    ap.add_argument("--json", type=Path, help="write the results here")
    ap.add_argument("--lint-args", default="", help="extra arguments for eksmllint lint, e.g. '--jobs 1'")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    results = {"python": sys.version.split()[0], "cpus": os.cpu_count(), "repeat": args.repeat, "sizes": {}}
    for size in args.sizes:
        r = measure(size, args.repeat, args.checkov, args.out, args.lint_args.split())
        results["sizes"][str(size)] = r
        line = (f"{r['documents']:>6} docs  floor {r['floor']['wall_s']:7.3f}s  eksmllint {r['eksmllint']['wall_s']:7.3f}s "
                f"({r['eksmllint']['per_doc_ms']:.3f} ms/doc, {r['eksmllint']['peak_rss_mb']} MB)  "
                f"x{r['eksmllint_over_floor']} floor")
        if "checkov" in r:
            line += f"  checkov {r['checkov']['wall_s']:.2f}s (x{r['checkov_over_eksmllint']} eksmllint)"
        print(line, flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
