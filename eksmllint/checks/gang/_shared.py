"""Helpers of the gang family (2xx) used by several of its rules.

A distributed training job is a collective: no rank makes progress until every rank is up. A
scheduler that starts pods one by one lets a job hold some of its accelerators while it waits
for the rest, and two such jobs can each hold half a cluster forever. EML201 checks that
multi-pod training goes through a gang mechanism, EML202 that the gang size matches the
collective, EML203 that the gang settings reach the scheduler and the queues they name exist,
and EML204 that the queue can ever hold the whole job.

Facts: ml-on-eks-facts.md sections 7 (Kubeflow ``runPolicy.schedulingPolicy``) and 8 (Volcano
Job / Queue / PodGroup, Kueue ClusterQueue / LocalQueue, JobSet, coscheduling).
"""

from __future__ import annotations

from collections.abc import Iterator

from eksmllint.core.context import KUEUE_GROUP
from eksmllint.graph import queue_references
from eksmllint.guarded import Guarded
from eksmllint.lazy import kept_on
from eksmllint.platform.kinds import row_for
from eksmllint.quantity import DIGITS
from eksmllint.resource import Resource
from eksmllint.workload import PodTemplate, Workload

VOLCANO = "volcano"
VOLCANO_SCHEDULING_GROUP = "scheduling.volcano.sh"
COSCHEDULING_GROUP = "scheduling.x-k8s.io"
COSCHEDULING_LABELS = ("scheduling.x-k8s.io/pod-group", "pod-group.scheduling.sigs.k8s.io")
#: Volcano's pod-to-PodGroup annotation (pods created by the Volcano job controller carry it).
VOLCANO_GROUP_ANNOTATION = "scheduling.k8s.io/group-name"
#: KubeRay's Volcano integration reads the queue of a RayCluster / RayJob from this label.
RAY_VOLCANO_QUEUE_LABEL = "volcano.sh/queue-name"
#: Where the Kubeflow training operator reads a job's PodGroup settings.
SCHEDULING_POLICY = ("spec", "runPolicy", "schedulingPolicy")
#: (kind, API group) of each object a workload can be queued in.
QUEUE_KINDS = {"Queue": VOLCANO_SCHEDULING_GROUP, "LocalQueue": KUEUE_GROUP, "ClusterQueue": KUEUE_GROUP}

_ELASTIC_NNODES = Guarded(rf"--nnodes[=\s]+({DIGITS}):({DIGITS})", ("--nnodes",))
_HOROVOD_ELASTIC = Guarded(r"--(min-np|max-np|host-discovery-script)\b", ("-np", "--host-discovery"))


def gang_policy(w: Workload) -> tuple[Resource, tuple] | None:
    """(object, path) of the gang settings ``w``'s operator turns into a PodGroup, when written: the
    kinds table's ``gang-policy`` of the object that defines the pods (a Kubeflow job's
    ``runPolicy.schedulingPolicy``; for a TrainJob, its runtime's ``podGroupPolicy``)."""
    origin = w.resource.origin
    row = w.row if origin is w.resource else row_for(origin.group, origin.kind)
    path = row.gang_policy if row is not None else None
    if path is None or not isinstance(origin.get(path), dict):
        return None
    return origin, path


def has_scheduling_policy(w: Workload) -> bool:
    """Is ``w`` a kind whose operator reads ``spec.runPolicy.schedulingPolicy`` (Kubeflow jobs)?"""
    return w.row is not None and w.row.gang_policy == SCHEDULING_POLICY


def is_volcano_scheduler(name: object) -> bool:
    """Volcano can run under another name in multi-scheduler set-ups ("volcano-gpu"); any name
    containing "volcano" is taken to be one, so only a clearly different scheduler is reported."""
    return isinstance(name, str) and VOLCANO in name.lower()


def _command_text(t: PodTemplate) -> str:
    parts: list[str] = []
    for c in t.containers:
        command, args = c.argv_lists()
        parts += (command or []) + (args or [])
    return " ".join(parts)


@kept_on
def is_elastic(w: Workload) -> bool:
    """Elastic training tolerates fewer pods than replicas: a gang minimum below the total is
    then deliberate (Kubeflow ``elasticPolicy``, ``torchrun --nnodes=MIN:MAX`` with MIN < MAX,
    ``horovodrun --min-np/--max-np``)."""
    if isinstance(w.resource.get(("spec", "elasticPolicy")), dict):
        return True
    for t in w.templates:
        text = _command_text(t)
        if _HOROVOD_ELASTIC.search(text):
            return True  # horovodrun elastic mode
        if any(int(m.group(1)) < int(m.group(2)) for m in _ELASTIC_NNODES.finditer(text)):
            return True
        for c in t.containers:
            nnodes = c.env.get("PET_NNODES")
            if nnodes and ":" in nnodes:
                lo, _, hi = nnodes.partition(":")
                if lo.strip().isdigit() and hi.strip().isdigit() and int(lo) < int(hi):
                    return True
    return False


def pod_breakdown(w: Workload, templates: list[PodTemplate] | None = None) -> str:
    """'master 1 + worker 4': how the pod count in a message was computed."""
    parts = [
        f"{t.role.split(':', 1)[-1]} {t.replicas}"
        for t in (templates if templates is not None else w.templates)
        if t.replicas
    ]
    return " + ".join(parts)


def queue_refs(w: Workload) -> Iterator[tuple[str, str | None, str, tuple]]:
    """(kind, API group, name, path) of every queue / PodGroup ``w`` is submitted through:
    :func:`eksmllint.graph.queue_references` plus Volcano's group-name pod annotation and
    KubeRay's ``volcano.sh/queue-name`` label."""
    for kind, name, path in queue_references(w):
        if not isinstance(name, str):
            continue
        group = COSCHEDULING_GROUP if kind == "PodGroup" else QUEUE_KINDS.get(kind)
        yield kind, group, name, path
    if w.kind in ("RayCluster", "RayJob") and isinstance(w.resource.labels.get(RAY_VOLCANO_QUEUE_LABEL), str):
        yield (
            "Queue",
            VOLCANO_SCHEDULING_GROUP,
            w.resource.labels[RAY_VOLCANO_QUEUE_LABEL],
            ("metadata", "labels", RAY_VOLCANO_QUEUE_LABEL),
        )
    for t in w.templates:
        pg = t.annotations.get(VOLCANO_GROUP_ANNOTATION)
        if isinstance(pg, str):
            yield (
                "PodGroup",
                VOLCANO_SCHEDULING_GROUP,
                pg,
                t.path + ("metadata", "annotations", VOLCANO_GROUP_ANNOTATION),
            )
