"""EML702 no-matching-nodepool: the run holds NodePools but none offers what the pod's selectors,
affinity or devices require; the message gives the reason per NodePool."""

from __future__ import annotations

from collections.abc import Iterator

from eksmllint.analysis.placement import device_fit, requirement_text
from eksmllint.checks.helpers import sentences
from eksmllint.checks.scheduling._shared import (
    POOL_REQUIREMENTS,
    Req,
    admitted_terms,
    analyse,
    assumed_complete,
    plain,
    pods_of,
)
from eksmllint.core.context import RuleContext
from eksmllint.core.finding import DocPath, Finding
from eksmllint.scheduling import CAPACITY_TYPE, INSTANCE_KEYS, NodePoolView, compatible, reserved_only
from eksmllint.workload import PodTemplate


def _mismatch(pool: NodePoolView, term: list[Req], accels: dict[str, int]) -> tuple[str, Req | None]:
    """Why ``pool`` rejects ``term``: (reason, the pod requirement at fault; None: its devices)."""
    for r in term:
        if not compatible([r.plain], pool):
            if reserved_only(r.plain):  # a reservation label: the pool's capacity type is at fault
                allowed = pool.values_for(CAPACITY_TYPE)
                offers = (
                    f"offers {CAPACITY_TYPE} [{', '.join(allowed)}]"
                    if allowed
                    else f"excludes {CAPACITY_TYPE} reserved"
                )
                return f"{pool.name} {offers}, the pod needs reserved capacity for {requirement_text(r.plain)}", r
            offered = pool.values_for(r.key)
            if offered is not None:
                return (
                    f"{pool.name} offers {r.key} [{', '.join(offered)}], the pod needs {requirement_text(r.plain)}",
                    r,
                )
            return f"{pool.name} does not offer {requirement_text(r.plain)}", r
    fit = device_fit(pool, plain(term), accels)
    if fit.reason is None:
        return f"{pool.name}: not compatible", None
    culprit = next((r for r in term if r.key in INSTANCE_KEYS), None) if fit.by_instance else None
    return f"{pool.name}: {fit.reason}", culprit


def _device_path(t: PodTemplate) -> DocPath:
    """Path of the first accelerator request (where a device mismatch is reported)."""
    for c in t.containers + t.init_containers:
        for which, declared in (("limits", c.limits), ("requests", c.requests)):
            for res in t.accelerators:
                if res in declared:
                    return c.path + ("resources", which, res)
    return t.spec_path


def check(ctx: RuleContext, t: PodTemplate) -> Iterator[Finding]:
    """EML702: NodePools exist, but none is compatible with the pod's selectors and devices."""
    placement = analyse(ctx, t)
    if placement is None or placement.status != "nomatch":
        return
    terms = admitted_terms(ctx.run, t)
    accels = t.accelerators
    pools = ctx.run.landing(t).considered or ctx.run.nodepools
    reasons: list[str] = []
    culprit: Req | None = None
    for pool in pools:  # the three shown, and on until some pool names the requirement at fault
        if len(reasons) >= 3 and culprit is not None:
            break
        reason, req = _mismatch(pool, terms[0], accels)
        reasons.append(reason)
        culprit = culprit or req
    shown = "; ".join(reasons[:3]) + (f"; and {len(pools) - 3} more" if len(pools) > 3 else "")
    path = culprit.path if culprit else _device_path(t)
    yield ctx.report(
        t.resource,
        path,
        f"no NodePool of the run can launch a node for {pods_of(t)}",
        detail=sentences(shown, "so Karpenter never provisions one") + f" ({assumed_complete(ctx.run, pools)})",
        related=[p.resource.location(POOL_REQUIREMENTS) for p in pools[:5]],
    )
