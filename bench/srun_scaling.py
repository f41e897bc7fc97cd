"""How EML805 (srun-launcher-multiplied) and the Slurm parse grow with the number of ``srun`` lines.

    python bench/srun_scaling.py [--sizes 400 2500 10000] [--json out.json]

Writes batch scripts of N lines of ``srun torchrun --nproc_per_node=8 train.py``, each flagged by
EML805 with a fix, in two forms: the steps inherit ``#SBATCH --ntasks-per-node=8``, or each
step sets its own ``srun --ntasks-per-node=8``, and times, in this process,
the Slurm parse and a lint run of EML805 alone (loading included) with its fixes (CPU seconds), plus the Slurm parses the rule asked
for. Issue 16 measured 12.9 s at 400 lines and more than 120 s from 2,500 before the fix.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def srun_script(n: int, own_option: bool = False) -> str:
    """``own_option``: each srun line sets its own ``--ntasks-per-node=8`` (one distinct edit per
    step) instead of inheriting the ``#SBATCH`` one (one edit shared by every step)."""
    head = ["#!/bin/bash", "#SBATCH --nodes=2", "#SBATCH --gpus-per-node=8"]
    if own_option:
        steps = [f"srun --ntasks-per-node=8 torchrun --nproc_per_node=8 train.py --step {k}" for k in range(n)]
    else:
        head.append("#SBATCH --ntasks-per-node=8")
        steps = [f"srun torchrun --nproc_per_node=8 train.py --step {k}" for k in range(n)]
    return "\n".join(head + steps) + "\n"


def measure(n: int, own_option: bool) -> dict:
    import tempfile

    from eksmllint.analysis import launch_sites
    from eksmllint.config import Config
    from eksmllint.core.engine import lint_paths
    from eksmllint.launch import slurm

    text = srun_script(n, own_option)
    path = Path(tempfile.mkdtemp()) / "bench.sbatch"
    path.write_text(text, encoding="utf-8")
    launch_sites.slurm_of.cache_clear()
    t = cpu()
    slurm.parse_sbatch(text)
    parse_s = cpu() - t
    calls = {"parses": 0}
    real = slurm._parse

    def counting(text: str):
        calls["parses"] += 1
        return real(text)

    slurm._parse = counting
    try:
        t = cpu()
        findings = [f for f in lint_paths([str(path)], Config(select=("EML805",))).active if f.code == "EML805"]
        rule_s = cpu() - t
    finally:
        slurm._parse = real
    return {
        "srun_lines": n,
        "form": "own srun option" if own_option else "inherited #SBATCH",
        "bytes": len(text),
        "parse_cpu_s": round(parse_s, 3),
        "rule_cpu_s": round(rule_s, 3),
        "findings": len(findings),
        "fixes": sum(f.fix is not None for f in findings),
        "parses": calls["parses"],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[400, 2500, 10000])
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    rows = [measure(n, own) for own in (False, True) for n in args.sizes]
    for r in rows:
        print(r)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
