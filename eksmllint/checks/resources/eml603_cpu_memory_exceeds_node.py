"""EML603 cpu-memory-exceeds-node: a pod's effective CPU or memory request exceeds the allocatable (after
kubelet and system reserves, honouring the EC2NodeClass kubelet block) of every type it can land on."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from decimal import Decimal
from typing import TYPE_CHECKING

from eksmllint.analysis.placement import placement
from eksmllint.catalogue import InstanceType, kubelet_allocatable
from eksmllint.checks.helpers import sentences
from eksmllint.checks.resources._shared import (
    fmt_qty,
    landing_types,
    pod_request,
    resources_path,
    type_names,
)
from eksmllint.core.finding import DocPath, Finding
from eksmllint.quantity import to_mib
from eksmllint.workload import (
    Container,
    PodTemplate,
)

if TYPE_CHECKING:
    from eksmllint.core.context import RuleContext


def request_path(c: Container, r: str) -> DocPath:
    """Where the scheduler's request comes from: requests, defaulting to limits."""
    return resources_path(c, "requests" if r in c.requests else "limits", r)


def check(ctx: RuleContext, t: PodTemplate) -> Iterator[Finding]:
    """Requests (Karpenter sizes nodes by requests) above every landing type's allocatable.
    DaemonSet pods are not subtracted (their placement is not known), so this is a lower bound."""
    types = landing_types(ctx, t)
    if types is None:
        return
    kubelets = _landing_kubelets(ctx, t)
    for r in ("cpu", "memory"):
        req = pod_request(t, r)
        if req is None:
            continue
        alloc = _allocatable(ctx.run.memo("kubelet-allocatable"), types, kubelets, r)
        if alloc is None:
            continue  # a kubelet setting that is not a literal: allocatable unknown
        best = max(alloc.values())
        if req.total <= best:
            continue
        biggest = [it for it in types if alloc[it.name] == best]
        shown = f"{best * 1000:.0f}m" if r == "cpu" else f"{best / 2**20:.0f}Mi"
        asked = fmt_qty(r, req.total)
        if r == "memory":
            asked += f" ({to_mib(req.total):.0f}Mi)"
        alone = len(t.containers) + len(t.init_containers) == 1
        whose = f"container {req.container.name!r}" if alone else "the pod"
        share = "" if alone else f" (largest share: container {req.container.name!r})"
        tuned = " (with the EC2NodeClass kubelet settings)" if any(kubelets) else ""
        yield ctx.report(
            t.resource,
            request_path(req.container, r),
            f"{whose} requests {asked} {r} but at most {shown} is allocatable on {type_names(biggest)}",
            detail=sentences(
                share.strip()[1:-1],
                f"allocatable is what is left after kubelet and system reserves{tuned}; the pod never schedules",
            ),
        )


def _landing_kubelets(ctx, t: PodTemplate) -> list[dict | None]:
    """The kubelet block of each NodePool ``t`` lands on (EC2NodeClass ``spec.kubelet``; the NodePool's
    own ``template.spec.kubelet`` in v1beta1); [None] when no pool is known (Karpenter defaults).
    Depends only on the pools: once per shared placement."""
    return ctx.run.once("landing-kubelets", placement(ctx.run, t), _kubelets_of)


def _kubelets_of(run, where) -> list[dict | None]:
    found: list[dict | None] = []
    for pool in where.usable:  # the pools whose types the rule compares
        own = pool.template_spec.get("kubelet")
        block = own if isinstance(own, dict) else None
        if block is None:
            for nc in pool.node_class(run)[:1]:
                k = nc.get(("spec", "kubelet"))
                block = k if isinstance(k, dict) else None
        found.append(block)
    # one entry per distinct block (pools usually share their EC2NodeClass): callers take the max
    found = list({id(b): b for b in found}.values())
    return found or [None]


def _allocatable(
    memo: dict, types: Iterable[InstanceType], kubelets: list[dict | None], r: str
) -> dict[str, Decimal] | None:
    """Largest allocatable ``r`` (cores or bytes) of each type over the pools' kubelet settings (an
    upper bound, so a pool that allows more never yields a wrong finding); None when unknown.
    ``memo`` (per run) holds each (type, kubelet block) answer: the blocks live as long as the run."""
    alloc: dict[str, Decimal] = {}
    for it in types:
        values = []
        for k in kubelets:
            key = (it.name, id(k))
            found = memo.get(key)
            if found is None:
                found = memo[key] = kubelet_allocatable(it, k)
            values.append(found[0 if r == "cpu" else 1])
        if any(v is None for v in values):
            return None
        best = max(v for v in values if v is not None)
        alloc[it.name] = Decimal(best) / 1000 if r == "cpu" else Decimal(best) * 2**20
    return alloc
