"""EML604 nproc-mismatch: torchrun --nproc_per_node, deepspeed --num_gpus, PyTorchJob nprocPerNode or
TrainJob numProcPerNode differs from the accelerators (GPUs, NeuronCores) each pod owns."""

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
)
from eksmllint.core.finding import Finding, Fix, SetValue
from eksmllint.launch.model import Invocation, Option
from eksmllint.quantity import parse_count
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


def _nproc_options(inv: Invocation) -> Option | None:
    if inv.launcher == "torchrun":
        return option(inv, "nproc_per_node")
    if inv.launcher == "deepspeed":
        return option(inv, "num_gpus")
    return None


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
                n = opt.int_value()
                have = per_node_devices(ctx, t, c)
                if n is None or have is None or n == have[0]:
                    continue
                flag = "--num_gpus" if inv.launcher == "deepspeed" else "--nproc_per_node"
                yield ctx.report(
                    resource,
                    option_path(c, opt),
                    f"{inv.launcher} {flag}={n} in container {c.name!r} but the container has "
                    f"{have[0]} {have[1]}; each process drives one, so {_surplus(n, have[0])}",
                    fix=option_fix(c, opt, have[0], f"Set {flag} to {have[0]}"),
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


def _trainjob_nproc(ctx, resource: Resource) -> Iterator:
    """Trainer v2: ``spec.trainer.numProcPerNode`` against ``resourcesPerNode`` GPUs/NeuronCores."""
    path = ("spec", "trainer", "numProcPerNode")
    n = literal_int(resource.get(path))
    res = resource.get(("spec", "trainer", "resourcesPerNode"))
    if n is None or not isinstance(res, dict):
        return
    limits: dict = res["limits"] if isinstance(res.get("limits"), dict) else {}
    requests: dict = res["requests"] if isinstance(res.get("requests"), dict) else {}
    for r in (GPU, NEURONCORE):
        have = parse_count(limits.get(r, requests.get(r)))
        if have:
            break
    else:
        return
    if n == have:
        return
    value: Any = have if isinstance(resource.get(path), int) else str(have)
    yield ctx.report(
        resource,
        path,
        f"numProcPerNode is {n} but resourcesPerNode gives each node {have} {r}; "
        "torchrun starts one process per accelerator",
        fix=Fix(f"Set numProcPerNode to {have}", (SetValue(path, value),)),
    )
