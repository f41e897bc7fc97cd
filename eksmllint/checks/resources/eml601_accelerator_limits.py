"""EML601 accelerator-limits: a device-plugin resource (GPU, Neuron, EFA) must be in limits, and a
request, when written, must equal its limit."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from eksmllint.checks.resources._shared import (
    resources_path,
)
from eksmllint.core.finding import Finding, Fix, SetValue
from eksmllint.quantity import parse_count
from eksmllint.workload import (
    DEVICE_PLUGIN_RESOURCES,
    PodTemplate,
)

if TYPE_CHECKING:
    from eksmllint.core.context import RuleContext


def check(ctx: RuleContext, t: PodTemplate) -> Iterator[Finding]:
    """Device-plugin resources must be in limits; requests may be omitted or must equal them."""
    for c in t.containers + t.init_containers:
        for r in DEVICE_PLUGIN_RESOURCES:
            if r not in c.requests:
                continue
            req = c.requests[r]
            path = resources_path(c, "requests", r)
            fix = Fix(
                f"Set limits.{r} of container {c.name!r} to {req}", (SetValue(resources_path(c, "limits", r), req),)
            )
            if r not in c.limits:
                yield ctx.report(
                    t.resource,
                    path,
                    f"container {c.name!r} requests {req} {r} but sets no limit",
                    detail="Extended resources must be in limits (requests default to them), so the pod is rejected.",
                    fix=fix,
                )
                continue
            lim = c.limits[r]
            rq, lq = parse_count(req), parse_count(lim)
            if rq is None or lq is None or rq == lq:
                continue  # templated or equal: nothing to say
            yield ctx.report(
                t.resource,
                path,
                f"container {c.name!r} requests {rq} {r} but limits it to {lq}",
                detail="Extended resources cannot be overcommitted: requests must equal limits.",
                fix=fix,
            )
