"""EML303 shm-exceeds-memory: the memory-backed emptyDirs of a pod promise more than the memory
limit their tmpfs pages are charged to; the fix scales them to a share of that limit."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from eksmllint.checks.shm._shared import pod_memory_limit_mib, sized_memory_emptydirs
from eksmllint.core.finding import Finding, Fix, FixOp, SetValue
from eksmllint.quantity import format_mib
from eksmllint.workload import PodTemplate

if TYPE_CHECKING:
    from eksmllint.core.context import RuleContext

#: Share of the pod's memory limit that the fix leaves to memory-backed emptyDirs together.
DEFAULT_BUDGET_FRACTION = 0.5


def _floor_size(mib: float) -> int:
    """Round a computed size down to whole GiB (whole MiB below 1 GiB), as fixes write them."""
    if mib >= 1024:
        return int(mib // 1024) * 1024
    return int(mib)


def check(ctx: RuleContext, t: PodTemplate) -> Iterator[Finding]:
    limit = pod_memory_limit_mib(t)
    if limit is None:
        return
    sized = sized_memory_emptydirs(t)
    total = sum(s for _, _, s in sized)
    if not sized or total <= limit:
        return
    fraction = ctx.options.get("budget-fraction", DEFAULT_BUDGET_FRACTION)
    try:
        fraction = float(fraction)
    except (TypeError, ValueError):
        fraction = DEFAULT_BUDGET_FRACTION
    if not 0 < fraction < 1:
        fraction = DEFAULT_BUDGET_FRACTION
    budget = limit * fraction
    ops: list[FixOp] = []
    for i, _, s in sized:
        new = _floor_size(s * budget / total)
        if new < 1:
            ops = []
            break
        ops.append(SetValue(t.spec_path + ("volumes", i, "emptyDir", "sizeLimit"), format_mib(new)))
    fix = (
        Fix(
            f"Scale the memory-backed emptyDirs down to {int(fraction * 100)}% of the pod's "
            f"{format_mib(limit)} memory limit",
            tuple(ops),
        )
        if ops
        else None
    )
    i0, _, _ = max(sized, key=lambda x: x[2])
    parts = ", ".join(f"{v.get('name')!r} {format_mib(s)}" for _, v, s in sized)
    related = [
        t.resource.location(t.spec_path + ("volumes", i, "emptyDir", "sizeLimit")) for i, _, _ in sized if i != i0
    ]
    yield ctx.report(
        t.resource,
        t.spec_path + ("volumes", i0, "emptyDir", "sizeLimit"),
        f"memory-backed emptyDirs total {format_mib(total)}, more than the pod's {format_mib(limit)} memory limit",
        detail=f"The emptyDirs: {parts}. They are charged to the pod's memory limit; filling them OOM-kills the pod.",
        fix=fix,
        related=related,
    )
