"""EML109 efa-hugepages: a pod that requests EFA asks for more ``hugepages-2Mi`` than the EFA driver
pre-allocates on the node, or its huge page requests differ from its limits: it never schedules
(or the API server rejects it). Facts: ``catalogue/efa_hugepages.yaml``."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import TYPE_CHECKING

from eksmllint.analysis.placement import placement
from eksmllint.catalogue.efa_hugepages import EfaHugepages, efa_hugepages
from eksmllint.core.finding import Finding, Fix, SetValue
from eksmllint.quantity import parse_quantity
from eksmllint.workload import EFA, Container, PodTemplate

if TYPE_CHECKING:
    from eksmllint.core.context import RuleContext

_MIB = Decimal(1024 * 1024)


def check(ctx: RuleContext, t: PodTemplate) -> Iterator[Finding]:
    if t.device_count(EFA) == 0:
        return  # only EFA pods land where the EFA driver sets the node's huge pages
    facts = efa_hugepages()
    res = facts.resource
    holders = [c for c in t.containers if res in c.requests or res in c.limits]
    if not holders:
        return
    for c in holders:
        req, lim = c.requests.get(res), c.limits.get(res)
        if req is not None and (lim is None or parse_quantity(req) != parse_quantity(lim)):
            value = lim if lim is not None else req
            yield ctx.report(
                t.resource,
                c.path + ("resources", "requests", res),
                f"{res} requests {req} but limits {lim if lim is not None else 'none'}: huge pages need requests = limits",
                fix=_set(c, res, str(value), f"Set {res} requests and limits of {c.name!r} to {value}"),
            )
    total = sum((c.request_quantity(res) or Decimal(0) for c in holders), Decimal(0))
    node_mib = facts.preallocated_mib
    if total <= node_mib * _MIB or _custom_hugepages(ctx, t):
        return
    c = holders[0]
    where = "limits" if res in c.limits else "requests"
    yield ctx.report(
        t.resource,
        c.path + ("resources", where, res),
        f"{res} {_mib(total)}Mi exceeds the {node_mib}Mi an EFA node pre-allocates: the pod never schedules",
        fix=_recommended(c, facts) if len(holders) == 1 else None,
    )


def _mib(q: Decimal) -> str:
    return f"{q / _MIB:g}"


def _set(c: Container, res: str, value: str, title: str) -> Fix:
    base = c.path + ("resources",)
    return Fix(title, (SetValue(base + ("limits", res), value), SetValue(base + ("requests", res), value)))


def _recommended(c: Container, facts: EfaHugepages) -> Fix:
    value = f"{facts.recommended_request_mib}Mi"
    ops = [SetValue(c.path + ("resources", "limits", facts.resource), value)]
    if facts.resource in c.requests:
        ops.append(SetValue(c.path + ("resources", "requests", facts.resource), value))
    return Fix(f"Set {facts.resource} of {c.name!r} to {value}", tuple(ops))


def _custom_hugepages(ctx: RuleContext, t: PodTemplate) -> bool:
    """Some EC2NodeClass of the pools the pod lands on sets huge pages itself in its userData."""
    for pool in placement(ctx.run, t).hosting:
        for nc in pool.node_class(ctx.run):  # by group, kind and name
            data = nc.get(("spec", "userData"))
            if isinstance(data, str) and "hugepages" in data.lower():
                return True
    return False
