"""EML706 topology-level-missing: a Kueue topology-aware pod set names a level that the Topology of
its ResourceFlavor does not list (LocalQueue -> ClusterQueue -> flavors -> Topology): a required
level is never admitted, a preferred one is ignored."""

from __future__ import annotations

from collections.abc import Iterator

from eksmllint.core.context import KUEUE_GROUP, LintRun, RuleContext
from eksmllint.core.finding import Finding, Severity
from eksmllint.graph import queue_references
from eksmllint.resource import Resource
from eksmllint.workload import Workload

#: The pod-template annotations of topology-aware scheduling and the severity of a missing level.
#: Kueue's TAS annotations (kueue.x-k8s.io/podset-*-topology, Kueue TAS docs).
#: None: the rule's severity (error); a preference that cannot be met is only ignored.
ANNOTATIONS: dict[str, Severity | None] = {
    "kueue.x-k8s.io/podset-required-topology": None,
    "kueue.x-k8s.io/podset-slice-required-topology": None,
    "kueue.x-k8s.io/podset-preferred-topology": Severity.WARNING,
}
#: The first Kueue release with topology-aware scheduling (alpha, Topology API v1alpha1).
TAS_RELEASE = "0.9"


def check(ctx: RuleContext, w: Workload) -> Iterator[Finding]:
    if not ctx.platform.at_least("kueue", TAS_RELEASE):
        return
    asked = [
        (t, key, value.strip())
        for t in w.templates
        for key, value in t.annotations.items()
        if key in ANNOTATIONS and isinstance(value, str) and value.strip()
    ]
    if not asked:
        return
    topologies = _topologies(ctx.run, w)
    if not topologies:
        return  # the chain is not in the run (or no flavor is topology-aware): nothing to compare
    for t, key, level in asked:
        if any(level in levels for _, levels in topologies):
            continue
        severity = ANNOTATIONS[key]
        effect = "never admitted" if severity is None else "the preference is ignored"
        yield ctx.report(
            t.resource,
            t.path + ("metadata", "annotations", key),
            f"topology level {level} is not a level of Topology {_names(topologies)}: {effect}",
            related=[topo.location(("spec", "levels")) for topo, _ in topologies],
            severity=severity,
        )


def _names(topologies: list[tuple[Resource, list[str]]]) -> str:
    return "/".join(sorted({topo.name or "?" for topo, _ in topologies}))


def _one(run: LintRun, kind: str, name: object, namespace: str | None = None) -> Resource | None:
    if not isinstance(name, str):
        return None
    found = [r for r in run.find(kind, name, namespace) if r.group == KUEUE_GROUP]
    return found[0] if len(found) == 1 else None


def _topologies(run: LintRun, w: Workload) -> list[tuple[Resource, list[str]]]:
    """(Topology, its levels' node labels) of every topology-aware flavor of the workload's
    ClusterQueue; empty when a link of the chain is missing or a Topology cannot be read."""
    lq_name = next((name for kind, name, _ in queue_references(w) if kind == "LocalQueue"), None)
    lq = _one(run, "LocalQueue", lq_name, w.resource.namespace)
    cq = _one(run, "ClusterQueue", lq.get(("spec", "clusterQueue"))) if lq is not None else None
    groups = cq.get(("spec", "resourceGroups")) if cq is not None else None
    out: list[tuple[Resource, list[str]]] = []
    for g in groups if isinstance(groups, list) else []:
        flavors = g.get("flavors") if isinstance(g, dict) else None
        for f in flavors if isinstance(flavors, list) else []:
            flavor = _one(run, "ResourceFlavor", f.get("name") if isinstance(f, dict) else None)
            if flavor is None:
                return []  # a flavor we cannot see might be the topology-aware one
            topo_name = flavor.get(("spec", "topologyName"))
            if topo_name is None:
                continue
            topo = _one(run, "Topology", topo_name)
            levels = topo.get(("spec", "levels")) if topo is not None else None
            if topo is None or not isinstance(levels, list):
                return []
            labels = [lv.get("nodeLabel") if isinstance(lv, dict) else None for lv in levels]
            if not all(isinstance(x, str) for x in labels):
                return []
            out.append((topo, [str(x) for x in labels]))
    return out
