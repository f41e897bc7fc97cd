"""The resource graph as users see it: string ids, labels, findings per node, and text formats.

:func:`export_graph` turns the run's networkx graph (tuple keys, live objects) into an
:class:`ExportGraph` of plain values; DOT, Mermaid, JSON (:mod:`eksmllint.render.graph_text`), the SVG
drawing and the HTML page all render that one model, so they cannot disagree about which nodes
exist or how they are coloured.
A node's colour is the worst severity of the active findings on it: a resource gets every finding
whose ``resource`` is it; a pod template also gets those whose path lies inside the template.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from eksmllint.core.finding import Finding, Severity

if TYPE_CHECKING:
    import networkx as nx

    from eksmllint.core.engine import LintResult

#: Display order of edge types (legend, JSON) and what each means, for legends and tooltips.
EDGE_TYPES: dict[str, str] = {
    "template-of": "workload creates pods from this template",
    "runs-template-of": "TrainJob runs the pods of this (Cluster)TrainingRuntime",
    "can-land-on": "pods can be scheduled on this NodePool",
    "blocked-by-taint": "pods select this NodePool but do not tolerate its taint",
    "uses-nodeclass": "NodePool launches nodes with this EC2NodeClass",
    "mounts": "pods mount or read this PVC / ConfigMap / Secret",
    "uses-storageclass": "PVC is provisioned by this StorageClass",
    "binds": "PVC binds this PersistentVolume",
    "runs-as": "pods run as this ServiceAccount",
    "has-priority": "pods get this PriorityClass",
    "queued-in": "workload is admitted through this queue / PodGroup",
    "submits-to": "Kueue LocalQueue admits into this ClusterQueue",
    "uses-flavor": "ClusterQueue has quota in this ResourceFlavor",
    "flavor-of": "ResourceFlavor's nodes come from this NodePool",
    "covers": "DaemonSet runs on this instance type",
}

CATEGORY_OF_KIND: dict[str, str] = {
    "NodePool": "nodepool",
    "EC2NodeClass": "nodeclass",
    "Queue": "queue",
    "LocalQueue": "queue",
    "ClusterQueue": "queue",
    "PodGroup": "queue",
    "ResourceFlavor": "queue",
    "PersistentVolumeClaim": "storage",
    "PersistentVolume": "storage",
    "StorageClass": "storage",
    "FileSystem": "storage",
    "ConfigMap": "config",
    "Secret": "config",
    "ServiceAccount": "config",
    "PriorityClass": "scheduling",
}
#: Category names in legend order, with a human label.
CATEGORIES: dict[str, str] = {
    "workload": "Workload",
    "daemonset": "DaemonSet (device plugin)",
    "template": "Pod template",
    "queue": "Queue / PodGroup",
    "nodepool": "NodePool",
    "nodeclass": "EC2NodeClass",
    "storage": "Storage",
    "config": "Config / identity",
    "scheduling": "Scheduling",
    "instance": "Instance type",
    "other": "Other",
}


class FocusError(ValueError):
    """``--focus`` names nothing in the graph (the message lists what it could have been)."""


@dataclass
class ExportNode:
    id: str
    type: str  # resource | template | instance-type
    kind: str
    name: str
    namespace: str | None = None
    api_version: str = ""
    role: str | None = None  # pod templates: master, worker, task:worker ...
    category: str = "other"
    file: str | None = None
    line: int = 0
    findings: list[Finding] = field(default_factory=list)
    owner: str | None = None  # pod templates: the workload node's id

    @property
    def severity(self) -> Severity | None:
        """Worst severity of the node's findings (None = clean)."""
        return max((f.severity for f in self.findings), default=None)

    @property
    def title(self) -> str:
        """``namespace/name`` (or the role, for a pod template), as printed on the node."""
        if self.type == "template":
            return self.role or "pod"
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    @property
    def kind_label(self) -> str:
        """The kind line: API group added where the kind alone is ambiguous (a Volcano Job)."""
        if self.type == "template":
            return f"{self.kind} pod template"
        if self.type == "instance-type":
            return "instance type"
        group = self.api_version.split("/")[0] if "/" in self.api_version else ""
        if self.kind == "Job" and group == "batch.volcano.sh":
            return "Volcano Job"
        if self.kind == "Job" and group and group != "batch":
            return f"Job ({group})"
        return self.kind or "<no kind>"

    def severity_counts(self) -> dict[str, int]:
        counts = {str(s): 0 for s in (Severity.ERROR, Severity.WARNING, Severity.INFO)}
        for f in self.findings:
            counts[str(f.severity)] += 1
        return counts


