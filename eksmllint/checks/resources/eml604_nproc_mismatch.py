"""EML604 nproc-mismatch: torchrun --nproc_per_node, deepspeed --num_gpus, PyTorchJob nprocPerNode or
TrainJob numProcPerNode differs from the accelerators (GPUs, NeuronCores) each pod owns; accelerate
--num_processes from the machines times the accelerators of each."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from eksmllint.checks.helpers import container_invocations
from eksmllint.checks.resources._shared import (
    literal_int,
    neuron_cores_of,
    neuron_summary,
    option,
    option_fix,
    option_path,
    run_collective_pods,
)
from eksmllint.core.finding import Finding, Fix, SetValue
from eksmllint.launch.model import Invocation, Option
from eksmllint.models.trainer import Devices, RuntimeView, Setting, trainer_view
from eksmllint.platform.derived import RUNTIME_KINDS, TRAINER_GROUP
from eksmllint.resource import Resource
from eksmllint.workload import (
    GPU,
    NEURON,
    NEURONCORE,
    NEURONDEVICE,
    Container,
    PodTemplate,
    Workload,
)

if TYPE_CHECKING:
    from eksmllint.core.context import RuleContext


def per_node_devices(ctx, t: PodTemplate, c: Container) -> tuple[int, str] | None:
    """(processes one node should start, what they drive) for container ``c``: its GPUs, else its
    NeuronCores (with how they were counted). None when it has neither or the count is unknown."""
    gpus = c.count(GPU)
    if gpus:
        return gpus, GPU
    cores = neuron_cores_of(ctx, t, c)
    if not cores:
        return None
    devices = c.count(NEURON) + c.count(NEURONDEVICE)
    if devices and cores != devices:
        return cores, f"NeuronCores ({neuron_summary(c)} x {cores // devices} cores per device)" if not c.count(
            NEURONCORE
        ) else f"NeuronCores ({neuron_summary(c)})"
    return cores, "NeuronCores"


#: The process-count flag of each launcher: per node, except accelerate's total over all machines.
NPROC_FLAGS = {"torchrun": "nproc_per_node", "deepspeed": "num_gpus", "accelerate": "num_processes"}


def _nproc_options(inv: Invocation) -> Option | None:
    name = NPROC_FLAGS.get(inv.launcher or "")
    return option(inv, name) if name else None


def _main_container(t: PodTemplate) -> Container | None:
    """The container the operator configures (PyTorchJob: ``pytorch``), else the first."""
    for c in t.containers:
        if c.name == "pytorch":
            return c
    return t.containers[0] if t.containers else None


def check(ctx: RuleContext, resource: Resource) -> Iterator[Finding]:
    if resource.kind == "TrainJob":
        yield from _trainjob_nproc(ctx, resource)
        return
    if resource.kind in RUNTIME_KINDS and resource.group == TRAINER_GROUP:
        yield from _runtime_nproc(ctx, resource)
        return
    w = ctx.run.workload_for(resource)
    if w is None:
        return
    explicit: set[int] = set()  # templates whose main container passes the flag itself
    for t in w.templates:
        for c in t.containers:
            for inv in container_invocations(c):
                opt = _nproc_options(inv)
                if opt is None:
                    continue
                if c is _main_container(t):
                    explicit.add(id(t))
                have = per_node_devices(ctx, t, c)
                if have is not None:
                    pods = run_collective_pods(ctx.run, w)  # (once per run: only workloads with the flag ask)
                    yield from _judge_flag(
                        ctx, resource, c, inv, opt, have, pods, f"container {c.name!r}", "the container"
                    )
    if resource.kind == "PyTorchJob":
        yield from _pytorchjob_nproc(ctx, w, explicit)


def _pytorchjob_nproc(ctx, w: Workload, explicit: set[int]) -> Iterator:
    for path in (("spec", "nprocPerNode"), ("spec", "elasticPolicy", "nProcPerNode")):
        n = literal_int(w.resource.get(path))
        if n is None:
            continue  # absent, "auto", "gpu", "cpu" or templated
        counts: dict[int, tuple[PodTemplate, str]] = {}
        for t in w.templates:
            c = _main_container(t)
            if c is None or id(t) in explicit:
                continue  # the command line's own --nproc_per_node wins over PET_NPROC_PER_NODE
            found = per_node_devices(ctx, t, c)
            if found is not None:
                counts.setdefault(found[0], (t, found[1]))
        wrong = {k: v for k, v in counts.items() if k != n}
        if not wrong:
            continue
        have, (t, what) = next(iter(wrong.items()))
        value: Any = str(have) if path[-1] == "nprocPerNode" else have
        fix = Fix(f"Set {path[-1]} to {have}", (SetValue(path, value),)) if len(counts) == 1 else None
        yield ctx.report(
            w.resource,
            path,
            f"{path[-1]} is {n} but each {t.role} pod has {have} {what}; torchrun starts one "
            f"process per accelerator, so {_surplus(n, have)}",
            fix=fix,
        )


def _surplus(n: int, have: int) -> str:
    if n < have:
        return f"{have - n} sit idle"
    return f"{n - have} processes have no device of their own"


def _judge_flag(
    ctx: RuleContext,
    resource: Resource,
    c: Container,
    inv: Invocation,
    opt: Option,
    have: tuple[int, str],
    pods: int | None,
    where: str,
    owner: str,
) -> Iterator[Finding]:
    """A finding when the launcher's process count ``opt`` (written ``where``) differs from the
    ``have`` devices per node ``owner`` has; for accelerate, from all machines' devices."""
    n = opt.int_value()
    if inv.launcher == "accelerate":
        machines = _accelerate_machines(inv, pods)
        if machines is None:
            return
        flag, want = "--num_processes", machines * have[0]
        across = f"{machines} machines x {have[0]}" if machines > 1 else f"one machine with {have[0]}"
        said = f"accelerate {flag}={n} in {where} is the total over all machines, but {across} {have[1]} make {want}"
    else:
        flag, want = ("--num_gpus" if inv.launcher == "deepspeed" else "--nproc_per_node"), have[0]
        said = f"{inv.launcher} {flag}={n} in {where} but {owner} has {have[0]} {have[1]}"
    if n is None or n == want:
        return
    yield ctx.report(
        resource,
        option_path(c, opt),
        f"{said}; each process drives one, so {_surplus(n, want)}",
        fix=option_fix(c, opt, want, f"Set {flag} to {want}"),
    )


