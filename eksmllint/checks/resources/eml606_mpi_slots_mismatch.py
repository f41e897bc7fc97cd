"""EML606 mpi-slots-mismatch: an MPIJob's slotsPerWorker differs from the GPUs per worker, or mpirun -np
differs from the slots the MPIJob offers."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from eksmllint.checks.helpers import container_invocations, sentences
from eksmllint.checks.resources._shared import (
    literal_int,
    option,
    option_fix,
    option_path,
)
from eksmllint.core.finding import Finding, Fix, SetValue
from eksmllint.launch.model import PER_NODE_LAUNCHERS, Invocation
from eksmllint.models.trainer import trainer_view
from eksmllint.resource import Resource
from eksmllint.workload import (
    GPU,
    Container,
    PodTemplate,
    Workload,
)

if TYPE_CHECKING:
    from eksmllint.core.context import RuleContext


def is_per_node_launch(inv: Invocation) -> bool:
    """A per-node launcher, also when mpirun starts it (``mpirun -N 1 torchrun ...``: the launch
    analysis reports torchrun as mpirun's program there)."""
    if inv.launcher in PER_NODE_LAUNCHERS:
        return True
    program = (inv.script or "").rsplit("/", 1)[-1]
    return inv.launcher == "mpirun" and program in PER_NODE_LAUNCHERS


def _mpi_templates(w: Workload) -> tuple[PodTemplate | None, PodTemplate | None]:
    by_role = {t.role: t for t in w.templates}
    return by_role.get("launcher"), by_role.get("worker")


#: mpi-operator release that added ``runLauncherAsWorker`` (v0.5.0: the launcher joins the hostfile).
LAUNCHER_AS_WORKER_SINCE = "0.5"


def _launcher_as_worker(ctx: RuleContext, r: Resource) -> tuple[bool, str]:
    """(does the launcher hold slots in the hostfile, a note for messages when the field is ignored).
    Only the v2beta1 API of mpi-operator >= 0.5 has ``runLauncherAsWorker``."""
    if r.get(("spec", "runLauncherAsWorker")) is not True or r.api_version != "kubeflow.org/v2beta1":
        return False, ""
    if not ctx.platform.at_least("mpi-operator", LAUNCHER_AS_WORKER_SINCE):
        return (
            False,
            f" (runLauncherAsWorker is ignored before mpi-operator 0.5: {ctx.platform.describe('mpi-operator')})",
        )
    return True, ""


def check(ctx: RuleContext, resource: Resource) -> Iterator[Finding]:
    if resource.kind == "TrainJob":
        yield from _trainjob_slots(ctx, resource)
        return
    w = ctx.run.workload_for(resource)
    if w is None or w.kind != "MPIJob":
        return
    launcher, worker = _mpi_templates(w)
    if worker is None:
        return
    r = w.resource
    raw_slots = r.get(("spec", "slotsPerWorker"))
    slots = 1 if raw_slots is None else literal_int(raw_slots)
    workers = literal_int(r.get(("spec", "mpiReplicaSpecs", "Worker", "replicas"), 1))
    if slots is None or workers is None:
        return
    launches = [(c, inv) for c in (launcher.containers if launcher else []) for inv in container_invocations(c)]
    per_node = any(is_per_node_launch(inv) for _, inv in launches)
    gpus = worker.device_count(GPU)
    intended = slots
    if gpus and not per_node and slots != gpus:
        intended = gpus
        where = ("spec", "slotsPerWorker") if raw_slots is not None else ("spec",)
        said = f"slotsPerWorker is {slots}" if raw_slots is not None else "slotsPerWorker is unset (default 1)"
        yield ctx.report(
            r,
            where,
            f"{said} but each worker has {gpus} {GPU}",
            detail=f"MPI starts one rank per slot, so {abs(gpus - slots)} GPUs per worker "
            f"{'sit idle' if slots < gpus else 'are oversubscribed'}.",
            fix=Fix(f"Set slotsPerWorker to {gpus}", (SetValue(("spec", "slotsPerWorker"), gpus),)),
        )
    as_worker, ignored = _launcher_as_worker(ctx, r)
    if as_worker and gpus and not per_node and launcher is not None and not launcher.device_count(GPU):
        yield ctx.report(
            r,
            ("spec", "runLauncherAsWorker"),
            f"runLauncherAsWorker gives the launcher {intended} slots but the launcher pod has no {GPU}",
            detail=f"Each worker has {gpus}; the ranks MPI starts on the launcher have no GPU (as of "
            f"{ctx.platform.describe('mpi-operator')}).",
        )
    nodes = workers + (1 if as_worker else 0)
    how = f"{workers} workers x {intended} slots" + (f" + {intended} on the launcher" if as_worker else "")
    if intended != slots:
        how += ", once slotsPerWorker matches the GPUs"
    offers = f"the MPIJob offers {intended * nodes} slots ({how}){ignored}"
    for c, inv in launches:
        yield from _judge_np(ctx, r, c, inv, per_node, intended, nodes, offers)


def _judge_np(
    ctx: RuleContext,
    resource: Resource,
    c: Container,
    inv: Invocation,
    per_node: bool,
    slots: int,
    nodes: int,
    offers: str,
) -> Iterator[Finding]:
    """mpirun's ``-np`` against the ranks the hostfile's ``nodes`` x ``slots`` place (``offers`` says
    how), or ``-N`` / ``--npernode`` / ``-ppn`` ranks on each node when the command fixes them."""
    if inv.launcher != "mpirun":
        return
    opt = option(inv, "np", "n", "c")
    if opt is None:
        return
    n = opt.int_value()
    ppn_opt = option(inv, "npernode")
    if ppn_opt is None and per_node and slots != 1:
        return  # one launcher per node, but mpirun fills each node's slots first: placement unclear
    per = ppn_opt.int_value() if ppn_opt is not None else slots
    if n is None or per is None or n == per * nodes:
        return
    expected = per * nodes
    if ppn_opt is not None:  # that many ranks on every node
        ranks = "1 rank" if per == 1 else f"{per} ranks"
        said = f"{ppn_opt.raw} places {ranks} on each of {nodes} nodes ({expected})"
        result = f"{expected - n} slots stay idle" if n < expected else "mpirun refuses more ranks than -N places"
    else:
        said = offers
        result = "mpirun fails with not enough slots" if n > expected else f"{expected - n} slots stay idle"
    yield ctx.report(
        resource,
        option_path(c, opt),
        f"mpirun -np {n} but {said}",
        detail=sentences(result),
        fix=option_fix(c, opt, expected, f"Set mpirun -np to {expected}"),
    )


def _trainjob_slots(ctx: RuleContext, resource: Resource) -> Iterator[Finding]:
    """Trainer v2 on an MPI runtime: the trainer command (it runs on the launcher) against the
    hostfile the MPI plugin writes: ``numNodes`` entries (with ``runLauncherAsNode`` the launcher is
    one of them, and at least one node besides it) of ``numProcPerNode`` slots each (the TrainJob's,
    else the runtime's; the runtime's 1 becomes the GPUs per node when there are several)."""
    view = trainer_view(ctx.run, resource)
    if view.policy != "mpi" or view.container is None or view.runtime is None:
        return
    num_nodes = view.num_nodes
    nodes = literal_int(num_nodes.value) if num_nodes is not None else None
    setting = view.num_proc_per_node
    slots = literal_int(setting.value) if setting is not None else 1
    if not nodes or not slots:
        return
    devices = view.devices_per_node
    raised = setting is None or setting.resource is not resource
    if raised and slots == 1 and devices is not None and devices.count > 1:
        slots = devices.count  # the MPI plugin's rule for the runtime's default of 1
    as_node = view.runtime.runtime.get(("spec", "mlPolicy", "mpi", "runLauncherAsNode")) is True
    if as_node:
        nodes = max(nodes - 1, 1) + 1
    per_node = any(is_per_node_launch(inv) for inv in container_invocations(view.container))
    offers = f"the hostfile of the TrainJob offers {nodes * slots} slots ({nodes} nodes x {slots} slots)"
    for inv in container_invocations(view.container):
        yield from _judge_np(ctx, resource, view.container, inv, per_node, slots, nodes, offers)
