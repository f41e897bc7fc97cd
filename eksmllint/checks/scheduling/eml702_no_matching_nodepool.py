"""EML702 no-matching-nodepool: the run holds NodePools but none offers what the pod's selectors,
affinity or devices require; the message gives the reason per NodePool."""

from __future__ import annotations

from collections.abc import Iterator

from eksmllint.analysis.placement import device_fit, requirement_text, serves
from eksmllint.checks.helpers import sentences
from eksmllint.checks.scheduling._shared import (
    POOL_REQUIREMENTS,
    Req,
    admitted_terms,
    analyse,
    assumed_complete,
    plain,
    pods_of,
    requirement_terms,
)
from eksmllint.core.context import RuleContext
from eksmllint.core.finding import DocPath, Finding
from eksmllint.landing import form_in_use
from eksmllint.scheduling import CAPACITY_TYPE, INSTANCE_KEYS, NODEPOOL_LABEL, NodePoolView, compatible, reserved_only
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


def _built_in(ctx: RuleContext, t: PodTemplate) -> Iterator[Finding]:
    """A pod with accelerators pinned (karpenter.sh/nodepool) to pools its provisioner creates
    itself (EKS Auto Mode's general-purpose / system): they launch c/m/r instances only, so it never
    lands. Only "never" is concluded: the cluster may have disabled the pool, which changes nothing."""
    landing = ctx.run.landing(t)
    pools = landing.built_in
    accels = t.accelerators
    if not pools or not accels or t.resource.kind == "DaemonSet":
        return
    terms = landing.terms
    if any(serves(p, terms, accels) for p in pools):
        return
    reasons = []
    for pool in pools:
        fits = [device_fit(pool, term, accels).reason for term in terms if compatible(term, pool)]
        reasons.append(f"{pool.name}: {next((r for r in fits if r), 'its labels do not match the pod')}")
    form = pools[0].form
    label = form.label if form is not None else "provisioner"
    why = form_in_use(ctx.run, form.name) if form is not None else None
    pin = next((r for term in requirement_terms(t) for r in term if r.key == NODEPOOL_LABEL), None)
    names = ", ".join(p.name for p in pools)
    yield ctx.report(
        t.resource,
        pin.path if pin is not None else _device_path(t),
        f"{pods_of(t)} pin the built-in {label} NodePool {names}, which cannot launch a node with their devices",
        detail=sentences(
            "; ".join(reasons),
            f"Built-in pools exist without a manifest and cannot be changed ({label} assumed in use: {why})",
        ),
    )


def check(ctx: RuleContext, t: PodTemplate) -> Iterator[Finding]:
    """EML702: NodePools exist, but none is compatible with the pod's selectors and devices; or the
    pod pins a built-in pool that cannot carry its devices."""
    yield from _built_in(ctx, t)
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
