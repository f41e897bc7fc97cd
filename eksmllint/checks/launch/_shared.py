"""Helpers shared by several launch rules (EML801-EML810)."""

from __future__ import annotations

import re

from eksmllint.analysis.launch_sites import int_opt
from eksmllint.launch.model import ArgPosition, Invocation, Option
from eksmllint.launch.slurm import SlurmScript
from eksmllint.quantity import DIGITS

_GPU_COUNT = re.compile(rf"(?:[A-Za-z0-9_.-]+:)?({DIGITS})")


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


def step_gpus_per_node(script: SlurmScript, inv: Invocation) -> tuple[int | None, str]:
    """GPUs per node of the srun step ``inv`` runs under, and where that is decided: srun's
    ``--gpus-per-node``, srun's ``--gpus-per-task`` x the step's tasks per node, the allocation's
    ``--gpus-per-node``/``--gres``, else the allocation's ``--gpus-per-task`` x the step's tasks."""
    srun = inv.under_srun
    tasks = script.tasks_per_node(srun)
    for name in ("gpus_per_node", "gpus_per_task"):
        opt = srun.option(name) if srun is not None else None
        if opt is None:
            continue
        m = _GPU_COUNT.fullmatch(opt.resolved or "")
        count = int(m.group(1)) if m else None
        if name == "gpus_per_node":
            return count, f"srun {opt.raw}"
        return _times_tasks(count, tasks), f"srun {opt.raw} x {_tasks_text(tasks)}"
    d = script.directive("gpus_per_node") or script.directive("gres")
    per_task = script.directive("gpus_per_task")
    if d is None and per_task is not None:
        where = f"#SBATCH {per_task.raw}, line {per_task.line} x {_tasks_text(tasks)}"
        return _times_tasks(script.gpus_per_task, tasks), where
    return script.gpus_per_node, (f"#SBATCH {d.raw}, line {d.line}" if d else "")


def _times_tasks(per_task: int | None, tasks: int | None) -> int | None:
    return per_task * tasks if per_task is not None and tasks is not None else None


def _tasks_text(tasks: int | None) -> str:
    return f"{tasks} task{'s' if tasks != 1 else ''} per node"
