"""EML602 accelerator-exceeds-node: a pod asks for more accelerators than the largest instance type it
can land on has (or for GPUs only fractional-GPU types offer, which EC2 counts as 0)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from eksmllint.analysis.placement import placement
from eksmllint.catalogue import InstanceType
from eksmllint.checks.helpers import fmt_list
from eksmllint.checks.resources._shared import (
    count_path,
    landing_types,
    type_names,
)
from eksmllint.core.finding import Finding
from eksmllint.workload import (
    GPU,
    PodTemplate,
)

if TYPE_CHECKING:
    from eksmllint.core.context import RuleContext


def check(ctx: RuleContext, t: PodTemplate) -> Iterator[Finding]:
    types = landing_types(ctx, t)
    if types is None:
        return
    for r, n in t.accelerators.items():
        offering = [it for it in types if it.resource_capacity().get(r, 0) > 0]
        if not offering:
            yield from _uncounted_gpu(ctx, t, types, r)  # otherwise EML702 reports it
            continue
        best = max(it.resource_capacity()[r] for it in offering)
        if n <= best:
            continue
        top = max((c for c in t.containers + t.init_containers), key=lambda c: c.count(r))
        biggest = [it for it in offering if it.resource_capacity()[r] == best]
        yield ctx.report(
            t.resource,
            count_path(top, r),
            f"the pod requests {n} {r} but the largest instance type it can land on has {best}",
            detail=f"The largest: {type_names(biggest)}. The pod can never be scheduled.",
        )


def _uncounted_gpu(ctx, t: PodTemplate, types: tuple[InstanceType, ...], r: str) -> Iterator:
    """A GPU pod that can only land on types whose GPU EC2 counts as 0 (g6f/gr6f: a fraction of an
    L4): no node ever advertises nvidia.com/gpu, so Karpenter never launches one for the pod. With
    NodePools the pod is judged against EML702 reports it (no pool can launch a node with the pod's
    devices)."""
    if r != GPU or not types or not all(it.has_uncounted_gpu for it in types):
        return
    if placement(ctx.run, t).present:
        return
    top = max((c for c in t.containers + t.init_containers), key=lambda c: c.count(r))
    shares = fmt_list(sorted({f"{it.name} ({it.gpu_fraction:g} of an {it.accelerator})" for it in types}))
    yield ctx.report(
        t.resource,
        count_path(top, r),
        f"the pod requests {t.accelerators[r]} {r} but can only land on fractional GPUs ({shares})",
        detail=f"EC2 counts a fractional GPU as 0 GPUs, so no node offers {r}: Karpenter never launches one for "
        "the pod and it never schedules.",
    )
