"""Benchmark eksmllint on the repository shapes of bench/generate.py against the parse floor.

    python bench/run.py [--shapes mixed external-refs ...] [--sizes 1000 10000 50000] [--repeat 3]
                        [--large-repeat 1] [--checkov] [--yamllint] [--json bench/results/out.json]

For each shape and size it generates the corpus (fixed seed) and measures, in one run, in fresh
processes: (a) the floor: composing every YAML file with PyYAML's CSafeLoader (other files, e.g.
Slurm scripts, are only read); (b) `eksmllint lint --jobs 1`; (c) `eksmllint lint` with the
default `--jobs` (automatic; from 50,000 documents only with --large-default); (d) with --checkov,
`checkov --framework kubernetes` (installed into <out>/checkov-venv, never a project dependency). It prints medians of --repeat runs (sizes of
50,000 and more: --large-repeat runs): wall time, CPU time (user+sys, the process and the children
it waited for: steadier than wall time on a busy machine), time per document, peak RSS, the ratios
to the floor, default/--jobs 1, and per shape the per-document cost at the largest size over the
smallest. With --yamllint it also compares `eksmllint lint` on one small file with `yamllint -d
relaxed` (<out>/yamllint-venv) on the same file, start-up included.
Not a timed test: the suite only runs it on a tiny corpus to keep it working.
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
from generate import SHAPES, generate  # noqa: E402

FLOOR = """
import sys, pathlib, yaml
n = 0
for p in sorted(pathlib.Path(sys.argv[1]).rglob('*')):
    if p.suffix in ('.yaml', '.yml', '.json'):
        for node in yaml.compose_all(p.read_text(), Loader=yaml.CSafeLoader):
            n += node is not None
    elif p.is_file():
        n += bool(p.read_text())
