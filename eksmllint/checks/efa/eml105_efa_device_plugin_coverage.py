"""EML105 efa-device-plugin-coverage: the EFA device plugin DaemonSet must run on every node EFA
pods land on (its selector, tolerations and instance types); a node without it never advertises
``vpc.amazonaws.com/efa`` and the pods stay Pending."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from eksmllint.analysis.placement import placement
from eksmllint.checks.efa._shared import template_location, types_on, who
from eksmllint.checks.helpers import fmt_list
from eksmllint.core.finding import DocPath, Finding
from eksmllint.scheduling import (
    INSTANCE_TYPE,
    NodePoolView,
    compatible,
    pod_requirement_terms,
    untolerated,
)
from eksmllint.workload import EFA, PodTemplate

if TYPE_CHECKING:
    from eksmllint.core.context import LintRun, RuleContext

EFA_PLUGIN = "aws-efa-k8s-device-plugin"


def check(ctx: RuleContext, run: LintRun) -> Iterator[Finding]:
    plugins = [t for t in run.templates if is_efa_plugin(t)]
    if not plugins:
        return
    gaps: dict[tuple, Gap] = {}
    for t in run.templates:
        if t.device_count(EFA) <= 0 or is_efa_plugin(t):
            continue
        for gap in _coverage_gaps(run, plugins, t):
            key = (id(gap.plugin), id(gap.pool), gap.reason, gap.detail, gap.landed)
            gaps.setdefault(key, gap).users.append(t)
    for gap in gaps.values():
        d = gap.plugin
        name = d.resource.ref.display()
        users = who(gap.users)
        at = f"NodePool {gap.pool.name!r}" if gap.pool else "nodes"
        if gap.reason == "taint":
            path = d.spec_path + ("tolerations",)
            what = f"does not tolerate taint {fmt_list(gap.detail)} of {at}"
        elif gap.reason == "selector":
            path = _selector_path(d)
            what = f"has a nodeSelector/affinity that matches no node of {at}"
        else:
            path = _selector_path(d)
            what = f"does not run on {fmt_list(gap.detail)} ({at})"
        related = [template_location(u) for u in gap.users]
        if gap.pool is not None:
            related.insert(0, gap.pool.resource.location(()))
        yield ctx.report(
            d.resource,
            path,
            f"EFA device plugin {name} {what}",
            detail=f"EFA pods {'land' if gap.landed else 'are meant to land'} there ({users}); those nodes never "
            "advertise vpc.amazonaws.com/efa and the pods stay Pending (assuming the run holds every EFA device "
            "plugin DaemonSet of the cluster).",
            related=related,
        )


def is_efa_plugin(t: PodTemplate) -> bool:
    if t.resource.kind != "DaemonSet":
        return False
    if EFA_PLUGIN in (t.resource.name or ""):
        return True
    return any(EFA_PLUGIN in (c.image or "") for c in t.containers)


def selects_pool(t: PodTemplate, pool: NodePoolView) -> bool:
    return any(compatible(term, pool) for term in pod_requirement_terms(t))


def target_pools(run: LintRun, t: PodTemplate) -> tuple[list[NodePoolView], bool]:
    """(pools, landed): the pools ``t`` lands on; when a taint blocks it everywhere (EML701 reports
    that), the pools its selectors aim at, since that is where the workload is meant to run."""
    where = placement(run, t)
    if where.usable:
        return list(where.usable), True
    return list(where.blocked), False


@dataclass
class Gap:
    plugin: PodTemplate
    pool: NodePoolView | None
    reason: str  # taint | selector | types
    detail: tuple
    landed: bool = True
    users: list[PodTemplate] = field(default_factory=list)


def _selector_path(t: PodTemplate) -> DocPath:
    ns = t.spec.get("nodeSelector")
    if isinstance(ns, dict):
        if INSTANCE_TYPE in ns:
            return t.spec_path + ("nodeSelector", INSTANCE_TYPE)
        return t.spec_path + ("nodeSelector",)
    if isinstance(t.spec.get("affinity"), dict):
        return t.spec_path + ("affinity",)
    return t.spec_path


def _coverage_gaps(run: LintRun, plugins: list[PodTemplate], t: PodTemplate) -> Iterator[Gap]:
    known = placement(run, t).present  # NodePools in the run and a selector that is not templated
    if not known:
        yield from _type_gaps(run, plugins, t)
        return
    pools, landed = target_pools(run, t)
    for pool in pools:
        needed = types_on(run, t, pool)
        if needed is not None:
            needed = tuple(it for it in needed if it.is_efa_capable)
            if not needed:
                continue  # no EFA node for this pod on this pool
        selecting = [p for p in plugins if selects_pool(p, pool)]
        if not selecting:
            yield Gap(plugins[0], pool, "selector", (), landed)
            continue
        if not any(not untolerated(p, pool) for p in selecting):
            taints = untolerated(selecting[0], pool)
            yield Gap(
                selecting[0],
                pool,
                "taint",
                tuple(f"{x.key}={x.value}:{x.effect}" if x.value else f"{x.key}:{x.effect}" for x in taints),
                landed,
            )
        if needed is None:
            continue
        plugin_types = [types_on(run, p, pool) for p in selecting]
        if any(types is None for types in plugin_types):
            continue  # some plugin runs on every instance type of this pool
        covered = {it.name for types in plugin_types if types for it in types}
        missing = tuple(sorted(it.name for it in needed if it.name not in covered))
        if missing:
            yield Gap(selecting[0], pool, "types", missing, landed)


def _type_gaps(run: LintRun, plugins: list[PodTemplate], t: PodTemplate) -> Iterator[Gap]:
    """Without NodePools: the EFA-capable types the pod pins that no plugin's selectors cover."""
    needed = placement(run, t).instance_types
    if not needed:
        return
    needed = tuple(it for it in needed if it.is_efa_capable)
    covered: set[str] = set()
    for p in plugins:
        types = placement(run, p).instance_types
        if types is None:
            return  # some plugin runs on every instance type
        covered |= {it.name for it in types}
    missing = tuple(sorted(it.name for it in needed if it.name not in covered))
    if missing:
        yield Gap(plugins[0], None, "types", missing)