@dataclass(frozen=True)
class ExportEdge:
    source: str
    target: str
    type: str
    detail: str | None = None  # e.g. the taint key of a blocked-by-taint edge


@dataclass
class ExportGraph:
    nodes: dict[str, ExportNode]
    edges: list[ExportEdge]
    focus: str | None = None

    def to_networkx(self) -> nx.MultiDiGraph:
        import networkx as nx

        g = nx.MultiDiGraph()
        for n in self.nodes.values():
            g.add_node(
                n.id, type=n.type, kind=n.kind, category=n.category, severity=str(n.severity) if n.severity else None
            )
        for e in self.edges:
            g.add_edge(e.source, e.target, type=e.type)
        return g

    def with_nodes(self, keep: Iterable[str], focus: str | None = None) -> ExportGraph:
        ids = set(keep)
        nodes = {k: v for k, v in self.nodes.items() if k in ids}
        edges = [e for e in self.edges if e.source in ids and e.target in ids]
        return ExportGraph(nodes, edges, focus if focus is not None else self.focus)


# --- building ---------------------------------------------------------------------------------


def node_id(key: tuple) -> str:
    """Stable, readable id of a graph key: ``Kind/ns/name``, ``Kind/ns/name:role``, ``instance/x``."""
    if key[0] == "res":
        _, kind, ns, name = key
        base = (
            f"{kind or '<no kind>'}/{ns}/{name or '<unnamed>'}"
            if ns
            else f"{kind or '<no kind>'}/{name or '<unnamed>'}"
        )
        return base
    if key[0] == "tpl":
        _, kind, ns, name, role = key
        return f"{node_id(('res', kind, ns, name))}:{role}"
    if key[0] == "instance":
        return f"instance/{key[1]}"
    return "/".join(str(k) for k in key)


def export_graph(
    result: LintResult, *, include_instance_types: bool = False, show_suppressed: bool = False
) -> ExportGraph:
    """The run's resource graph with findings attached (active ones, or all with ``show_suppressed``).

    Instance-type nodes (``covers`` edges of device-plugin DaemonSets) are left out by default:
    a DaemonSet covering forty instance types would drown the platform in leaves; the DaemonSet's
    template still shows which NodePools it reaches through ``can-land-on``.
    """
    g = result.run.graph
    workload_keys = {w.resource.key: w for w in result.run.workloads}
    nodes: dict[str, ExportNode] = {}
    for key, data in g.nodes(data=True):
        node = _make_node(key, data, workload_keys)
        if node is None or (node.type == "instance-type" and not include_instance_types):
            continue
        nodes[node.id] = node
    seen: set[tuple[str, str, str]] = set()
    edges: list[ExportEdge] = []
    for src, dst, data in g.edges(data=True):
        s, d, t = node_id(src), node_id(dst), str(data.get("type", ""))
        if s not in nodes or d not in nodes or (s, d, t) in seen:
            continue  # parallel edges of one type (a ConfigMap mounted and read as env) draw once
        seen.add((s, d, t))
        edges.append(ExportEdge(s, d, t, data.get("taint")))
    _attach_findings(nodes, result.findings if show_suppressed else result.active, result)
    return ExportGraph(nodes, edges)


