"""The resource graph (networkx): resources and pod templates as nodes, typed edges between them.

Built once per run, close to linear in the number of resources: references are resolved through
name indexes, and pod-to-NodePool placement reuses :meth:`LintRun.landing` (cached per template).

Edge types: ``template-of`` (workload -> template), ``can-land-on`` / ``blocked-by-taint``
(template -> NodePool), ``uses-nodeclass`` (NodePool -> EC2NodeClass), ``mounts`` (template ->
PVC / ConfigMap / Secret), ``uses-storageclass`` (PVC -> StorageClass), ``binds`` (PVC -> PV),
``runs-as`` (ServiceAccount), ``has-priority`` (PriorityClass), ``queued-in`` (workload -> Queue /
LocalQueue / PodGroup), ``submits-to`` (Kueue LocalQueue -> ClusterQueue), ``uses-flavor``
(ClusterQueue -> ResourceFlavor), ``flavor-of`` (ResourceFlavor -> the NodePool its
``karpenter.sh/nodepool`` node label names), ``covers`` (DaemonSet -> instance type).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from eksmllint.apigroups import KUEUE_GROUP
from eksmllint.resource import Resource
from eksmllint.workload import PodTemplate, Workload

if TYPE_CHECKING:
    import networkx as nx

    from eksmllint.core.context import LintRun


def res_node(kind: str, namespace: str | None, name: str | None) -> tuple:
    return ("res", kind, namespace, name)


def template_node(t: PodTemplate) -> tuple:
    r = t.resource
    return ("tpl", r.kind, r.namespace, r.name, t.role)


def template_references(t: PodTemplate) -> Iterator[tuple[str, Any, tuple]]:
    """(kind, name, path) of every object a pod template refers to by name (the name as the
    manifest has it: a str when well-formed, else None or whatever was written)."""
    spec_path = t.spec_path
    for i, v in t.volumes:
        base = spec_path + ("volumes", i)
        if isinstance(v.get("persistentVolumeClaim"), dict):
            yield (
                "PersistentVolumeClaim",
                v["persistentVolumeClaim"].get("claimName"),
                base + ("persistentVolumeClaim", "claimName"),
            )
        if isinstance(v.get("configMap"), dict):
            yield "ConfigMap", v["configMap"].get("name"), base + ("configMap", "name")
        if isinstance(v.get("secret"), dict):
            yield "Secret", v["secret"].get("secretName"), base + ("secret", "secretName")
    for key, kind in (("serviceAccountName", "ServiceAccount"), ("priorityClassName", "PriorityClass")):
        if isinstance(t.spec.get(key), str):
            yield kind, t.spec[key], spec_path + (key,)
    for c in t.containers + t.init_containers:
        env_from = c.data.get("envFrom")
        if isinstance(env_from, list):
            for j, e in enumerate(env_from):
                if isinstance(e, dict):
                    for key, kind in (("configMapRef", "ConfigMap"), ("secretRef", "Secret")):
                        ref = e.get(key)
                        if isinstance(ref, dict) and not ref.get("optional"):
                            yield kind, ref.get("name"), c.path + ("envFrom", j, key, "name")
        for j, e in enumerate(c.env_list):
            vf = e.get("valueFrom")
            if isinstance(vf, dict):
                for key, kind in (("configMapKeyRef", "ConfigMap"), ("secretKeyRef", "Secret")):
                    ref = vf.get(key)
                    if isinstance(ref, dict) and not ref.get("optional"):
                        yield kind, ref.get("name"), c.path + ("env", j, "valueFrom", key, "name")


def _add_resource(g: nx.MultiDiGraph, r: Resource) -> tuple:
    node = res_node(r.kind, r.namespace, r.name)
    g.add_node(node, type="resource", kind=r.kind, resource=r)
    return node


def build_graph(run: LintRun) -> nx.MultiDiGraph:
    import networkx as nx  # ~0.15 s to import: only `eksmllint graph` needs it, not every lint

    g = nx.MultiDiGraph()
    names: dict[tuple[str, str], list[Resource]] = {}
    for r in run.resources:
        _add_resource(g, r)
        if r.name:
            names.setdefault((r.kind, r.name), []).append(r)

    def targets(kind: str, name: str, namespace: str | None) -> list[tuple]:
        found = [x for x in names.get((kind, name), []) if namespace is None or x.namespace in (None, namespace)]
        return [res_node(x.kind, x.namespace, x.name) for x in found]

    for pool in run.nodepools:
        src = res_node("NodePool", pool.resource.namespace, pool.name)
        for nc in pool.node_class(run):  # by group, kind and name
            dst = res_node(nc.kind, nc.namespace, nc.name)
            g.add_edge(src, dst, type="uses-nodeclass", path=("spec", "template", "spec", "nodeClassRef"))
    for pvc in run.of_kind("PersistentVolumeClaim"):
        src = res_node(pvc.kind, pvc.namespace, pvc.name)
        sc = pvc.get(("spec", "storageClassName"))
        if isinstance(sc, str):
            for dst in targets("StorageClass", sc, None):
                g.add_edge(src, dst, type="uses-storageclass", path=("spec", "storageClassName"))
        pv = pvc.get(("spec", "volumeName"))
        if isinstance(pv, str):
            for dst in targets("PersistentVolume", pv, None):
                g.add_edge(src, dst, type="binds", path=("spec", "volumeName"))
    _add_kueue(g, run, targets)
    for w in run.workloads:
        _add_workload(g, run, w, targets)
    return g


def _add_kueue(g, run, targets) -> None:
    """Quota to capacity: LocalQueue -> ClusterQueue -> ResourceFlavor -> NodePool."""
    for lq in run.of_kind("LocalQueue", KUEUE_GROUP):
        cq = lq.get(("spec", "clusterQueue"))
        if isinstance(cq, str):
            for dst in targets("ClusterQueue", cq, None):
                g.add_edge(
                    res_node(lq.kind, lq.namespace, lq.name), dst, type="submits-to", path=("spec", "clusterQueue")
                )
    for cq in run.of_kind("ClusterQueue", KUEUE_GROUP):
        groups = cq.get(("spec", "resourceGroups"))
        for gi, group in enumerate(groups if isinstance(groups, list) else ()):
            flavors = group.get("flavors") if isinstance(group, dict) else None
            for fi, flavor in enumerate(flavors if isinstance(flavors, list) else ()):
                name = flavor.get("name") if isinstance(flavor, dict) else None
                if isinstance(name, str):
                    for dst in targets("ResourceFlavor", name, None):
                        g.add_edge(
                            res_node(cq.kind, cq.namespace, cq.name),
                            dst,
                            type="uses-flavor",
                            path=("spec", "resourceGroups", gi, "flavors", fi, "name"),
                        )
    for rf in run.of_kind("ResourceFlavor", KUEUE_GROUP):
        pool = rf.get(("spec", "nodeLabels", "karpenter.sh/nodepool"))
        if isinstance(pool, str):
            for dst in targets("NodePool", pool, None):
                g.add_edge(
                    res_node(rf.kind, rf.namespace, rf.name),
                    dst,
                    type="flavor-of",
                    path=("spec", "nodeLabels", "karpenter.sh/nodepool"),
                )


_EDGE_FOR = {
    "PersistentVolumeClaim": "mounts",
    "ConfigMap": "mounts",
    "Secret": "mounts",
    "ServiceAccount": "runs-as",
    "PriorityClass": "has-priority",
}


def _add_workload(g, run, w: Workload, targets) -> None:
    r = w.resource
    owner = r.owner  # a TrainJob (whose JobSet view this is), a Katib Experiment
    wnode = res_node(owner.kind, owner.namespace, owner.name)
    if r.origin is not r:
        g.add_edge(wnode, res_node(r.origin.kind, r.origin.namespace, r.origin.name), type="runs-template-of")
    for queue_kind, name, path in queue_references(w):
        for dst in targets(queue_kind, name, r.namespace if queue_kind in ("LocalQueue", "PodGroup") else None):
            g.add_edge(wnode, dst, type="queued-in", path=path)
    for t in w.templates:
        tnode = template_node(t)
        g.add_node(tnode, type="template", template=t)
        g.add_edge(wnode, tnode, type="template-of", path=t.path)
        for kind, name, path in template_references(t):
            if isinstance(name, str):
                for dst in targets(kind, name, r.namespace if kind != "PriorityClass" else None):
                    g.add_edge(tnode, dst, type=_EDGE_FOR[kind], path=path)
        landing = run.landing(t)
        for pool in landing.pools:
            g.add_edge(tnode, res_node("NodePool", pool.resource.namespace, pool.name), type="can-land-on")
        for pool, taint in landing.blocked:
            g.add_edge(
                tnode,
                res_node("NodePool", pool.resource.namespace, pool.name),
                type="blocked-by-taint",
                taint=taint.key,
            )
        if w.has("per-node") and landing.instance_types:
            for it in landing.instance_types:
                g.add_node(("instance", it.name), type="instance-type")
                g.add_edge(wnode, ("instance", it.name), type="covers")


def queue_references(w: Workload) -> Iterator[tuple[str, str, tuple]]:
    """(kind, name, path) of the queue / PodGroup objects a workload is submitted through."""
    r = w.resource
    if w.is_volcano_job and isinstance(r.get(("spec", "queue")), str):
        yield "Queue", r.get(("spec", "queue")), ("spec", "queue")
    sp = r.get(("spec", "runPolicy", "schedulingPolicy", "queue"))
    if isinstance(sp, str):
        yield "Queue", sp, ("spec", "runPolicy", "schedulingPolicy", "queue")
    lq = r.labels.get("kueue.x-k8s.io/queue-name")
    if isinstance(lq, str):
        yield "LocalQueue", lq, ("metadata", "labels", "kueue.x-k8s.io/queue-name")
    for t in w.templates:
        pg = t.labels.get("scheduling.x-k8s.io/pod-group")
        if isinstance(pg, str):
            yield "PodGroup", pg, t.path + ("metadata", "labels", "scheduling.x-k8s.io/pod-group")


def neighbours(g: nx.MultiDiGraph, node: tuple, edge_type: str) -> list[tuple]:
    return [dst for _, dst, data in g.out_edges(node, data=True) if data.get("type") == edge_type]
