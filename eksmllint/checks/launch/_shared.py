"""Helpers shared by several launch rules (EML801-EML810)."""

from __future__ import annotations

from eksmllint.analysis.launch_sites import int_opt
from eksmllint.launch.model import ArgPosition, Invocation, Option
from eksmllint.launch.slurm import SlurmScript


def field_path(e: dict) -> str | None:
    vf = e.get("valueFrom")
    fr = vf.get("fieldRef") if isinstance(vf, dict) else None
    fp = fr.get("fieldPath") if isinstance(fr, dict) else None
    return fp if isinstance(fp, str) else None


def tasks_source(script: SlurmScript, inv: Invocation) -> tuple[str, ArgPosition | None, str, str | None]:
    """Where the tasks-per-node of an srun step is decided: (description, position, raw, literal
    value or None). srun's own literal option wins; a derived one points at the directive."""
    srun = inv.under_srun
    for name in ("ntasks_per_node", "ntasks"):
        opt = srun.option(name) if srun is not None else None
        if opt is not None and opt.resolved is not None and opt.resolved == opt.value:
            return f"srun {opt.raw}", opt.position, opt.raw, opt.value
        if opt is not None:
            break
    for name in ("ntasks_per_node", "ntasks"):
        d = script.directive(name)
        if d is not None:
            return f"#SBATCH {d.raw}", ArgPosition("script", 0, d.line), d.raw, d.value
    opt = srun.option("ntasks_per_node") or srun.option("ntasks") if srun is not None else None
    if opt is not None:
        return f"srun {opt.raw}", opt.position, opt.raw, None
    return "srun", srun.position if srun else None, "srun", None


def procs_per_node(inv: Invocation) -> tuple[int | None, Option | None]:
    if inv.launcher == "torchrun":
        return int_opt(inv, "nproc_per_node")
    if inv.launcher == "deepspeed":
        return int_opt(inv, "num_gpus")
    if inv.launcher == "accelerate":
        procs, opt = int_opt(inv, "num_processes")
        machines, _ = int_opt(inv, "num_machines")
        if procs is not None and machines:
            return (procs // machines if procs % machines == 0 else None), opt
        return None, opt
    return None, None
