"""EML101 efa-multi-az: a NodePool that launches EFA nodes for multi-pod EFA workloads must pin
exactly one Availability Zone (EFA traffic cannot cross zones; ml-on-eks-facts.md section 1)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

from eksmllint.analysis.placement import placement
from eksmllint.checks.efa._shared import (
    REQUIREMENTS,
    class_efa,
    judged_by_definition,
    pool_of,
    template_location,
    types_on,
    who,
)
from eksmllint.checks.efa.eml106_spot_for_collective import pool_capacity
from eksmllint.checks.helpers import fmt_list
from eksmllint.core.finding import Applicability, Finding, Fix, SetValue
from eksmllint.resource import Resource
from eksmllint.scheduling import (
    ZONE,
    ZONE_ID,
    ZONE_NAME_KEYS,
    NodePoolView,
    Requirement,
    pod_requirement_terms,
)
from eksmllint.workload import EFA, PodTemplate

if TYPE_CHECKING:
    from eksmllint.core.context import LintRun, RuleContext


def check(ctx: RuleContext, resource: Resource) -> Iterator[Finding]:
    """A NodePool that launches EFA nodes for EFA pods must pin exactly one zone; so must a pool for
    EFA training that no pod of the run lands on (judged by its own definition)."""
    pool = pool_of(ctx.run, resource)
    if pool is None:
        return
    count, zones = pool_zone_count(pool)
    if count == 1 or single_subnet(ctx.run, pool) or single_reservation(ctx.run, pool):
        return  # pool-level exemptions first: they make the scan over templates unnecessary
    tenants = [t for ids, ts in _multi_az_groups(ctx.run) if id(pool) in ids for t in ts]
    cls = class_efa(ctx.run, pool)
    if cls is not None and cls.devices == 0:
        return  # its EC2NodeClass attaches no EFA: no EFA node here (EML102 reports EFA requests)
    served = []
    for t in sorted(tenants, key=_template_order(ctx.run)):
        types = types_on(ctx.run, t, pool)
        if types is not None and not any(it.is_efa_capable for it in types):
            continue  # no EFA node here for this pod (EML102 reports the over-request)
        served.append(t)
    idx = pool.requirement_index(ZONE)
    if idx is None:
        idx = pool.requirement_index(ZONE_ID)
    path = REQUIREMENTS + ((idx, "values") if idx is not None else ())
    if count is None:
        what = "does not pin a zone (topology.kubernetes.io/zone In [one zone])"
    elif count == 0:
        what = "allows no zone at all"
    else:
        what = f"allows {count} zones ({fmt_list(zones)})"
    if served:
        head = f"NodePool {pool.name!r} launches EFA nodes but {what}"
        why = f"EFA pods land on it: {who(served)}"
    else:
        judged = judged_by_definition(ctx, pool)
        if judged is None:
            return
        head = f"NodePool {pool.name!r} is meant for multi-node EFA training but {what}"
        why = f"it is {judged}"
    yield ctx.report(
        resource,
        path,
        head,
        detail=f"{why}. EFA traffic cannot cross Availability Zones, so the nodes of one job must share a zone.",
        fix=_pin_zone_fix(pool, idx),
        related=[template_location(t) for t in served],
    )


def _template_order(run: LintRun) -> Callable[[PodTemplate], int]:
    """Sort key restoring run order (``run.templates``) for templates gathered from groups."""
    index: dict[int, int] = run.once(
        "efa-template-order", run, lambda r, _: {id(t): i for i, t in enumerate(r.templates)}
    )
    return lambda t: index[id(t)]


def _multi_az_groups(run: LintRun) -> list[tuple[set[int], list[PodTemplate]]]:
    """Templates that can make a pool need one zone (EFA, multi-pod, not pinned to a zone
    itself), grouped by their (shared) placement: (ids of the pools they land on, templates)."""
    return run.once("efa-multi-az-groups", run, _group_by_placement)


def _group_by_placement(run: LintRun, _: object) -> list[tuple[set[int], list[PodTemplate]]]:
    groups: dict[int, tuple[set[int], list[PodTemplate]]] = {}
    for t in run.templates:
        if t.device_count(EFA) > 0 and t.workload.collective_size > 1 and not pod_pins_one_zone(t):
            where = placement(run, t)
            group = groups.get(id(where))
            if group is None:
                group = groups[id(where)] = ({id(p) for p in where.usable}, [])
            group[1].append(t)
    return list(groups.values())


def _in_values(reqs: Iterable[Requirement], keys: tuple[str, ...]) -> set[str] | None:
    """Intersection of ``In`` values over ``keys``; None when no ``In`` requirement constrains them."""
    allowed: set[str] | None = None
    for key, op, values in reqs:
        if key in keys and op == "In":
            allowed = set(values) if allowed is None else allowed & set(values)
    return allowed


def pool_zone_count(pool: NodePoolView) -> tuple[int | None, tuple[str, ...]]:
    """(number of zones the pool can use or None for unbounded, the zones listed)."""
    best: tuple[int | None, tuple[str, ...]] = (None, ())
    for keys in (ZONE_NAME_KEYS, (ZONE_ID,)):
        values = _in_values(pool.offered, keys)
        if values is not None and (best[0] is None or len(values) < best[0]):
            best = (len(values), tuple(sorted(values)))
    return best


def pod_pins_one_zone(t: PodTemplate) -> bool:
    """Every node-affinity term of the pod itself restricts it to the same single zone."""
    zones: set[str] = set()
    for term in pod_requirement_terms(t):
        values = None
        for keys in (ZONE_NAME_KEYS, (ZONE_ID,)):
            v = _in_values(term, keys)
            if v is not None and len(v) == 1:
                values = v
        if values is None:
            return False
        zones |= values
    return len(zones) == 1


def single_subnet(run: LintRun, pool: NodePoolView) -> bool:
    """The pool's node class (EC2NodeClass, or Auto Mode's NodeClass) selects exactly one subnet by
    id (a subnet lives in one AZ)."""
    return _selects_one_by_id(run, pool, "subnetSelectorTerms")


def single_reservation(run: LintRun, pool: NodePoolView) -> bool:
    """The pool is limited to capacity type ``reserved`` and its EC2NodeClass selects exactly one
    capacity reservation by id (a reservation lives in one AZ). With an on-demand or spot fallback
    the pool spans zones again and stays a finding."""
    return pool_capacity(pool) == {"reserved"} and _selects_one_by_id(run, pool, "capacityReservationSelectorTerms")


def _selects_one_by_id(run: LintRun, pool: NodePoolView, field: str) -> bool:
    """The pool's node class (resolved by group, kind and name) has exactly one selector term in
    ``spec.<field>``, an ``id``."""
    for nc in pool.node_class(run):
        terms = nc.get(("spec", field))
        if (
            isinstance(terms, list)
            and len(terms) == 1
            and isinstance(terms[0], dict)
            and set(terms[0]) == {"id"}
            and isinstance(terms[0]["id"], str)
        ):
            return True
    return False


def _pin_zone_fix(pool: NodePoolView, idx: int | None) -> Fix | None:
    """Keep only the first zone the requirement lists; nothing to pin when none is listed."""
    if idx is None:
        return None
    req = pool.template_spec["requirements"][idx]
    values = req.get("values")
    if req.get("operator", "In") != "In" or not isinstance(values, list) or not values:
        return None
    first = str(values[0])
    return Fix(
        f"Pin NodePool {pool.name!r} to zone {first}",
        (SetValue(REQUIREMENTS + (idx, "values"), [first]),),
        Applicability.UNSAFE,
    )
