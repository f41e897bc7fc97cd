"""EML204 queue-capacity: one job asks for more than its queue can ever grant: more accelerators
than its Volcano Queue's capability or Kueue ClusterQueue's quota, or a resource the ClusterQueue
does not cover at all."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal

from eksmllint.checks.gang._shared import VOLCANO_SCHEDULING_GROUP, queue_refs
from eksmllint.core.context import KUEUE_GROUP, RuleContext
from eksmllint.core.finding import Finding
from eksmllint.placeholders import is_placeholder
from eksmllint.quantity import parse_count, parse_quantity
from eksmllint.resource import Resource
from eksmllint.workload import DEVICE_PLUGIN_RESOURCES, PodTemplate, Workload

#: Resources whose coverage is judged: the standard ones and device-plugin devices. Others (HAMi's
#: nvidia.com/gpucores, MIG profiles ...) are often mapped onto covered names by the Kueue
#: Configuration's resources.transformations, which no manifest shows.
JUDGED_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage", *DEVICE_PLUGIN_RESOURCES})


@dataclass(frozen=True)
class Demand:
    """Accelerators one job asks for at once, per resource name, with the per-template parts."""

    totals: dict[str, int]
    parts: dict[str, list[str]]


def job_demand(w: Workload) -> Demand | None:
    """Sum over templates of replicas x per-pod accelerators; None when a replica count is unknown."""
    totals: dict[str, int] = {}
    parts: dict[str, list[str]] = {}
    for t in w.templates:
        if not t.accelerators:
            continue
        if t.replicas is None:
            return None
        for res, n in t.accelerators.items():
            totals[res] = totals.get(res, 0) + t.replicas * n
            parts.setdefault(res, []).append(f"{t.replicas} pods x {n}")
    return Demand(totals, parts) if totals else None


def requested_resources(t: PodTemplate) -> set[str]:
    """The judged resources (:data:`JUDGED_RESOURCES`) a pod of ``t`` requests a non-zero amount of
    (requests default to limits, as Kueue reads them); amounts that are not quantities are left out."""
    names: set[str] = set()
    for c in t.containers + t.init_containers:
        for name in set(c.requests) | set(c.limits):
            if name not in JUDGED_RESOURCES:
                continue
            amount = c.request_quantity(name)
            if amount is not None and amount > 0:
                names.add(name)
    return names


def covered_resources(cq: Resource) -> set[str] | None:
    """Resource names ClusterQueue ``cq`` has quota for (``coveredResources`` and the flavors'
    ``resources`` of every resource group); None when its resource groups are not literal lists."""
    groups = cq.get(("spec", "resourceGroups"))
    if not isinstance(groups, list) or not groups:
        return None
    covered: set[str] = set()
    for g in groups:
        if not isinstance(g, dict) or not isinstance(g.get("coveredResources"), list):
            return None
        covered |= {x for x in g["coveredResources"] if isinstance(x, str)}
        flavors = g.get("flavors")
        for f in flavors if isinstance(flavors, list) else []:
            quotas = f.get("resources") if isinstance(f, dict) else None
            for q in quotas if isinstance(quotas, list) else []:
                if isinstance(q, dict) and isinstance(q.get("name"), str):
                    covered.add(q["name"])
    if any(is_placeholder(x) or "$" in x for x in covered):
        return None
    return covered


def _uncovered(w: Workload, cq: Resource) -> str | None:
    """'its worker pods request vpc.amazonaws.com/efa': what ``w`` requests that ``cq`` does not
    cover, grouped by the pod templates requesting it; None when all is covered or unknown."""
    covered = covered_resources(cq)
    if covered is None:
        return None
    templates = [t for t in w.templates if t.replicas != 0]
    groups: dict[tuple[str, ...], list[str]] = {}  # the roles requesting a resource -> resources
    for name in sorted(set().union(*(requested_resources(t) for t in templates)) - covered):
        roles = tuple(t.role.split(":", 1)[-1] for t in templates if name in requested_resources(t))
        groups.setdefault(roles, []).append(name)
    parts = []
    for roles, names in groups.items():
        who = "the job's pods" if len(roles) == len(templates) else f"the job's {'/'.join(roles)} pods"
        parts.append(f"{who} request {', '.join(names)}")
    return "; ".join(parts) or None


def _fmt(q: Decimal) -> str:
    return str(int(q)) if q == q.to_integral_value() else str(q.normalize())


def cluster_queue_limit(cq: Resource, resource: str) -> tuple[Decimal, str] | None:
    """What ClusterQueue ``cq`` can ever give one workload of ``resource``: nominalQuota plus
    borrowingLimit summed over the flavors that cover it (an upper bound: Kueue gives a pod set
    one flavor). None when unbounded (in a cohort without borrowingLimit) or not covered."""
    cohort = cq.get(("spec", "cohort")) or cq.get(("spec", "cohortName"))
    groups = cq.get(("spec", "resourceGroups"))
    total = Decimal(0)
    flavors: list[str] = []
    found = False
    for g in groups if isinstance(groups, list) else []:
        fl = g.get("flavors") if isinstance(g, dict) else None
        for f in fl if isinstance(fl, list) else []:
            res = f.get("resources") if isinstance(f, dict) else None
            for q in res if isinstance(res, list) else []:
                if not isinstance(q, dict) or q.get("name") != resource:
                    continue
                nominal = parse_quantity(q.get("nominalQuota"))
                if nominal is None:
                    return None
                borrowing = parse_quantity(q.get("borrowingLimit")) if "borrowingLimit" in q else None
                if "borrowingLimit" in q and borrowing is None:
                    return None
                if borrowing is None and cohort:
                    return None  # may borrow without limit from its cohort
                found = True
                total += nominal + (borrowing or 0)
                flavors.append(
                    f"flavor {f.get('name')}: nominalQuota {_fmt(nominal)}"
                    + (f" + borrowingLimit {_fmt(borrowing)}" if borrowing is not None else "")
                )
    return (total, "; ".join(flavors)) if found else None


def _volcano_capacity(ctx: RuleContext, w: Workload, demand: Demand, name: str, path: tuple) -> Iterator[Finding]:
    queues = ctx.run.find("Queue", name, None, VOLCANO_SCHEDULING_GROUP)
    if len(queues) != 1:
        return
    q = queues[0]
    cap = q.get(("spec", "capability"))
    if not isinstance(cap, dict):
        return
    for res, need in sorted(demand.totals.items()):
        limit = parse_count(cap.get(res))
        if limit is not None and need > limit:
            yield ctx.report(
                w.resource,
                path,
                f"the job asks for {need} {res} but Volcano Queue {name!r} caps it at {limit}",
                detail=f"The job's {res}: {' + '.join(demand.parts[res])}. It can never be admitted.",
                related=(q.location(("spec", "capability", res)),),
            )


def _kueue_capacity(ctx: RuleContext, w: Workload, demand: Demand | None, name: str, path: tuple) -> Iterator[Finding]:
    run = ctx.run
    lqs = run.find("LocalQueue", name, w.resource.namespace, KUEUE_GROUP)
    if len(lqs) != 1:
        return
    cq_name = lqs[0].get(("spec", "clusterQueue"))
    cqs = run.find("ClusterQueue", cq_name, None, KUEUE_GROUP) if isinstance(cq_name, str) else []
    if len(cqs) != 1:
        return
    cq = cqs[0]
    uncovered = _uncovered(w, cq)
    if uncovered:
        covered = ", ".join(sorted(covered_resources(cq) or ()))
        yield ctx.report(
            w.resource,
            path,
            f"the job requests resources ClusterQueue {cq_name!r} has no quota for",
            detail=f"{uncovered[0].upper()}{uncovered[1:]}, which ClusterQueue {cq_name!r} (via LocalQueue {name!r}) "
            f"does not cover (its resourceGroups cover {covered}): Kueue never admits the job ('resource ... "
            "unavailable in ClusterQueue') unless the Kueue Configuration excludes those resources.",
            related=(cq.location(("spec", "resourceGroups")),),
        )
    if demand is None:
        return
    for res, need in sorted(demand.totals.items()):
        limit = cluster_queue_limit(cq, res)
        if limit is None or need <= limit[0]:
            continue
        yield ctx.report(
            w.resource,
            path,
            f"the job asks for {need} {res} but ClusterQueue {cq_name!r} offers at most {_fmt(limit[0])}",
            detail=f"The job's {res}: {' + '.join(demand.parts[res])}. ClusterQueue {cq_name!r} (via LocalQueue "
            f"{name!r}) offers at most {_fmt(limit[0])} ({limit[1]}): Kueue can never admit it.",
            related=(cq.location(("spec", "resourceGroups")),),
        )


def check(ctx: RuleContext, w: Workload) -> Iterator[Finding]:
    demand = job_demand(w)
    done: set[tuple] = set()
    for kind, _group, name, path in queue_refs(w):
        if (kind, name) in done:
            continue
        done.add((kind, name))
        if kind == "Queue" and demand is not None:
            yield from _volcano_capacity(ctx, w, demand, name, path)
        elif kind == "LocalQueue":
            yield from _kueue_capacity(ctx, w, demand, name, path)
