"""EML806 slurm-gpu-task-mismatch: a Slurm step's processes or nodes per node disagree with the GPUs
and nodes it gets, or the job asks for more than the nodes of its Slinky partition have."""

from __future__ import annotations

from collections.abc import Iterator

from eksmllint.analysis.launch_sites import int_opt, script_of, slurm_line_col, slurm_sites
from eksmllint.analysis.partitions import NodeShape, partition_shape
from eksmllint.checks.helpers import sentences
from eksmllint.checks.launch._shared import procs_per_node, step_gpus_per_node, tasks_source
from eksmllint.core.context import RuleContext
from eksmllint.core.finding import Finding
from eksmllint.launch.model import PER_NODE_LAUNCHERS, ArgPosition, Invocation, Option
from eksmllint.launch.slurm import SlurmScript
from eksmllint.resource import SourceFile


def _directive_site(script: SlurmScript, name: str) -> tuple[ArgPosition | None, str]:
    d = script.directive(name)
    if d is None:
        return None, ""
    return ArgPosition("script", 0, d.line), d.raw


def _step_nodes(script: SlurmScript, inv: Invocation) -> tuple[int | None, str]:
    srun = inv.under_srun
    opt = srun.option("nodes") if srun is not None else None
    if srun is not None and opt is not None:
        return srun.int_option("nodes"), f"srun {opt.raw}"
    d = script.directive("nodes")
    return script.nodes, (f"#SBATCH {d.raw}, line {d.line}" if d else "")


def check(ctx: RuleContext, src: SourceFile) -> Iterator[Finding]:
    if src.kind != "slurm" or not isinstance(src.text, str):
        return
    script = script_of(src)
    yield from _launcher_mismatches(ctx, src, script)
    shape = partition_shape(ctx.run, script.partition)
    if shape is not None:
        yield from _shape_mismatches(ctx, src, script, shape)


def _launcher_mismatches(ctx, src: SourceFile, script: SlurmScript):
    for site in slurm_sites(src, script):
        inv = site.inv
        if inv.under_srun is None:
            continue
        tasks = script.tasks_per_node(inv.under_srun)
        gpn, gpn_desc = step_gpus_per_node(script, inv)
        nodes, nodes_desc = _step_nodes(script, inv)
        if inv.launcher in PER_NODE_LAUNCHERS:
            if tasks != 1:
                continue  # EML805's business: the count per node is multiplied anyway
            nproc, opt = procs_per_node(inv)
            if nproc is not None and opt is not None and gpn and nproc != gpn:
                flag = opt.raw.split("=")[0]
                effect = (
                    "more processes than GPUs: ranks share or fail to find a device"
                    if nproc > gpn
                    else f"{gpn - nproc} allocated GPUs per node stay idle"
                )
                written = f"{flag}={opt.resolved}"
                if inv.launcher == "accelerate":  # --num_processes counts every machine's processes
                    machines, _ = int_opt(inv, "num_machines")
                    written += f" over {machines} machines"
                yield site.report(
                    ctx,
                    opt.value_position or opt.position,
                    opt.raw,
                    f"{inv.launcher} {written} starts {nproc} processes per node but the job gets {gpn} GPUs per node",
                    detail=sentences(f"GPUs per node: {gpn_desc}", effect),
                )
            nn_names = {"torchrun": ("nnodes",), "deepspeed": ("num_nodes",), "accelerate": ("num_machines",)}[
                inv.launcher
            ]
            nn, nn_opt = int_opt(inv, *nn_names)  # an elastic range (2:4) is no int: silent
            if _one_world_per_node(src, inv, nn_opt, nodes):
                yield site.report(
                    ctx,
                    inv.source.position,
                    "torchrun",
                    f"torchrun has no --nnodes but the step runs on {nodes} nodes ({nodes_desc})",
                    detail=f"torchrun defaults to one node, so each of the {nodes} nodes forms its own world and "
                    f"trains alone; pass --nnodes={nodes} (or $SLURM_NNODES) with a c10d rendezvous.",
                )
            if nn is not None and nn_opt is not None and nodes is not None and nn != nodes:
                yield site.report(
                    ctx,
                    nn_opt.value_position or nn_opt.position,
                    nn_opt.raw,
                    f"{inv.launcher} {nn_opt.raw.split('=')[0]}={nn} but the step runs on {nodes} nodes ({nodes_desc})",
                    detail="The rendezvous "
                    + (
                        "waits forever for nodes that never come."
                        if nn > nodes
                        else "closes before every node has joined."
                    ),
                )
        elif inv.launcher == "python" and tasks is not None and gpn and tasks > gpn:
            desc, pos, raw, _ = tasks_source(script, inv)
            yield site.report(
                ctx,
                pos,
                raw,
                f"srun starts {tasks} Python processes per node but the job gets {gpn} GPUs per node",
                detail=f"Processes: {desc}; GPUs per node: {gpn_desc}. More ranks than GPUs.",
            )


def _one_world_per_node(src: SourceFile, inv: Invocation, nnodes: Option | None, nodes: int | None) -> bool:
    """torchrun without ``--nnodes`` (default 1) started once on each of several nodes. Silent
    when the script sets ``PET_NNODES`` (torchrun reads it) or the step names its hosts."""
    if inv.launcher != "torchrun" or nnodes is not None or inv.option("standalone") is not None:
        return False
    srun = inv.under_srun
    if srun is None or srun.option("nodelist") is not None or nodes is None or nodes <= 1:
        return False
    return "PET_NNODES" not in (src.text or "")


def _shape_mismatches(ctx, src: SourceFile, script: SlurmScript, shape: NodeShape):
    where = f"partition {script.partition!r} ({shape.source})"
    gpn, how, name = script.gpus_per_node, "", "gpus_per_node" if script.directive("gpus_per_node") else "gres"
    tpn = script.ntasks_per_node if script.directive("ntasks_per_node") else None
    if gpn is None and script.gpus_per_task is not None and tpn is not None:
        gpn, how, name = (
            script.gpus_per_task * tpn,
            f" ({script.gpus_per_task} per task x {tpn} tasks)",
            "gpus_per_task",
        )
    if gpn is not None and shape.gpus is not None and gpn > shape.gpus:
        pos, raw = _directive_site(script, name)
        yield ctx.report_file(
            src,
            *slurm_line_col(src, pos, raw),
            f"the job asks for {gpn} GPUs per node{how} but nodes of {where} have {shape.gpus}",
            detail="It stays pending forever.",
        )
    cpt = script.cpus_per_task
    if tpn is not None and cpt is not None and shape.cpus is not None and tpn * cpt > shape.cpus:
        pos, raw = _directive_site(script, "cpus_per_task")
        yield ctx.report_file(
            src,
            *slurm_line_col(src, pos, raw),
            f"{tpn} task{'s' if tpn != 1 else ''} per node x {cpt} CPUs per task = {tpn * cpt} CPUs per node, but nodes "
            f"of {where} have {shape.cpus}",
            detail="The job stays pending forever.",
        )
    mem = script.mem_mb
    if mem is not None and mem > 0 and shape.memory_mib is not None and mem > shape.memory_mib:
        pos, raw = _directive_site(script, "mem")
        yield ctx.report_file(
            src,
            *slurm_line_col(src, pos, raw),
            f"{raw} asks for {mem} MiB per node but nodes of {where} have {shape.memory_mib} MiB",
            detail="The job stays pending forever.",
        )
