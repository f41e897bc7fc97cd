"""EML701 untolerated-taint: every NodePool that could serve the pod taints its nodes with a taint
the pod does not tolerate, or every Kueue ResourceFlavor of its queue has nodeTaints it does not
tolerate; the fix tolerates the taints of the pool (flavor) needing the fewest."""

from __future__ import annotations

from collections.abc import Iterator

from eksmllint.analysis.placement import serves
from eksmllint.checks.helpers import sentences
from eksmllint.checks.scheduling._shared import RELATED_MAX, analyse, candidates, dra_note, pods_of
from eksmllint.core.context import RuleContext
from eksmllint.core.finding import AppendItem, DocPath, Finding, Fix
from eksmllint.landing import queue_flavors
from eksmllint.scheduling import NodePoolView, Taint, _toleration_key, untolerated
from eksmllint.workload import PodTemplate


def _taint_text(x: Taint) -> str:
    return f"{x.key}={x.value}:{x.effect}" if x.value else f"{x.key}:{x.effect}"


def _toleration(x: Taint) -> dict:
    if x.value:
        return {"key": x.key, "operator": "Equal", "value": x.value, "effect": x.effect}
    return {"key": x.key, "operator": "Exists", "effect": x.effect}


def _tolerations_path(t: PodTemplate) -> DocPath:
    return t.spec_path + ("tolerations",)


def _anchor(t: PodTemplate) -> DocPath:
    """Where a finding about the pod's tolerations points: the list, else the pod spec."""
    return _tolerations_path(t) if t.spec.get("tolerations") is not None else t.spec_path


def _tolerate(t: PodTemplate, whose: str, taints: list[Taint]) -> Fix:
    """The fix: append a toleration for each of ``taints`` (``whose``: "taints of NodePool x")."""
    return Fix(
        f"Tolerate the {whose}: {', '.join(_taint_text(x) for x in taints)}",
        tuple(AppendItem(_tolerations_path(t), _toleration(x)) for x in taints),
    )


def _each(blocked: list) -> str:
    """``name (taints); ...`` for the first three (pool or flavor, taints) pairs, then how many more."""
    listed = "; ".join(f"{n.name} ({', '.join(_taint_text(x) for x in ts)})" for n, ts in blocked[:3])
    return listed + (f" and {len(blocked) - 3} more" if len(blocked) > 3 else "")


def _taint_path(x: Taint) -> DocPath:
    return ("spec", "template", "spec", "taints", x.index)


def _weight(p: NodePoolView) -> int:
    w = p.resource.get(("spec", "weight"))
    return w if isinstance(w, int) and not isinstance(w, bool) else 0


def _flavors(ctx: RuleContext, t: PodTemplate) -> Iterator[Finding]:
    """Kueue admits a workload to a ResourceFlavor only when its pods tolerate the flavor's
    nodeTaints, and adds no toleration for them: with none tolerated it stays queued."""
    flavors = ctx.run.landing(t).unadmitted
    if not flavors:
        return
    blocked = [(f, f.untolerated(t.tolerations)) for f in flavors]
    flavor, taints = min(blocked, key=lambda ft: (len(ft[1]), ft[0].name))
    yield ctx.report(
        t.resource,
        _anchor(t),
        f"{pods_of(t)} tolerate the nodeTaints of no ResourceFlavor of their Kueue queue",
        detail=sentences(
            f"The flavors and their taints: {_each(blocked)}",
            "Kueue admits a workload to a flavor only when its pods tolerate them, and adds no toleration "
            "for nodeTaints, so the workload stays queued",
        ),
        fix=_tolerate(t, f"nodeTaints of ResourceFlavor {flavor.name}", taints),
        related=[
            f.resource.location(("spec", "nodeTaints", x.index))
            for f, ts in blocked[:RELATED_MAX]
            if f.resource is not None
            for x in ts
        ],
    )


def _built_in(ctx: RuleContext, t: PodTemplate) -> Iterator[Finding]:
    """A pod pinned to built-in pools (EKS Auto Mode's system pool taints CriticalAddonsOnly) that
    could serve it but whose taints it does not tolerate (EML702 speaks when they cannot serve it)."""
    landing = ctx.run.landing(t)
    pools = [p for p in landing.built_in if serves(p, landing.terms, t.accelerators)]
    if not pools or len(pools) < len(landing.built_in) or t.resource.kind == "DaemonSet":
        return
    blocked = [(p, untolerated(t, p)) for p in pools]
    if not all(taints for _, taints in blocked):
        return
    pool, taints = min(blocked, key=lambda pt: (len(pt[1]), pt[0].name))
    listed = ", ".join(_taint_text(x) for x in taints)
    yield ctx.report(
        t.resource,
        _anchor(t),
        f"{pods_of(t)} pin the built-in NodePool {pool.name} but do not tolerate its taint {listed}",
        detail=sentences(
            "The pool exists without a manifest and taints every node it launches",
            f"so they stay Pending{dra_note(t)}",
        ),
        fix=_tolerate(t, f"taints of NodePool {pool.name}", taints),
    )


def check(ctx: RuleContext, t: PodTemplate) -> Iterator[Finding]:
    """EML701: every NodePool that could serve the pod taints its nodes without a toleration, or
    every ResourceFlavor of its queue has nodeTaints it does not tolerate."""
    yield from _flavors(ctx, t)
    yield from _built_in(ctx, t)
    placement = analyse(ctx, t)
    if placement is None or placement.status != "taint":
        return
    # Depends only on the shared placement and the tolerations: computed once per pair. The key is
    # a pair, not one object, so it is memoised by hand rather than with run.once.
    key = (id(placement.blocked), tuple(_toleration_key(x) for x in t.tolerations))
    memo = ctx.run.memo("eml7-untolerated")
    found = memo.get(key)
    if found is None:
        # Kueue adds the tolerations of the flavor it admits the pods to: the fewest left over
        added = [f.added_tolerations for f in queue_flavors(ctx.run, t) or () if not f.untolerated(t.tolerations)]
        blocked = [(p, min((untolerated(t, p, a) for a in added or [[]]), key=len)) for p in placement.blocked]
        blocked = [(p, taints) for p, taints in blocked if taints]
        # The fix tolerates the pool needing the fewest tolerations (then the highest weight).
        best = min(blocked, key=lambda pt: (len(pt[1]), -_weight(pt[0]), pt[0].name)) if blocked else None
        found = memo[key] = (blocked, best)
    blocked, best = found
    if best is None:
        return
    pool, taints = best
    if len(blocked) == 1:
        taint_word = "taint" if len(taints) == 1 else "taints"
        what = f"{pods_of(t)} do not tolerate the {taint_word} of NodePool {pool.name}, the only one they can run on"
        listed = f"Its {taint_word}: {', '.join(_taint_text(x) for x in taints)}"
    else:
        listed = f"The NodePools and their taints: {_each(blocked)}"
        what = f"{pods_of(t)} tolerate the taints of no NodePool {candidates(t)}"
    fix = None
    if len(blocked) == 1 or not t.resource_claims:  # which pool has DRA-claimed devices is unknown
        fix = _tolerate(t, f"taints of NodePool {pool.name}", taints)
    related = [p.resource.location(_taint_path(x)) for p, ts in blocked[:RELATED_MAX] for x in ts]
    yield ctx.report(
        t.resource,
        _anchor(t),
        what,
        detail=sentences(listed, f"so they stay Pending{dra_note(t)}"),
        fix=fix,
        related=related,
    )
