"""Benchmark eksmllint against the YAML parse floor (and Checkov, when asked).

    python bench/run.py --sizes 1000 10000 50000 --repeat 3 [--checkov] [--json bench/results.json]

For each size it generates the corpus (bench/generate.py, fixed seed) and measures, in one run:
(a) the floor: composing every file with PyYAML's CSafeLoader in a fresh interpreter;
(b) `eksmllint lint` end to end (a fresh process, as a user runs it);
(c) `checkov --framework kubernetes` when --checkov is given (installed into bench/out/checkov-venv).
It prints medians of --repeat runs: wall time, CPU time (user+sys, the process and the workers it
waited for: steadier than wall time on a busy machine), time per document, peak RSS and the
ratios. It also times `eksmllint lint` on one small file (start-up included), --repeat x 3 times.
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


def _child_env() -> dict:
    # An installed package has byte-code files; PYTHONDONTWRITEBYTECODE (set on some machines)
    # would make every measured run recompile eksmllint's sources (~0.1 s of start-up).
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(cmd: list[str], env: dict | None = None) -> tuple[float, int, int, float]:
    """(wall seconds, peak RSS in KiB, exit code, CPU seconds) of a child process."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_child_env() if env is None else env
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    return wall, usage.ru_maxrss, os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime


def checkov_exe(out: Path) -> str:
    venv = out / "checkov-venv"
    exe = venv / "bin" / "checkov"
    if not exe.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", "checkov"], check=True)
    return str(exe)


def summarise(values: list[tuple[float, int, float]], docs: int) -> dict:
    wall = statistics.median(v[0] for v in values)
    return {
        "wall_s": round(wall, 3),
        "cpu_s": round(statistics.median(v[2] for v in values), 3),
        "per_doc_ms": round(wall / docs * 1000, 4),
        "peak_rss_mb": round(max(v[1] for v in values) / 1024, 1),
        "runs_wall_s": [round(v[0], 3) for v in values],
    }


def measure(size: int, repeat: int, with_checkov: bool, out: Path, extra: list[str]) -> dict:
    corpus = out / f"corpus-{size}"
    docs = generate(size, corpus)
    runs: dict[str, list[tuple[float, int, float]]] = {"floor": [], "eksmllint": [], "checkov": []}
    lint = [sys.executable, "-m", "eksmllint", "lint", "--fail-on", "never", *extra, str(corpus)]
    for _ in range(repeat):
        wall, rss, _, cpu = timed([sys.executable, "-c", FLOOR, str(corpus)])
        runs["floor"].append((wall, rss, cpu))
        wall, rss, code, cpu = timed(lint)
        if code not in (0, 1):
            raise SystemExit(f"eksmllint failed with exit code {code} on {corpus}")
        runs["eksmllint"].append((wall, rss, cpu))
        if with_checkov:
            wall, rss, _, cpu = timed(
                [checkov_exe(out), "--framework", "kubernetes", "-d", str(corpus), "--quiet", "--compact"]
            )
            runs["checkov"].append((wall, rss, cpu))
    result: dict = {"documents": docs}
    for name, values in runs.items():
        if values:
            result[name] = summarise(values, docs)
    result["eksmllint_over_floor"] = round(result["eksmllint"]["wall_s"] / result["floor"]["wall_s"], 2)
    result["eksmllint_over_floor_cpu"] = round(result["eksmllint"]["cpu_s"] / result["floor"]["cpu_s"], 2)
    if "checkov" in result:
        result["checkov_over_eksmllint"] = round(result["checkov"]["wall_s"] / result["eksmllint"]["wall_s"], 1)
    return result


def measure_single_file(repeat: int, out: Path, extra: list[str]) -> dict:
    """`eksmllint lint` on one small file (a few documents), interpreter start-up included."""
    folder = out / "single"
    generate(4, folder)
    (path,) = sorted(folder.rglob("*.yaml"))
    cmd = [sys.executable, "-m", "eksmllint", "lint", "--fail-on", "never", *extra, str(path)]
    timed(cmd)  # warm the page cache and byte-code files
    values = [timed(cmd) for _ in range(repeat)]
    return {
        "file": path.name,
        "wall_s": round(statistics.median(v[0] for v in values), 3),
        "cpu_s": round(statistics.median(v[3] for v in values), 3),
        "runs_wall_s": [round(v[0], 3) for v in values],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--checkov", action="store_true", help="also run Checkov (installs it into its own venv)")
    ap.add_argument("--out", type=Path, default=HERE / "out")
    ap.add_argument("--json", type=Path, help="write the results here")
    ap.add_argument("--lint-args", default="", help="extra arguments for eksmllint lint, e.g. '--jobs 1'")
    ap.add_argument("--no-single", action="store_true", help="skip the one-small-file start-up measurement")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    results: dict = {
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
        "repeat": args.repeat,
        "lint_args": args.lint_args,
        "load_average": list(os.getloadavg()),
        "sizes": {},
    }
    if not args.no_single:
        single = measure_single_file(max(1, args.repeat * 3), args.out, args.lint_args.split())
        results["single_file"] = single
        print(f"one small file: {single['wall_s']:.3f}s wall, {single['cpu_s']:.3f}s CPU (median)", flush=True)
    for size in args.sizes:
        r = measure(size, args.repeat, args.checkov, args.out, args.lint_args.split())
        results["sizes"][str(size)] = r
        line = (
            f"{r['documents']:>6} docs  floor {r['floor']['wall_s']:7.3f}s  eksmllint {r['eksmllint']['wall_s']:7.3f}s "
            f"({r['eksmllint']['per_doc_ms']:.3f} ms/doc, {r['eksmllint']['peak_rss_mb']} MB)  "
            f"x{r['eksmllint_over_floor']} floor (CPU x{r['eksmllint_over_floor_cpu']})"
        )
        if "checkov" in r:
            line += f"  checkov {r['checkov']['wall_s']:.2f}s (x{r['checkov_over_eksmllint']} eksmllint)"
        print(line, flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
