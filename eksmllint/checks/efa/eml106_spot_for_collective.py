"""EML106 spot-for-collective: a NodePool serving multi-node training allows spot (or interruptible
reservations), or is a pool for EFA training that no pod of the run lands on (judged by its own
definition). Karpenter v1 applies no capacity-type default and prefers spot when it is allowed;
one reclaim kills the whole collective."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from eksmllint.analysis.placement import placement
from eksmllint.catalogue import (
    CAPACITY_TYPES,
    L_RESERVATION_INTERRUPTIBLE,
    RECLAIMABLE_CAPACITY_TYPES,
)
from eksmllint.checks.efa._shared import REQUIREMENTS, judged_by_definition, pool_of, template_location, who
from eksmllint.core.finding import AppendItem, Applicability, Finding, Fix, SetValue
from eksmllint.resource import Resource
from eksmllint.scheduling import CAPACITY_TYPE, NodePoolView, Requirement, pod_requirement_terms, reserved_only
from eksmllint.workload import PodTemplate

if TYPE_CHECKING:
    from eksmllint.core.context import LintRun, RuleContext


def check(ctx: RuleContext, resource: Resource) -> Iterator[Finding]:
    pool = pool_of(ctx.run, resource)
    if pool is None:
        return
    allowed = pool_capacity(pool)
    interruptible = "reserved" in allowed and interruptible_reservations(pool)
    reclaimable = (allowed & RECLAIMABLE_CAPACITY_TYPES) | ({"reserved"} if interruptible else set())
    if not reclaimable:
        return
    served = [t for t in _collectives_on(ctx).get(id(pool), ()) if template_may_use(t, allowed, reclaimable)]
    judged = None if served else judged_by_definition(ctx, pool)
    if not served and judged is None:
        return
    idx = pool.requirement_index(CAPACITY_TYPE)
    path = REQUIREMENTS + ((idx,) if idx is not None else ())
    if idx is not None and isinstance(pool.template_spec["requirements"][idx].get("values"), list):
        path = path + ("values",)
    if "spot" not in reclaimable:
        how, why = "allows interruptible capacity reservations", "EC2 reclaims them with a notice, like spot"
    else:
        how = (
            "allows spot capacity"
            if idx is not None
            else "allows spot capacity (no karpenter.sh/capacity-type requirement)"
        )
        why = "Karpenter prefers spot"
    if served:
        pods = sum(t.workload.collective_size for t in {id(t.workload): t for t in served}.values())
        head = f"NodePool {pool.name!r} serving multi-node training {how.rstrip(',')}"
        served_by = f"It serves {who(served)} ({pods} pods in total)"
    else:
        head = f"NodePool {pool.name!r} for multi-node training {how.rstrip(',')}"
        served_by = f"It is {judged}"
    # A collective that selects spot itself on a pool that also offers other capacity: the choice
    # is the pod's, and the pool's fix (drop spot) would strand it. Said on the pool's finding: a
    # NodePool rule reports on NodePools (the webhook dispatches a workload to its own rules).
    pinned = [t for t in served if selects_spot(t)] if allowed - {"spot"} else []
    if pinned:
        others = ", ".join(c for c in CAPACITY_TYPES if c in allowed and c != "spot")
        served_by += f"; {who(pinned)} select{'s' if len(pinned) == 1 else ''} spot itself although it offers {others}"
    yield ctx.report(
        resource,
        path,
        head,
        detail=f"{served_by}. {why[0].upper()}{why[1:]}, and one reclaim (a short notice, not stopped by "
        "do-not-disrupt) kills the whole collective.",
        fix=None if interruptible or pinned else _no_spot_fix(pool, allowed),
        related=[template_location(t) for t in served],
    )


def selects_spot(t: PodTemplate) -> bool:
    """Every requirement term of the pod's own selectors allows capacity type spot only."""
    terms = pod_requirement_terms(t)
    return bool(terms) and all(allowed_capacity(term, None) == {"spot"} for term in terms)


