"""EML102 efa-over-request: a pod requests more ``vpc.amazonaws.com/efa`` than any instance type it
lands on offers (at most one EFA per network card: p4d 4, p5 32, trn1.32xlarge 8, ...; fewer when
the EC2NodeClass lists its networkInterfaces), so it never schedules."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from eksmllint.checks.efa._shared import EfaOffer, efa_containers, efa_offers, offered_types, type_list
from eksmllint.checks.helpers import fmt_list
from eksmllint.core.finding import DocPath, Finding, Fix, SetValue
from eksmllint.workload import EFA, Container, PodTemplate

if TYPE_CHECKING:
    from eksmllint.core.context import RuleContext


def check(ctx: RuleContext, t: PodTemplate) -> Iterator[Finding]:
    n = t.device_count(EFA)
    if n <= 0:
        return
    offers = efa_offers(ctx.run, t)
    if not offers:
        return  # unknown, or lands nowhere (EML702 territory)
    most = max(o.devices for o in offers)
    if n <= most:
        return
    carriers = efa_containers(t)
    where = carriers[0] if carriers else None
    path = _resource_value_path(where, EFA) if where else t.spec_path
    types = offered_types(offers)
    classes = sorted({o.limited_by for o in offers if o.limited_by}, key=lambda c: c.node_class)
    if classes:
        msg = f"requests {n} vpc.amazonaws.com/efa per pod but its nodes get at most {most}"
        detail = (
            f"{'; '.join(c.describe() for c in classes)}, the only interfaces "
            f"{ctx.platform.describe('karpenter')} attaches (the instance types offer {type_list(types)}). "
            "The pod never schedules."
        )
    elif most == 0:
        msg = f"requests {n} vpc.amazonaws.com/efa per pod but no instance type it lands on has EFA"
        detail = f"It lands on {fmt_list(sorted(it.name for it in types))}. The pod never schedules."
    else:
        msg = f"requests {n} vpc.amazonaws.com/efa per pod but its instance types offer at most {most}"
        detail = f"EFA interfaces of the instance types it lands on: {type_list(types)}. The pod never schedules."
    yield ctx.report(t.resource, path, msg, fix=_efa_max_fix(carriers, offers), detail=detail)


def _resource_value_path(c: Container, resource: str) -> DocPath:
    if resource in c.limits:
        return c.path + ("resources", "limits", resource)
    if resource in c.requests:
        return c.path + ("resources", "requests", resource)
    return c.path + ("resources",)


def _efa_max_fix(carriers: list[Container], offers: tuple[EfaOffer, ...]) -> Fix | None:
    """Set the single EFA-carrying container to the EFA count every node with EFA offers."""
    capable = [o.devices for o in offers if o.devices > 0]
    if len(carriers) != 1 or not capable:
        return None
    c, value = carriers[0], min(capable)
    ops = [
        SetValue(c.path + ("resources", which, EFA), value)
        for which, present in (("limits", c.limits), ("requests", c.requests))
        if EFA in present
    ]
    return Fix(f"Set vpc.amazonaws.com/efa of container {c.name!r} to {value}", tuple(ops))