def _make_node(key: tuple, data: dict, workload_keys: dict) -> ExportNode | None:
    nid = node_id(key)
    typ = data.get("type")
    if typ == "resource":
        r = data["resource"]
        category = CATEGORY_OF_KIND.get(r.kind, "other")
        if key in workload_keys:
            category = "daemonset" if r.kind == "DaemonSet" else "workload"
        line = r.location(()).line
        return ExportNode(
            nid,
            "resource",
            r.kind,
            r.name or "<unnamed>",
            r.namespace,
            r.api_version,
            category=category,
            file=r.doc.file.path,
            line=line,
        )
    if typ == "template":
        t = data["template"]
        r = t.resource
        return ExportNode(
            nid,
            "template",
            r.kind,
            r.name or "<unnamed>",
            r.namespace,
            r.api_version,
            role=t.role,
            category="template",
            file=r.doc.file.path,
            line=r.location(t.path).line,
            owner=node_id(r.key),
        )
    if typ == "instance-type":
        return ExportNode(nid, "instance-type", "InstanceType", str(key[1]), category="instance")
    return None


def _attach_findings(nodes: dict[str, ExportNode], findings: list[Finding], result: LintResult) -> None:
    by_resource: dict[str, list[ExportNode]] = {}
    for n in nodes.values():
        if n.type == "template" and n.owner:
            by_resource.setdefault(n.owner, []).append(n)
    template_paths = {
        node_id(("tpl", t.resource.kind, t.resource.namespace, t.resource.name, t.role)): t.path
        for t in result.run.templates
    }
    for f in findings:
        if f.resource is None:
            continue
        rid = node_id(("res", f.resource.kind, f.resource.namespace, f.resource.name))
        if rid in nodes:
            nodes[rid].findings.append(f)
        rel = f.location.path[len(f.base_path) :]
        for tnode in by_resource.get(rid, ()):
            tpath = template_paths.get(tnode.id)
            if tpath is not None and rel[: len(tpath)] == tuple(tpath):
                tnode.findings.append(f)


# --- bundles -----------------------------------------------------------------------------------

#: A bundle replaces edges only when it saves at least this many lines (a pair of templates
#: mounting one ConfigMap reads better as two plain arrows).
BUNDLE_MIN_SAVED = 2


@dataclass(frozen=True)
class Bundle:
    """Edges of one type from every source to every target, drawn as one line per source into a
    junction and one arrow per target out of it (SVG and DOT)."""

    type: str
    sources: tuple[str, ...]
    targets: tuple[str, ...]
    details: tuple[str, ...] = ()


def bundle_edges(edges: list[ExportEdge]) -> tuple[list[Bundle], list[ExportEdge]]:
    """The bundles among ``edges``, and the edges left to draw one by one.

    Sources whose edges of one type reach exactly the same targets share a bundle (every pod
    template of a tenant landing on the same six NodePools). n sources and k targets then take
    n + k curves instead of n * k; a bundle is made only where that saves ``BUNDLE_MIN_SAVED``.
    Edges into one target need none: they already end in one arrowhead.
    """
    targets_of: dict[tuple[str, str], list[ExportEdge]] = {}
    for e in edges:
        if e.source != e.target:
            targets_of.setdefault((e.source, e.type), []).append(e)
    sharing: dict[tuple[str, frozenset[str]], list[str]] = {}
    for (source, etype), es in targets_of.items():
        sharing.setdefault((etype, frozenset(e.target for e in es)), []).append(source)
    bundles: list[Bundle] = []
    bundled: set[tuple[str, str, str]] = set()
    for (etype, targets), sources in sharing.items():
        n, k = len(sources), len(targets)
        if n * k - (n + k) < BUNDLE_MIN_SAVED:
            continue
        members = {(s, t, etype) for s in sources for t in targets}
        details = sorted({e.detail for e in edges if e.detail and (e.source, e.target, e.type) in members})
        bundles.append(Bundle(etype, tuple(sources), tuple(sorted(targets)), tuple(details)))
        bundled |= members
    return bundles, [e for e in edges if (e.source, e.target, e.type) not in bundled]


