"""EML707 rwo-volume-shared: a ReadWriteOnce (or ReadWriteOncePod) PersistentVolumeClaim is mounted
by the pods of a multi-node collective: the volume attaches to one node, every other pod waits in
ContainerCreating with a Multi-Attach error while the gang holds its accelerators."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from eksmllint.analysis.placement import placement
from eksmllint.catalogue import get_catalogue
from eksmllint.core.finding import Finding
from eksmllint.resource import Resource
from eksmllint.workload import PodTemplate, Workload

if TYPE_CHECKING:
    from eksmllint.core.context import RuleContext

#: Access modes that bind a volume to one node (RWO) or one pod (RWOP): Kubernetes access modes.
SINGLE_NODE = frozenset({"ReadWriteOnce", "ReadWriteOncePod"})


def check(ctx: RuleContext, w: Workload) -> Iterator[Finding]:
    mounts: dict[str, list[tuple[PodTemplate, int]]] = {}
    for t in w.collective_templates:
        for i, v in t.volumes:
            claim = v.get("persistentVolumeClaim")
            name = claim.get("claimName") if isinstance(claim, dict) else None
            if isinstance(name, str):  # read-only mounts too: the volume still attaches to one node
                mounts.setdefault(name, []).append((t, i))
    for name, users in mounts.items():
        pods = sum(t.replicas or 0 for t, _ in users)
        pvc = _claim(ctx, w, name)
        if pods < 2 or pvc is None:
            continue  # one pod, or the claim is not in the run (its modes are unknown)
        modes = pvc.get(("spec", "accessModes"))
        if not isinstance(modes, list) or not modes or not set(map(str, modes)) <= SINGLE_NODE:
            continue
        per_pod = "ReadWriteOncePod" in modes
        if not per_pod and not all(_one_pod_per_node(ctx, t) for t, _ in users):
            continue  # pods that can share a node can share a ReadWriteOnce volume there
        t, i = users[0]
        yield ctx.report(
            t.resource,
            t.spec_path + ("volumes", i, "persistentVolumeClaim", "claimName"),
            f"PVC {name!r} is {'/'.join(map(str, modes))} but {pods} pods on different nodes mount it (Multi-Attach)",
            related=[pvc.location(("spec", "accessModes"))],
        )


def _claim(ctx: RuleContext, w: Workload, name: str) -> Resource | None:
    found = ctx.run.find("PersistentVolumeClaim", name, w.resource.namespace)
    return found[0] if len(found) == 1 else None


def _one_pod_per_node(ctx: RuleContext, t: PodTemplate) -> bool:
    """No node ``t`` can land on holds the accelerators of two of its pods (so its pods run on
    different nodes); over the whole catalogue when the instance types are unknown."""
    accels = t.accelerators
    if not accels:
        return False  # CPU pods may well share a node
    twice = {res: 2 * n for res, n in accels.items()}
    types = placement(ctx.run, t).instance_types or get_catalogue().instances
    return not any(it.offers(twice) for it in types)
