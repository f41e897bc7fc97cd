"""EML607 nodepool-limit-too-small: a NodePool's spec.limits is below what one training job that can only
land on that pool requests in total."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import TYPE_CHECKING

from eksmllint.analysis.placement import placement
from eksmllint.checks.resources._shared import (
    fmt_qty,
    pod_request,
)
from eksmllint.core.finding import Finding
from eksmllint.quantity import parse_quantity
from eksmllint.resource import Resource
from eksmllint.workload import (
    ACCELERATORS,
    PodTemplate,
    Workload,
)

if TYPE_CHECKING:
    from eksmllint.core.context import LintRun, RuleContext

#: Kinds that are not "one job" for EML607 (long-running or per-node).
_NOT_A_JOB_KINDS = frozenset({"Deployment", "StatefulSet", "ReplicaSet", "DaemonSet"})
_NODEPOOL_LIMIT_RESOURCES = ACCELERATORS + ("cpu", "memory")


def _sole_pool_tenants(run: LintRun) -> dict[int, list[tuple[Workload, list[PodTemplate]]]]:
    """id(pool) -> training workloads (run order) with the templates that can land only there.
    One pass over the templates instead of one per NodePool (EML607 ran pools x templates)."""
    return run.once("sole-pool-tenants", run, _index_sole_pool_tenants)


def _index_sole_pool_tenants(run: LintRun, _: object) -> dict[int, list[tuple[Workload, list[PodTemplate]]]]:
    index: dict[int, list[tuple[Workload, list[PodTemplate]]]] = {}
    for w in run.workloads:
        if w.kind in _NOT_A_JOB_KINDS or not w.is_training:
            continue
        mine: dict[int, list[PodTemplate]] = {}
        for t in w.templates:
            if not t.replicas:
                continue
            hosting = placement(run, t).hosting
            if len(hosting) == 1:
                mine.setdefault(id(hosting[0]), []).append(t)
        for pool_id, templates in mine.items():
            index.setdefault(pool_id, []).append((w, templates))
    return index


def check(ctx: RuleContext, pool_resource: Resource) -> Iterator[Finding]:
    """A NodePool's ``spec.limits`` caps the capacity of the nodes it creates; a job whose pods can
    only land on this pool and request more in total can never fully start. Pod requests are a
    lower bound of node capacity, so the comparison has no false positives from packing."""
    limits = pool_resource.get(("spec", "limits"))
    if not isinstance(limits, dict):
        return
    pool = ctx.run.nodepool_of(pool_resource)
    if pool is None:
        return
    tenants = _sole_pool_tenants(ctx.run).get(id(pool), ())
    for r in _NODEPOOL_LIMIT_RESOURCES:
        if r not in limits:
            continue
        cap = parse_quantity(limits[r])
        if cap is None:
            continue
        worst: tuple[Decimal, Workload, str] | None = None
        for w, templates in tenants:
            need, parts = Decimal(0), []
            for t in templates:
                per_pod = pod_request(t, r) if r in ("cpu", "memory") else None
                each = per_pod.total if per_pod else (Decimal(t.device_count(r)) if r in ACCELERATORS else Decimal(0))
                if each <= 0:
                    continue
                need += each * (t.replicas or 0)  # the index keeps only templates with replicas
                parts.append(f"{t.replicas} {t.role} pods x {fmt_qty(r, each)}")
            if need > cap and (worst is None or need > worst[0]):
                worst = (need, w, " + ".join(parts))
        if worst is None:
            continue
        need, w, how = worst
        yield ctx.report(
            pool_resource,
            ("spec", "limits", r),
            f"NodePool limits {r} to {fmt_qty(r, cap)} but {w.resource.ref.display()} needs {fmt_qty(r, need)}",
            detail=f"It needs {how} and can only land on this pool; it never fully starts.",
            related=(w.resource.location(()),),
        )
