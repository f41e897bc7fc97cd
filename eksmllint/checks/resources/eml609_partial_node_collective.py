"""EML609 partial-node-collective: a multi-pod collective whose pods each use only part of a node's
accelerators (packing whole nodes keeps collective traffic on the intra-node fabric)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from eksmllint.checks.helpers import fmt_list
from eksmllint.checks.resources._shared import (
    count_path,
    declared,
    landing_types,
)
from eksmllint.core.finding import Finding
from eksmllint.quantity import parse_count
from eksmllint.workload import (
    PodTemplate,
)

if TYPE_CHECKING:
    from eksmllint.core.context import RuleContext


def check(ctx: RuleContext, t: PodTemplate) -> Iterator[Finding]:
    w = t.workload
    if not w.is_multi_pod or t not in w.collective_templates or not t.replicas:
        return
    types = landing_types(ctx, t)
    if types is None:
        return
    for r, n in t.accelerators.items():
        if any(
            declared(c, r) is not None and parse_count(declared(c, r)) is None for c in t.containers + t.init_containers
        ):
            return  # templated count: unknown
        caps = {it.name: it.resource_capacity().get(r, 0) for it in types}
        offering = {k: v for k, v in caps.items() if v > 0}
        if not offering or any(n >= v for v in offering.values()):
            continue
        smallest = min(offering.values())
        top = max(t.containers, key=lambda c: c.count(r), default=None)
        if top is None:
            continue
        on = fmt_list(sorted(k for k, v in offering.items() if v == smallest))
        yield ctx.report(
            t.resource,
            count_path(top, r),
            f"each of the {t.replicas} {t.role} pods of this collective uses {n} of the {smallest}"
            f"{'+' if len(set(offering.values())) > 1 else ''} {r} of {on}",
            detail="Packing whole nodes keeps collective traffic on the intra-node fabric and avoids fragmentation.",
        )