def _collectives_on(ctx: RuleContext) -> dict[int, list[PodTemplate]]:
    """NodePool view id -> the collective training templates (that the rule judges) hosted there,
    in run order: built once per run, where a scan of every template per pool made the rule pools x
    templates (11 s on 500 NodePools and 9,500 templates)."""

    def build(run: LintRun, _: object) -> dict[int, list[PodTemplate]]:
        index: dict[int, list[PodTemplate]] = {}
        for t in run.templates:
            w = t.workload
            if not (t.is_training and w.is_multi_pod and t in w.collective_templates) or not ctx.judges(t):
                continue
            for pool in placement(run, t).hosting:  # it lands there and a node has its devices
                index.setdefault(id(pool), []).append(t)
        return index

    return ctx.run.once("eml106-collectives-on", ctx.run, build)


def allowed_capacity(reqs: Iterable[Requirement], start: set[str] | None) -> set[str] | None:
    """Capacity types allowed by ``reqs`` starting from ``start`` (None: no requirement seen)."""
    allowed = start
    for key, op, values in reqs:
        if key != CAPACITY_TYPE:
            continue
        base = set(CAPACITY_TYPES) if allowed is None else allowed
        if op == "In":
            allowed = base & set(values)
        elif op == "NotIn":
            allowed = base - set(values)
        elif op == "Exists":
            allowed = base
        elif op == "DoesNotExist":
            allowed = set()
    return allowed


def pool_capacity(pool: NodePoolView) -> set[str]:
    """Capacity types the pool allows; without a capacity-type requirement, every type (Karpenter
    v1 applies no default and then prefers spot over on-demand)."""
    allowed = allowed_capacity(pool.offered, None)
    return set(CAPACITY_TYPES) if allowed is None else allowed


def template_may_use(t: PodTemplate, pool_allowed: set[str], reclaimable: set[str]) -> bool:
    """Some requirement term of ``t`` lets it get one of the ``reclaimable`` capacity types. A term
    that selects a capacity-reservation label gets reserved nodes only (Karpenter sets those labels
    on reserved nodes only, eksmllint.scheduling.reserved_only): never spot."""
    for term in pod_requirement_terms(t):
        allowed = allowed_capacity(term, set(pool_allowed))
        allowed = pool_allowed if allowed is None else allowed
        if any(reserved_only(r) for r in term):
            allowed = allowed & {"reserved"}
        if allowed & reclaimable:
            return True
    return False


def interruptible_reservations(pool: NodePoolView) -> bool:
    """The pool asks for interruptible capacity reservations (reclaimed with a notice, like spot)."""
    return any(
        key == L_RESERVATION_INTERRUPTIBLE and op == "In" and "true" in values for key, op, values in pool.offered
    )


def _no_spot_fix(pool: NodePoolView, allowed: set[str]) -> Fix | None:
    """Drop spot from the pool's only capacity-type requirement, keeping the other allowed types."""
    reqs = pool.template_spec.get("requirements")
    indices = [i for i, r in enumerate(reqs or []) if isinstance(r, dict) and r.get("key") == CAPACITY_TYPE]
    if not indices and isinstance(reqs, list):
        ops_add = (AppendItem(REQUIREMENTS, {"key": CAPACITY_TYPE, "operator": "In", "values": ["on-demand"]}),)
        return Fix(f"Restrict NodePool {pool.name!r} to on-demand capacity", ops_add, Applicability.UNSAFE)
    if len(indices) != 1 or not isinstance(reqs, list):
        return None
    base = REQUIREMENTS + (indices[0],)
    req = reqs[indices[0]]
    ops: tuple[SetValue, ...]
    if req.get("operator", "In") == "In" and isinstance(req.get("values"), list):
        values = [str(v) for v in req["values"] if str(v) != "spot"] or ["on-demand"]
        ops = (SetValue(base + ("values",), values),)
    else:
        values = [c for c in CAPACITY_TYPES if c in allowed and c != "spot"] or ["on-demand"]
        ops = (SetValue(base + ("operator",), "In"), SetValue(base + ("values",), values))
    return Fix(f"Restrict NodePool {pool.name!r} to {', '.join(values)} capacity", ops, Applicability.UNSAFE)