# --- focus ------------------------------------------------------------------------------------


def focus(graph: ExportGraph, selector: str) -> ExportGraph:
    """The neighbourhood of ``KIND/NAME`` (or ``KIND/NAMESPACE/NAME``; kind case-insensitive).

    Kept: the focused resources, everything they lead to (templates, NodePools, EC2NodeClasses,
    volumes, queues), everything that leads to them (for a NodePool or a PVC: who uses it), and
    the device-plugin DaemonSets that land on the NodePools kept, because whether a pool
    advertises GPUs or EFA depends on them.
    """
    import networkx as nx

    parts = selector.strip().split("/")
    if len(parts) not in (2, 3) or not all(parts):
        raise FocusError(
            f"--focus {selector!r}: use KIND/NAME or KIND/NAMESPACE/NAME (e.g. PyTorchJob/llama3-pretrain)"
        )
    kind, name = parts[0].lower(), parts[-1]
    namespace = parts[1] if len(parts) == 3 else None
    roots = [
        n.id
        for n in graph.nodes.values()
        if n.type == "resource"
        and n.kind.lower() == kind
        and n.name == name
        and (namespace is None or n.namespace == namespace)
    ]
    if not roots:
        same_kind = sorted(
            f"{n.kind}/{n.title}" for n in graph.nodes.values() if n.type == "resource" and n.kind.lower() == kind
        )
        hint = f"; {parts[0]} resources: {', '.join(same_kind[:10])}" if same_kind else ""
        raise FocusError(f"--focus {selector!r}: no such resource in the graph{hint}")
    g = nx.DiGraph()
    g.add_nodes_from(graph.nodes)
    g.add_edges_from((e.source, e.target) for e in graph.edges)
    keep: set[str] = set()
    for root in roots:
        keep |= {root} | nx.descendants(g, root) | nx.ancestors(g, root)
    # templates reached from above (ancestors of a NodePool) bring their own workload along
    for nid in list(keep):
        owner = graph.nodes[nid].owner
        if owner:
            keep.add(owner)
    pools = {nid for nid in keep if graph.nodes[nid].category == "nodepool"}
    for e in graph.edges:
        if e.target in pools and e.type == "can-land-on":
            tpl = graph.nodes[e.source]
            if tpl.owner and graph.nodes.get(tpl.owner) and graph.nodes[tpl.owner].category == "daemonset":
                keep |= {e.source, tpl.owner}
    for nid in list(keep):  # and whatever those workloads' templates lead to (EC2NodeClass ...)
        if graph.nodes[nid].category == "nodepool":
            keep |= nx.descendants(g, nid)
    return graph.with_nodes(keep, focus=selector)


# --- colours (every drawing: DOT, SVG) --------------------------------------------------------

SEVERITY_COLORS: dict[str | None, tuple[str, str]] = {  # (fill, stroke)
    "error": ("#fdecea", "#c62828"),
    "warning": ("#fff4df", "#b26a00"),
    "info": ("#e7f1fb", "#1f6fb2"),
    None: ("#ffffff", "#8a94a6"),
}
EDGE_COLORS: dict[str, str] = {
    "template-of": "#6b7280",
    "runs-template-of": "#6b7280",
    "can-land-on": "#2e7d32",
    "blocked-by-taint": "#c62828",
    "uses-nodeclass": "#6a1b9a",
    "mounts": "#00838f",
    "uses-storageclass": "#00838f",
    "binds": "#00838f",
    "runs-as": "#6b7280",
    "has-priority": "#6b7280",
    "queued-in": "#a15c00",
    "submits-to": "#a15c00",
    "uses-flavor": "#a15c00",
    "flavor-of": "#a15c00",
    "covers": "#1f6fb2",
}
DASHED_EDGES = frozenset({"blocked-by-taint"})
