"""Family 2xx: gang scheduling and queues.

A distributed training job is a collective: no rank makes progress until every rank is up. A
scheduler that starts pods one by one lets a job hold some of its accelerators while it waits
for the rest, and two such jobs can each hold half a cluster forever. The rules here check that
multi-pod training goes through a gang mechanism (EML201), that the gang size matches the
collective (EML202), that the gang settings reach the scheduler and the queues they name exist
(EML203), and that the queue can ever hold the whole job (EML204).

Facts: ml-on-eks-facts.md sections 7 (Kubeflow ``runPolicy.schedulingPolicy``) and 8 (Volcano
Job / Queue / PodGroup, Kueue ClusterQueue / LocalQueue, JobSet, coscheduling).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal

from eksmllint.core.context import KUEUE_GROUP
from eksmllint.core.finding import Fix, SetValue
from eksmllint.graph import queue_references
from eksmllint.quantity import DIGITS, parse_count, parse_quantity
from eksmllint.quantity import parse_int as literal_int
from eksmllint.resource import Resource
from eksmllint.workload import PodTemplate, Workload

VOLCANO = "volcano"
VOLCANO_SCHEDULING_GROUP = "scheduling.volcano.sh"
COSCHEDULING_GROUP = "scheduling.x-k8s.io"
KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
KUEUE_POD_GROUP_LABEL = "kueue.x-k8s.io/pod-group-name"
COSCHEDULING_LABELS = ("scheduling.x-k8s.io/pod-group", "pod-group.scheduling.sigs.k8s.io")
#: Volcano's pod-to-PodGroup annotation (pods created by the Volcano job controller carry it).
VOLCANO_GROUP_ANNOTATION = "scheduling.k8s.io/group-name"
#: KubeRay's Volcano integration reads the queue of a RayCluster / RayJob from this label.
RAY_VOLCANO_QUEUE_LABEL = "volcano.sh/queue-name"
#: KubeRay creates a PodGroup for the cluster when one of these labels names a batch scheduler.
RAY_GANG_LABELS = ("ray.io/scheduler-name", "ray.io/gang-scheduling-enabled")
#: NVIDIA KAI Scheduler: its pod-grouper creates a PodGroup for pods that name it, with
#: minMember = all replicas for these kinds (distributed training, Ray, JobSet) but minMember 1
#: for a plain batch Job (docs/batch/README.md of NVIDIA/KAI-Scheduler).
KAI_SCHEDULER = "kai-scheduler"
KAI_GANG_KINDS = frozenset({"PyTorchJob", "TFJob", "MPIJob", "RayJob", "RayCluster", "JobSet"})
#: Apache YuniKorn gang-schedules an application only when its pods declare task groups.
YUNIKORN_TASK_GROUPS = "yunikorn.apache.org/task-groups"
YUNIKORN = "yunikorn"
#: Kinds whose operator creates a PodGroup from ``spec.runPolicy.schedulingPolicy``.
KUBEFLOW_KINDS = frozenset({"PyTorchJob", "TFJob", "MPIJob"})
SCHEDULING_POLICY = ("spec", "runPolicy", "schedulingPolicy")
#: The Volcano scheduler creates a Queue named "default" itself.
VOLCANO_DEFAULT_QUEUE = "default"

_ELASTIC_NNODES = re.compile(rf"--nnodes[=\s]+({DIGITS}):({DIGITS})")
_HOROVOD_ELASTIC = re.compile(r"--(min-np|max-np|host-discovery-script)\b")


# --------------------------------------------------------------------------------------------
# Shared helpers (also used by EML202-EML204)
# --------------------------------------------------------------------------------------------


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


def is_elastic(w: Workload) -> bool:
    """Elastic training tolerates fewer pods than replicas: a gang minimum below the total is
    then deliberate (Kubeflow ``elasticPolicy``, ``torchrun --nnodes=MIN:MAX`` with MIN < MAX,
    ``horovodrun --min-np/--max-np``)."""
    if isinstance(w.resource.get(("spec", "elasticPolicy")), dict):
        return True
    for t in w.templates:
        if _HOROVOD_ELASTIC.search(_command_text(t)):
            return True  # horovodrun elastic mode
        for m in _ELASTIC_NNODES.finditer(_command_text(t)):
            if int(m.group(1)) < int(m.group(2)):
                return True
        for c in t.containers:
            nnodes = c.env.get("PET_NNODES")
            if nnodes and ":" in nnodes:
                lo, _, hi = nnodes.partition(":")
                if lo.strip().isdigit() and hi.strip().isdigit() and int(lo) < int(hi):
                    return True
    return False


def ray_autoscaling(w: Workload) -> bool:
    """A RayCluster with the in-tree autoscaler grows and shrinks: it is no fixed collective."""
    base = ("spec", "rayClusterSpec") if w.kind == "RayJob" else ("spec",)
    return w.resource.get(base + ("enableInTreeAutoscaling",)) is True


def gang_mechanism(w: Workload) -> str | None:
    """The gang mechanism ``w`` uses (a short description), or None when it has none."""
    r = w.resource
    if w.is_volcano_job:
        return "Volcano Job"  # schedulerName volcano and minAvailable = total by default
    if w.kind in KUBEFLOW_KINDS and isinstance(r.get(SCHEDULING_POLICY), dict):
        return "runPolicy.schedulingPolicy"
    if isinstance(r.labels.get(KUEUE_QUEUE_LABEL), str):
        return "Kueue"
    # JobSet/LeaderWorkerSet exclusive-topology annotations are no gang: they place one job (group)
    # per topology domain, but its pods are still scheduled one at a time.
    if w.kind in ("RayCluster", "RayJob") and any(k in r.labels for k in RAY_GANG_LABELS):
        return "KubeRay batch scheduler"
    workers = [t for t in w.collective_templates if t.replicas] or w.templates
    if w.kind in KAI_GANG_KINDS and workers and all(t.scheduler_name == KAI_SCHEDULER for t in workers):
        return "KAI Scheduler pod-grouper"
    if YUNIKORN_TASK_GROUPS in r.annotations or any(YUNIKORN_TASK_GROUPS in t.annotations for t in w.templates):
        return "YuniKorn task groups"
    for t in w.templates:
        if isinstance(t.labels.get(KUEUE_QUEUE_LABEL), str) or isinstance(t.labels.get(KUEUE_POD_GROUP_LABEL), str):
            return "Kueue"
        if any(isinstance(t.labels.get(k), str) for k in COSCHEDULING_LABELS):
            return "coscheduling PodGroup"
        if isinstance(t.annotations.get(VOLCANO_GROUP_ANNOTATION), str) and is_volcano_scheduler(t.scheduler_name):
            return "Volcano PodGroup"
    return None


def pod_breakdown(w: Workload, templates: list[PodTemplate] | None = None) -> str:
    """'master 1 + worker 4': how the pod count in a message was computed."""
    parts = [
        f"{t.role.split(':', 1)[-1]} {t.replicas}"
        for t in (templates if templates is not None else w.templates)
        if t.replicas
    ]
    return " + ".join(parts)


# --------------------------------------------------------------------------------------------
# EML201 gang-missing
# --------------------------------------------------------------------------------------------


def gang_missing(ctx, w: Workload):
    if not w.is_multi_pod or not w.is_collective:
        return
    if (w.kind in ("RayCluster", "RayJob") and ray_autoscaling(w)) or is_elastic(w):
        return  # no fixed collective: it runs with whatever number of pods it gets
    if gang_mechanism(w) is not None:
        return
    r = w.resource
    pods = w.collective_size
    accel = sum((t.replicas or 0) * t.accelerator_total for t in w.collective_templates)
    held = (
        f"; pods that start first hold their share of the {accel} accelerators while waiting for the rest"
        if accel
        else "; pods that start first wait for the rest, and two such jobs can deadlock"
    )
    path: tuple = ("spec",)
    if w.kind in KUBEFLOW_KINDS:
        how = "add runPolicy.schedulingPolicy.minAvailable (with the operator's gang scheduler) or a Kueue queue"
        path = ("spec", "runPolicy") if isinstance(r.get(("spec", "runPolicy")), dict) else path
    elif w.kind in ("RayCluster", "RayJob"):
        how = (
            "set the ray.io/scheduler-name label for KubeRay's batch scheduler (volcano, yunikorn) or use a Kueue queue"
        )
    elif w.is_batch_job:
        how = "use a Volcano Job, a Kueue queue or a coscheduling PodGroup (scheduling.x-k8s.io/pod-group)"
    else:
        how = "use a Kueue queue or a coscheduling PodGroup (scheduling.x-k8s.io/pod-group)"
    how += _scheduler_note(w)
    parts = [t for t in w.collective_templates if t.replicas]
    breakdown = f" ({pod_breakdown(w, parts)})" if len(parts) > 1 else ""
    yield ctx.report(
        r,
        path,
        f"{r.kind} runs {pods} pods in one collective{breakdown} without gang scheduling{held}; {how}",
    )


def _scheduler_note(w: Workload) -> str:
    """Why a gang scheduler the pods name does not gang them here."""
    names = {t.scheduler_name for t in w.templates if t.scheduler_name}
    if KAI_SCHEDULER in names:
        return (
            "; KAI Scheduler's pod-grouper gives a plain Job minMember 1 (pod by pod): run the collective "
            "as a PyTorchJob, MPIJob or JobSet"
            if w.kind not in KAI_GANG_KINDS
            else "; KAI gangs the job only when every pod template sets schedulerName: kai-scheduler"
        )
    if any(n and YUNIKORN in n for n in names):
        return f"; YuniKorn gang-schedules only pods that declare task groups ({YUNIKORN_TASK_GROUPS})"
    return ""


# --------------------------------------------------------------------------------------------
# EML202 gang-min-available
# --------------------------------------------------------------------------------------------


def _min_message(what: str, value: int, total: int, needed: int, detail: str = "") -> str | None:
    detail = f" ({detail})" if detail else ""
    if value > total:
        return f"{what} {value} exceeds the {total} pods the job creates{detail}: the gang can never start"
    if value < needed:
        return (
            f"{what} {value} is below the {needed} pods of the collective{detail}: the scheduler starts "
            "a partial gang that waits for the rest while holding its nodes"
        )
    return None


def _volcano_min(ctx, w: Workload) -> Iterator:
    r = w.resource
    total = w.total_pods
    if total is None:
        return
    tasks = r.get(("spec", "tasks"))
    tasks = tasks if isinstance(tasks, list) else []
    effective = 0
    for i, task in enumerate(tasks):
        if not isinstance(task, dict):
            continue
        replicas = literal_int(task.get("replicas"))
        replicas = 1 if replicas is None and "replicas" not in task else replicas
        if replicas is None:
            return  # templated replicas: unknown total
        tmin = literal_int(task.get("minAvailable"))
        if tmin is not None and tmin > replicas:
            yield ctx.report(
                r,
                ("spec", "tasks", i, "minAvailable"),
                f"task {task.get('name', i)!r} minAvailable {tmin} exceeds its {replicas} replicas: "
                "the gang can never start",
                fix=Fix(
                    f"Set minAvailable to the task's {replicas} replicas",
                    (SetValue(("spec", "tasks", i, "minAvailable"), replicas),),
                ),
            )
            tmin = replicas
        effective += replicas if tmin is None else tmin
    needed = w.collective_size if w.is_multi_pod and w.is_collective and not is_elastic(w) else 0
    raw = r.get(("spec", "minAvailable"))
    job_min = literal_int(raw)
    if raw is not None and job_min is None:
        return  # templated: unknown
    if job_min:  # 0 means unset: the webhook fills in the sum of the tasks' minAvailable
        msg = _min_message("minAvailable", job_min, total, needed, pod_breakdown(w))
        if msg:
            yield ctx.report(
                r,
                ("spec", "minAvailable"),
                msg,
                fix=Fix(
                    f"Set minAvailable to the {total} pods of the job", (SetValue(("spec", "minAvailable"), total),)
                ),
            )
        return
    if effective >= needed:
        return
    for i, task in enumerate(tasks):
        if not isinstance(task, dict):
            continue
        replicas = literal_int(task.get("replicas")) or 1
        tmin = literal_int(task.get("minAvailable"))
        if tmin is not None and tmin < replicas:
            yield ctx.report(
                r,
                ("spec", "tasks", i, "minAvailable"),
                f"task {task.get('name', i)!r} minAvailable {tmin} is below its {replicas} replicas and the Job "
                f"sets no minAvailable, so Volcano gangs only {effective} of the {needed} pods of the "
                "collective: a partial gang starts and waits for the rest while holding its nodes",
                fix=Fix(
                    f"Set task minAvailable to its {replicas} replicas",
                    (SetValue(("spec", "tasks", i, "minAvailable"), replicas),),
                ),
            )
            return


def _kubeflow_min(ctx, w: Workload) -> Iterator:
    r = w.resource
    path = SCHEDULING_POLICY + ("minAvailable",)
    value = literal_int(r.get(path))
    total = w.total_pods
    if value is None or total is None:
        return
    needed = 0 if is_elastic(w) else w.collective_size
    msg = _min_message("schedulingPolicy.minAvailable", value, total, needed, pod_breakdown(w))
    if msg:
        yield ctx.report(
            r,
            path,
            msg,
            fix=Fix(f"Set schedulingPolicy.minAvailable to the {total} pods of the job", (SetValue(path, total),)),
        )


def podgroup_members(run, pg: Resource) -> list[PodTemplate]:
    """Pod templates of the run that join PodGroup ``pg`` (same namespace when both set one)."""
    if pg.group == COSCHEDULING_GROUP:

        def joins(t: PodTemplate) -> bool:
            return any(t.labels.get(k) == pg.name for k in COSCHEDULING_LABELS)
    else:

        def joins(t: PodTemplate) -> bool:
            return t.annotations.get(VOLCANO_GROUP_ANNOTATION) == pg.name

    return [
        t for t in run.templates if joins(t) and (pg.namespace is None or t.resource.namespace in (None, pg.namespace))
    ]


def _podgroup_min(ctx, pg: Resource) -> Iterator:
    value = literal_int(pg.get(("spec", "minMember")))
    members = podgroup_members(ctx.run, pg)
    if value is None or not members or any(t.replicas is None for t in members):
        return
    total = sum(t.replicas or 0 for t in members)
    collective = [
        t
        for t in members
        if t.role not in ("launcher", "submitter", "head")
        and t.is_training
        and t.workload.is_collective
        and not is_elastic(t.workload)
    ]
    needed = sum(t.replicas or 0 for t in collective) if total > 1 else 0
    names = sorted({t.resource.ref.display() for t in members})
    msg = _min_message("minMember", value, total, needed, "members: " + ", ".join(names))
    if msg:
        yield ctx.report(
            pg,
            ("spec", "minMember"),
            msg,
            fix=Fix(
                f"Set minMember to the {total} pods that join the PodGroup", (SetValue(("spec", "minMember"), total),)
            ),
        )


def gang_min_available(ctx, run):
    for w in run.workloads:
        if w.is_volcano_job:
            yield from _volcano_min(ctx, w)
        elif w.kind in KUBEFLOW_KINDS:
            yield from _kubeflow_min(ctx, w)
    for pg in run.of_kind("PodGroup"):
        if pg.group in (COSCHEDULING_GROUP, VOLCANO_SCHEDULING_GROUP):
            yield from _podgroup_min(ctx, pg)


# --------------------------------------------------------------------------------------------
# EML203 gang-scheduler-mismatch
# --------------------------------------------------------------------------------------------

#: (kind, API group) of each object a workload can be queued in.
QUEUE_KINDS = {"Queue": VOLCANO_SCHEDULING_GROUP, "LocalQueue": KUEUE_GROUP, "ClusterQueue": KUEUE_GROUP}


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


def _namespaced(kind: str) -> bool:
    return kind in ("LocalQueue", "PodGroup")


def _missing_reference(ctx, r: Resource, kind: str, group: str | None, name: str, path: tuple):
    run = ctx.run
    if kind == "Queue" and name == VOLCANO_DEFAULT_QUEUE:
        return None
    present = run.of_kind(kind, group)
    if not present:
        return None  # like EML703: the object may well be defined elsewhere
    ns = r.namespace if _namespaced(kind) else None
    if run.find(kind, name, ns, group):
        return None
    known = sorted({x.name for x in present if x.name})
    where = f" in namespace {ns}" if ns else ""
    elsewhere = [x for x in present if x.name == name]
    extra = f" (one exists in namespace {elsewhere[0].namespace})" if elsewhere and ns else ""
    shown = ", ".join(known[:4]) + (" ..." if len(known) > 4 else "")
    label = {"Queue": "Volcano Queue", "PodGroup": "PodGroup"}.get(kind, f"Kueue {kind}")
    return ctx.report(
        r,
        path,
        f"{label} {name!r} is not defined{where}{extra}, although the run defines {kind}s ({shown}): "
        "what is submitted to it waits forever",
    )


def _scheduler_mismatches(ctx, w: Workload) -> Iterator:
    r = w.resource
    if w.is_volcano_job:
        sched = r.get(("spec", "schedulerName"))
        if isinstance(sched, str) and not is_volcano_scheduler(sched):
            yield ctx.report(
                r,
                ("spec", "schedulerName"),
                f"Volcano Job sets schedulerName {sched!r}: its pods bypass Volcano, so minAvailable, "
                "the queue and the gang are ignored",
                fix=Fix("Set schedulerName to volcano", (SetValue(("spec", "schedulerName"), VOLCANO),)),
            )
        for t in w.templates:
            if t.scheduler_name is not None and not is_volcano_scheduler(t.scheduler_name):
                yield ctx.report(
                    r,
                    t.spec_path + ("schedulerName",),
                    f"task template sets schedulerName {t.scheduler_name!r}, which overrides the Job's: "
                    f"the {t.role.split(':', 1)[-1]} pods bypass Volcano and the gang",
                    fix=Fix("Set schedulerName to volcano", (SetValue(t.spec_path + ("schedulerName",), VOLCANO),)),
                )


def gang_scheduler_mismatch(ctx, run):
    for w in run.workloads:
        yield from _scheduler_mismatches(ctx, w)
        seen: set[tuple] = set()
        for kind, group, name, path in queue_refs(w):
            if path in seen:
                continue
            seen.add(path)
            finding = _missing_reference(ctx, w.resource, kind, group, name, path)
            if finding is not None:
                yield finding
    for lq in run.of_kind("LocalQueue", KUEUE_GROUP):
        cq = lq.get(("spec", "clusterQueue"))
        if isinstance(cq, str):
            finding = _missing_reference(ctx, lq, "ClusterQueue", KUEUE_GROUP, cq, ("spec", "clusterQueue"))
            if finding is not None:
                yield finding


# --------------------------------------------------------------------------------------------
# EML204 queue-capacity
# --------------------------------------------------------------------------------------------


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


def _volcano_capacity(ctx, w: Workload, demand: Demand, name: str, path: tuple) -> Iterator:
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
                f"the job asks for {need} {res} ({' + '.join(demand.parts[res])}) but Volcano "
                f"Queue {name!r} caps {res} at {limit}: it can never be admitted",
                related=(q.location(("spec", "capability", res)),),
            )


def _kueue_capacity(ctx, w: Workload, demand: Demand, name: str, path: tuple) -> Iterator:
    run = ctx.run
    lqs = run.find("LocalQueue", name, w.resource.namespace, KUEUE_GROUP)
    if len(lqs) != 1:
        return
    cq_name = lqs[0].get(("spec", "clusterQueue"))
    cqs = run.find("ClusterQueue", cq_name, None, KUEUE_GROUP) if isinstance(cq_name, str) else []
    if len(cqs) != 1:
        return
    cq = cqs[0]
    for res, need in sorted(demand.totals.items()):
        limit = cluster_queue_limit(cq, res)
        if limit is None or need <= limit[0]:
            continue
        yield ctx.report(
            w.resource,
            path,
            f"the job asks for {need} {res} ({' + '.join(demand.parts[res])}) but ClusterQueue "
            f"{cq_name!r} (via LocalQueue {name!r}) offers at most {_fmt(limit[0])} ({limit[1]}): "
            "Kueue can never admit it",
            related=(cq.location(("spec", "resourceGroups")),),
        )


def queue_capacity(ctx, w: Workload):
    demand = job_demand(w)
    if demand is None:
        return
    done: set[tuple] = set()
    for kind, _group, name, path in queue_refs(w):
        if (kind, name) in done:
            continue
        done.add((kind, name))
        if kind == "Queue":
            yield from _volcano_capacity(ctx, w, demand, name, path)
        elif kind == "LocalQueue":
            yield from _kueue_capacity(ctx, w, demand, name, path)
