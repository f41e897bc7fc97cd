"""EML605 nnodes-mismatch: torchrun --nnodes or deepspeed --num_nodes differs from the pods of the
workload's collective (or falls outside its elastic range), or from a TrainJob's numNodes."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from eksmllint.checks.helpers import container_invocations
from eksmllint.checks.resources._shared import (
    literal_int,
    option,
    option_fix,
    option_path,
    run_collective_pods,
)
from eksmllint.core.finding import Finding
from eksmllint.launch.model import parse_int
from eksmllint.models.trainer import trainer_view
from eksmllint.quantity import DIGITS
from eksmllint.resource import Resource
from eksmllint.workload import Container, Workload

if TYPE_CHECKING:
    from eksmllint.core.context import RuleContext


def _elastic_range(w: Workload) -> tuple[int, int] | None:
    ep = w.resource.get(("spec", "elasticPolicy"))
    if w.kind != "PyTorchJob" or not isinstance(ep, dict):
        return None
    lo, hi = literal_int(ep.get("minReplicas")), literal_int(ep.get("maxReplicas"))
    if lo is None or hi is None:
        return None
    return lo, hi


#: The node-count flag of each launcher the rule compares (accelerate counts machines).
NODE_FLAGS = {"torchrun": "nnodes", "deepspeed": "num_nodes", "accelerate": "num_machines"}


def check(ctx: RuleContext, resource: Resource) -> Iterator[Finding]:
    if resource.kind == "TrainJob":
        yield from _trainjob_nnodes(ctx, resource)
        return
    w = ctx.run.workload_for(resource)
    if w is None or not any(_has_node_flag(c) for t in w.templates for c in t.containers):
        return  # (the cheap test first: most workloads pass no node count)
    expected = run_collective_pods(ctx.run, w)
    if expected is None:
        return
    elastic = _elastic_range(w)
    if elastic is None and w.kind == "PyTorchJob" and isinstance(w.resource.get(("spec", "elasticPolicy")), dict):
        return  # elastic without a literal range: the pod count changes at run time
    runs = f"the workload runs {expected} pods"
    for t in w.templates:
        for c in t.containers:
            yield from _judge(ctx, resource, c, f"in container {c.name!r}", expected, runs, elastic)


def _has_node_flag(c: Container) -> bool:
    return any(
        (name := NODE_FLAGS.get(inv.launcher or "")) and option(inv, name) is not None
        for inv in container_invocations(c)
    )


def _trainjob_nnodes(ctx: RuleContext, resource: Resource) -> Iterator[Finding]:
    """Trainer v2: the trainer command's node count against ``numNodes`` (the TrainJob's, else its
    torch runtime's), which the torch plugin exports as ``PET_NNODES`` and the JobSet runs."""
    view = trainer_view(ctx.run, resource)
    nodes = view.num_nodes
    if view.container is None or nodes is None or view.policy not in (None, "torch") or view.elastic:
        return  # mpi counts the launcher as a node; elastic runtimes give a range
    expected = literal_int(nodes.value)
    if expected is None:
        return
    where = (
        "spec.trainer.numNodes"
        if nodes.resource is resource
        else f"mlPolicy.numNodes of {nodes.resource.kind} {nodes.resource.name}"
    )
    runs = f"the TrainJob runs {expected} nodes ({where})"
    yield from _judge(ctx, resource, view.container, "in the trainer command", expected, runs, None)


def _judge(
    ctx: RuleContext,
    resource: Resource,
    c: Container,
    who: str,
    expected: int,
    runs: str,
    elastic: tuple[int, int] | None,
) -> Iterator[Finding]:
    """Findings on the node-count flags of ``c``'s launches against ``expected`` pods (``runs`` says
    where that count comes from; ``elastic``: the PyTorchJob's literal elastic range)."""
    for inv in container_invocations(c):
        name = NODE_FLAGS.get(inv.launcher or "")
        opt = option(inv, name) if name else None
        if opt is None or opt.resolved is None:
            continue
        text = opt.resolved.strip()
        flag = f"--{name}"
        path = option_path(c, opt)
        lo_hi = re.fullmatch(rf"({DIGITS}):({DIGITS})", text)
        if lo_hi:
            lo, hi = int(lo_hi.group(1)), int(lo_hi.group(2))
            if lo <= expected <= hi:
                continue
            yield ctx.report(
                resource,
                path,
                f"{flag}={text} {who} but {runs}, outside the elastic range",
                detail="The rendezvous never completes.",
            )
            continue
        n = parse_int(text)
        if n is None:
            continue
        if elastic is not None:
            if elastic[0] <= n <= elastic[1]:
                continue
            yield ctx.report(
                resource,
                path,
                f"{flag}={n} {who} is outside the elastic range {elastic[0]}:{elastic[1]} of the PyTorchJob",
            )
            continue
        if n == expected:
            continue
        effect = "waits for nodes that never come" if n > expected else "closes before every pod joins"
        yield ctx.report(
            resource,
            path,
            f"{flag}={n} {who} but {runs}",
            detail=f"The rendezvous {effect}.",
            fix=option_fix(c, opt, expected, f"Set {flag} to {expected}"),
        )
