"""EML605 nnodes-mismatch: torchrun --nnodes or deepspeed --num_nodes differs from the pods of the
workload's collective (or falls outside its elastic range)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from eksmllint.checks.helpers import container_invocations
from eksmllint.checks.resources._shared import (
    literal_int,
    option,
    option_fix,
    option_path,
)
from eksmllint.core.finding import Finding
from eksmllint.launch.model import parse_int
from eksmllint.quantity import DIGITS
from eksmllint.workload import (
    Workload,
)

if TYPE_CHECKING:
    from eksmllint.core.context import RuleContext

#: Kinds whose pod count is not a collective size torchrun's ``--nnodes`` could refer to.
_NO_COLLECTIVE_KINDS = frozenset(
    {"Deployment", "StatefulSet", "ReplicaSet", "DaemonSet", "Pod", "CronJob", "RayCluster", "RayJob", "TFJob"}
)


def _replica_values(w: Workload) -> Iterator[Any]:
    """Every field a pod count is computed from (to refuse templated values like ``$NUM_NODES``,
    which the workload view reads as the default 1)."""
    r = w.resource
    for t in w.templates:
        holder = r.get(t.path[:-1]) if t.path and t.path[-1] == "template" else None
        if isinstance(holder, dict) and "replicas" in holder:
            yield holder["replicas"]
    for path in (
        ("spec", "parallelism"),
        ("spec", "completions"),
        ("spec", "leaderWorkerTemplate", "size"),
        ("spec", "replicas"),
    ):
        if r.get(path) is not None:
            yield r.get(path)
    rjobs = r.get(("spec", "replicatedJobs"))
    if isinstance(rjobs, list):
        for rj in rjobs:
            if isinstance(rj, dict):
                for p in (("replicas",), ("template", "spec", "parallelism"), ("template", "spec", "completions")):
                    v = _dig(rj, p)
                    if v is not None:
                        yield v


def _dig(data: Any, path: tuple) -> Any:
    for p in path:
        if not isinstance(data, dict):
            return None
        data = data.get(p)
    return data


def collective_pods(w: Workload) -> int | None:
    """Pods one torchrun rendezvous spans (``--nnodes``), or None when unknown or not a collective."""
    if w.kind in _NO_COLLECTIVE_KINDS:
        return None
    if any(literal_int(v) is None for v in _replica_values(w)):
        return None
    r = w.resource
    if w.kind == "LeaderWorkerSet":  # one collective per group
        return literal_int(r.get(("spec", "leaderWorkerTemplate", "size"))) or 1
    if w.is_batch_job:
        par = literal_int(r.get(("spec", "parallelism")))
        comp = literal_int(r.get(("spec", "completions")))
        if par is not None and comp is not None and par != comp:
            return None  # pods come in waves: which count is meant is unclear
        return par if par is not None else (comp if comp is not None else 1)
    size = w.collective_size
    return size or None


def _elastic_range(w: Workload) -> tuple[int, int] | None:
    ep = w.resource.get(("spec", "elasticPolicy"))
    if w.kind != "PyTorchJob" or not isinstance(ep, dict):
        return None
    lo, hi = literal_int(ep.get("minReplicas")), literal_int(ep.get("maxReplicas"))
    if lo is None or hi is None:
        return None
    return lo, hi


def check(ctx: RuleContext, w: Workload) -> Iterator[Finding]:
    expected = collective_pods(w)
    if expected is None:
        return
    elastic = _elastic_range(w)
    if elastic is None and w.kind == "PyTorchJob" and isinstance(w.resource.get(("spec", "elasticPolicy")), dict):
        return  # elastic without a literal range: the pod count changes at run time
    for t in w.templates:
        for c in t.containers:
            for inv in container_invocations(c):
                opt = (
                    option(inv, "nnodes")
                    if inv.launcher == "torchrun"
                    else (option(inv, "num_nodes") if inv.launcher == "deepspeed" else None)
                )
                if opt is None or opt.resolved is None:
                    continue
                text = opt.resolved.strip()
                flag = "--nnodes" if inv.launcher == "torchrun" else "--num_nodes"
                path = option_path(c, opt)
                lo_hi = re.fullmatch(rf"({DIGITS}):({DIGITS})", text)
                if lo_hi:
                    lo, hi = int(lo_hi.group(1)), int(lo_hi.group(2))
                    if lo <= expected <= hi:
                        continue
                    yield ctx.report(
                        w.resource,
                        path,
                        f"{flag}={text} in container {c.name!r} but the workload runs {expected} pods, "
                        "outside the elastic range; the rendezvous never completes",
                    )
                    continue
                n = parse_int(text)
                if n is None:
                    continue
                if elastic is not None:
                    if elastic[0] <= n <= elastic[1]:
                        continue
                    yield ctx.report(
                        w.resource,
                        path,
                        f"{flag}={n} in container {c.name!r} is outside the elastic range "
                        f"{elastic[0]}:{elastic[1]} of the PyTorchJob",
                    )
                    continue
                if n == expected:
                    continue
                effect = "waits for nodes that never come" if n > expected else "closes before every pod joins"
                yield ctx.report(
                    w.resource,
                    path,
                    f"{flag}={n} in container {c.name!r} but the workload runs {expected} pods; "
                    f"the rendezvous {effect}",
                    fix=option_fix(c, opt, expected, f"Set {flag} to {expected}"),
                )