def _accelerate_machines(inv: Invocation, pods: int | None) -> int | None:
    """The machines ``accelerate launch --num_processes`` counts over (each machine starts
    num_processes / num_machines): a literal ``--num_machines``, else one when the workload runs a
    single pod and no ``--config_file`` (which may set num_machines) is read; None when unknown."""
    machines_opt = option(inv, "num_machines")
    if machines_opt is not None:
        return machines_opt.int_value() or None
    return 1 if pods == 1 and option(inv, "config_file") is None else None


def _trainjob_nproc(ctx: RuleContext, resource: Resource) -> Iterator[Finding]:
    """Trainer v2: the processes per node (the trainer command's own flag, else ``numProcPerNode`` of
    the TrainJob or of its runtime's policy) against the GPUs/NeuronCores of each node
    (``resourcesPerNode``, else the runtime's trainer container)."""
    view = trainer_view(ctx.run, resource)
    if view.policy not in (None, "torch", "mpi"):
        return  # flux / jax / xgboost: processes per node mean something else there
    devices = view.devices_per_node
    if devices is None:
        return
    have = (devices.count, devices.resource)
    explicit = False  # torchrun's own --nproc_per_node wins over PET_NPROC_PER_NODE
    nodes = view.num_nodes
    pods = literal_int(nodes.value) if nodes is not None else None
    if view.container is not None and view.policy != "mpi":
        for inv in container_invocations(view.container):
            opt = _nproc_options(inv)
            if opt is not None:
                explicit = True
                yield from _judge_flag(
                    ctx, resource, view.container, inv, opt, have, pods, "the trainer command", "each node"
                )
    setting = view.num_proc_per_node
    if not explicit and setting is not None:
        yield from _numprocpernode(ctx, resource, view.policy, setting, devices)


def _runtime_nproc(ctx: RuleContext, resource: Resource) -> Iterator[Finding]:
    """A (Cluster)TrainingRuntime on its own: its policy's ``numProcPerNode`` against the devices of its
    node container, what every TrainJob that sets neither inherits."""
    runtime = RuntimeView(resource)
    setting, devices = runtime.num_proc_per_node, runtime.devices_per_node
    if runtime.policy in ("torch", "mpi") and setting is not None and devices is not None:
        yield from _numprocpernode(ctx, resource, runtime.policy, setting, devices)


def _numprocpernode(
    ctx: RuleContext, resource: Resource, policy: str | None, setting: Setting, devices: Devices
) -> Iterator[Finding]:
    """``numProcPerNode`` (of the TrainJob or the runtime) against the devices of each node (from
    ``resourcesPerNode`` or the runtime's node container), reported on ``resource`` when one of the
    two is written there."""
    n = literal_int(setting.value)
    from_runtime = setting.resource.kind != "TrainJob"
    if n is None or n == devices.count or (policy == "mpi" and from_runtime and n == 1):
        return  # auto/gpu/cpu; or the MPI plugin raising the runtime's default 1 slot to the GPUs
    own_setting, own_devices = setting.resource is resource, devices.where.resource is resource
    if not (own_setting or own_devices):
        return  # both from the runtime: a finding on the runtime, not on every TrainJob using it
    holder = devices.where.resource
    said = "numProcPerNode" if own_setting else f"numProcPerNode of {setting.resource.kind} {setting.resource.name}"
    if holder.kind == "TrainJob":
        gives = "resourcesPerNode"
    else:
        gives = "the node container" + ("" if own_devices else f" of {holder.kind} {holder.name}")
    how = (
        "the MPI hostfile gives each node that many slots, one rank per accelerator"
        if policy == "mpi"
        else "torchrun starts one process per accelerator"
    )
    fix = None
    if own_setting:
        value: Any = devices.count if isinstance(setting.value, int) else str(devices.count)
        fix = Fix(f"Set numProcPerNode to {devices.count}", (SetValue(setting.path, value),))
    yield ctx.report(
        resource,
        setting.path if own_setting else devices.where.path,
        f"{said} is {n} but {gives} gives each node {devices.count} {devices.resource}; {how}",
        fix=fix,
    )