print(n)
"""
#: Sizes from which --large-repeat applies.
LARGE = 50_000


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


def tool_exe(out: Path, package: str) -> str:
    """``package``'s command: from this environment when installed here (yamllint: the ``bench``
    extra), else from its own throwaway venv under ``out`` (measurement only)."""
    here = Path(sys.executable).with_name(package)
    if here.exists():
        return str(here)
    venv = out / f"{package}-venv"
    exe = venv / "bin" / package
    if not exe.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", package], check=True)
    return str(exe)


def summarise(values: list[tuple[float, int, float]], docs: int) -> dict:
    wall = statistics.median(v[0] for v in values)
    cpu = statistics.median(v[2] for v in values)
    return {
        "wall_s": round(wall, 3),
        "cpu_s": round(cpu, 3),
        "per_doc_ms": round(wall / docs * 1000, 4),
        "cpu_per_doc_ms": round(cpu / docs * 1000, 4),
        "peak_rss_mb": round(max(v[1] for v in values) / 1024, 1),
        "runs_wall_s": [round(v[0], 3) for v in values],
    }


def measure(
    shape: str, size: int, repeat: int, with_checkov: bool, out: Path, extra: list[str], default: bool = True
) -> dict:
    corpus = out / f"{shape}-{size}"
    docs = generate(size, corpus, shape=shape)
    lint = [sys.executable, "-m", "eksmllint", "lint", "--fail-on", "never", *extra]
    commands = {
        "floor": [sys.executable, "-c", FLOOR, str(corpus)],
        "jobs1": [*lint, "--jobs", "1", str(corpus)],
    }
    if default:
        commands["default"] = [*lint, str(corpus)]
    if with_checkov:
        checkov = tool_exe(out, "checkov")
        commands["checkov"] = [checkov, "--framework", "kubernetes", "-d", str(corpus), "--quiet", "--compact"]
    runs: dict[str, list[tuple[float, int, float]]] = {name: [] for name in commands}
    for _ in range(repeat):  # interleaved: each repeat measures every command in the same minutes
        for name, cmd in commands.items():
            wall, rss, code, cpu = timed(cmd)
            if name in ("jobs1", "default") and code not in (0, 1):
                raise SystemExit(f"eksmllint failed with exit code {code} on {corpus}")
            runs[name].append((wall, rss, cpu))
    result: dict = {"documents": docs, "load_average": list(os.getloadavg())}
    for name, values in runs.items():
        result[name] = summarise(values, docs)
    floor = result["floor"]
    result["jobs1_over_floor"] = round(result["jobs1"]["wall_s"] / floor["wall_s"], 2)
    result["jobs1_over_floor_cpu"] = round(result["jobs1"]["cpu_s"] / floor["cpu_s"], 2)
    if default:
        result["default_over_jobs1"] = round(result["default"]["wall_s"] / result["jobs1"]["wall_s"], 2)
        result["default_over_jobs1_cpu"] = round(result["default"]["cpu_s"] / result["jobs1"]["cpu_s"], 2)
    if "checkov" in result:
        result["checkov_over_default"] = round(result["checkov"]["wall_s"] / result["default"]["wall_s"], 1)
    return result


def measure_single_file(repeat: int, out: Path, extra: list[str], with_yamllint: bool) -> dict:
    """`eksmllint lint` on one small file (4 documents), interpreter start-up included."""
    folder = out / "single"
    generate(4, folder)
    (path,) = sorted(folder.rglob("*.yaml"))
    commands = {"eksmllint": [sys.executable, "-m", "eksmllint", "lint", "--fail-on", "never", *extra, str(path)]}
    if with_yamllint:
        commands["yamllint"] = [tool_exe(out, "yamllint"), "-d", "relaxed", str(path)]
    result: dict = {"file": path.name}
    for cmd in commands.values():
        timed(cmd)  # warm the page cache and byte-code files
    values: dict[str, list] = {name: [] for name in commands}
    for _ in range(repeat):
        for name, cmd in commands.items():
            values[name].append(timed(cmd))
    for name, vs in values.items():
        result[name] = {
            "wall_s": round(statistics.median(v[0] for v in vs), 3),
            "cpu_s": round(statistics.median(v[3] for v in vs), 3),
            "runs_wall_s": [round(v[0], 3) for v in vs],
        }
    if with_yamllint:
        result["eksmllint_over_yamllint_cpu"] = round(result["eksmllint"]["cpu_s"] / result["yamllint"]["cpu_s"], 2)
    return result


def scaling(by_size: dict[str, dict]) -> dict | None:
    """Per-document cost at the largest size over the smallest (CPU of `--jobs 1`, and wall)."""
    sizes = sorted(by_size, key=int)
    if len(sizes) < 2:
        return None
    small, large = by_size[sizes[0]]["jobs1"], by_size[sizes[-1]]["jobs1"]
    return {
        "sizes": [int(sizes[0]), int(sizes[-1])],
        "cpu_per_doc_ratio": round(large["cpu_per_doc_ms"] / small["cpu_per_doc_ms"], 2),
        "wall_per_doc_ratio": round(large["per_doc_ms"] / small["per_doc_ms"], 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shapes", nargs="+", choices=sorted(SHAPES), default=list(SHAPES))
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 50000])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--large-repeat", type=int, default=1, help=f"runs at sizes from {LARGE:,} documents")
    ap.add_argument("--large-default", action="store_true", help=f"also the default --jobs from {LARGE:,} documents")
    ap.add_argument("--checkov", action="store_true", help="also run Checkov (installs it into its own venv)")
    ap.add_argument("--yamllint", action="store_true", help="compare one small file with yamllint (own venv)")
    ap.add_argument("--out", type=Path, default=HERE / "out")
    ap.add_argument("--json", type=Path, help="write the results here")
    ap.add_argument("--lint-args", default="", help="extra arguments for eksmllint lint, e.g. '--format json'")
    ap.add_argument("--no-single", action="store_true", help="skip the one-small-file start-up measurement")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    results: dict = {
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
        "repeat": args.repeat,
        "large_repeat": args.large_repeat,
        "lint_args": args.lint_args,
        "load_average": list(os.getloadavg()),
        "shapes": {},
    }
    extra = args.lint_args.split()
    if not args.no_single:
        single = measure_single_file(max(1, args.repeat * 3), args.out, extra, args.yamllint)
        results["single_file"] = single
        line = f"one small file: eksmllint {single['eksmllint']['wall_s']:.3f}s wall, {single['eksmllint']['cpu_s']:.3f}s CPU"
        if args.yamllint:
            line += f"; yamllint {single['yamllint']['cpu_s']:.3f}s CPU (x{single['eksmllint_over_yamllint_cpu']})"
        print(line, flush=True)
    for shape in args.shapes:
        by_size: dict[str, dict] = {}
        for size in args.sizes:
            repeat = args.large_repeat if size >= LARGE else args.repeat
            default = size < LARGE or args.large_default
            r = by_size[str(size)] = measure(shape, size, repeat, args.checkov, args.out, extra, default)
            line = (
                f"{shape:>13} {r['documents']:>6} docs  floor {r['floor']['wall_s']:7.3f}s  "
                f"-j1 {r['jobs1']['wall_s']:7.3f}s (x{r['jobs1_over_floor']}, CPU x{r['jobs1_over_floor_cpu']}, "
                f"{r['jobs1']['cpu_per_doc_ms']:.3f} ms CPU/doc, {r['jobs1']['peak_rss_mb']} MB)"
            )
            if default:
                line += f"  default {r['default']['wall_s']:7.3f}s (x{r['default_over_jobs1']} of -j1)"
            if "checkov" in r:
                line += f"  checkov {r['checkov']['wall_s']:.2f}s (x{r['checkov_over_default']} default)"
            print(line, flush=True)
        results["shapes"][shape] = {"sizes": by_size, "scaling": scaling(by_size)}
        if s := results["shapes"][shape]["scaling"]:
            print(
                f"{shape:>13} per-document cost {s['sizes'][1]}/{s['sizes'][0]}: CPU x{s['cpu_per_doc_ratio']}",
                flush=True,
            )
        if args.json:  # after every shape: a long run interrupted keeps what it measured
            args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
