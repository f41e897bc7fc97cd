"""EML201 gang-missing: a multi-pod training collective scheduled without any gang mechanism
(Volcano, Kubeflow schedulingPolicy, coscheduling, Kueue, KubeRay batch scheduler, KAI, YuniKorn)."""

from __future__ import annotations

from collections.abc import Iterator

from eksmllint.checks.gang._shared import (
    COSCHEDULING_LABELS,
    VOLCANO_GROUP_ANNOTATION,
    gang_policy,
    has_scheduling_policy,
    is_elastic,
    is_volcano_scheduler,
    pod_breakdown,
)
from eksmllint.checks.helpers import sentences
from eksmllint.core.context import LintRun, RuleContext
from eksmllint.core.finding import Finding
from eksmllint.platform import Platform
from eksmllint.quantity import parse_int
from eksmllint.workload import PodTemplate, Workload

KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
KUEUE_POD_GROUP_LABEL = "kueue.x-k8s.io/pod-group-name"
#: KubeRay creates a PodGroup for the cluster when one of these labels names a batch scheduler.
RAY_GANG_LABELS = ("ray.io/scheduler-name", "ray.io/gang-scheduling-enabled")
#: NVIDIA KAI Scheduler: its pod-grouper creates a PodGroup for pods that name it, with
#: minMember = all replicas for these kinds (distributed training, Ray, JobSet) but minMember 1
#: for a plain batch Job (docs/batch/README.md of NVIDIA/KAI-Scheduler).
KAI_SCHEDULER = "kai-scheduler"
#: Apache YuniKorn gang-schedules an application only when its pods declare task groups.
YUNIKORN_TASK_GROUPS = "yunikorn.apache.org/task-groups"
YUNIKORN = "yunikorn"
#: LeaderWorkerSet: the controller's Volcano provider (gangSchedulingManagement.schedulerProvider:
#: volcano) creates one PodGroup per group with minMember = size, except with startupPolicy
#: LeaderReady, where it is 1 (lws pkg/schedulerprovider/volcano_provider.go).
#: Kueue enables waitForPodsReady (all pods ready within 30m, or the workload is evicted and requeued)
#: by default from this release (kubernetes-sigs/kueue#11855, released in v0.19.0).
KUEUE_PODS_READY_DEFAULT = "0.19"
LWS = "LeaderWorkerSet"
LWS_LEADER_READY = "LeaderReady"
#: Exclusive placement (one child Job / group per topology domain through pod affinity): placement,
#: not gang scheduling (JobSet docs "Exclusive Job placement"; LWS exclusive placement).
EXCLUSIVE_TOPOLOGY = (
    "alpha.jobset.sigs.k8s.io/exclusive-topology",
    "leaderworkerset.sigs.k8s.io/exclusive-topology",
    "leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology",
)


def ray_autoscaling(w: Workload) -> bool:
    """A RayCluster with the in-tree autoscaler grows and shrinks: it is no fixed collective."""
    base = ("spec", "rayClusterSpec") if w.kind == "RayJob" else ("spec",)
    return w.resource.get(base + ("enableInTreeAutoscaling",)) is True


def gang_mechanism(w: Workload) -> str | None:
    """The gang mechanism ``w`` uses (a short description), or None when it has none."""
    r = w.resource
    if w.is_volcano_job:
        return "Volcano Job"  # schedulerName volcano and minAvailable = total by default
    policy = gang_policy(w)
    if policy is not None:  # the operator makes a PodGroup of it (Kubeflow jobs, Trainer runtimes)
        return ".".join(str(k) for k in policy[1][1:])
    if isinstance(r.labels.get(KUEUE_QUEUE_LABEL), str):
        return "Kueue"
    # JobSet/LeaderWorkerSet exclusive-topology annotations (EXCLUSIVE_TOPOLOGY) are no gang: they
    # place one job (group) per topology domain, but its pods are still scheduled one at a time.
    if w.kind in ("RayCluster", "RayJob") and any(k in r.labels for k in RAY_GANG_LABELS):
        return "KubeRay batch scheduler"
    workers = [t for t in w.collective_templates if t.replicas] or w.templates
    if (
        w.kind == LWS
        and r.get(("spec", "startupPolicy")) != LWS_LEADER_READY
        and all(is_volcano_scheduler(t.scheduler_name) for t in w.templates)
    ):
        return "LeaderWorkerSet Volcano PodGroup per group"
    if w.has("kai-gang") and workers and all(t.scheduler_name == KAI_SCHEDULER for t in workers):
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


def check(ctx: RuleContext, w: Workload) -> Iterator[Finding]:
    if not w.is_multi_pod or not w.is_collective:
        return
    if (w.kind in ("RayCluster", "RayJob") and ray_autoscaling(w)) or is_elastic(w):
        return  # no fixed collective: it runs with whatever number of pods it gets
    if gang_mechanism(w) is not None:
        return
    r = w.resource
    if w.kind == LWS:
        yield _lws_finding(ctx, w)
        return
    pods = w.collective_size
    accel = sum((t.replicas or 0) * t.accelerator_total for t in w.collective_templates)
    path: tuple = ("spec",)
    if has_scheduling_policy(w):
        how = "add runPolicy.schedulingPolicy.minAvailable (with the operator's gang scheduler) or a Kueue queue"
        path = ("spec", "runPolicy") if isinstance(r.get(("spec", "runPolicy")), dict) else path
    elif w.kind in ("RayCluster", "RayJob"):
        how = (
            "set the ray.io/scheduler-name label for KubeRay's batch scheduler (volcano, yunikorn) or use a Kueue queue"
        )
    elif r.origin is not r:  # a TrainJob: the trainer makes the PodGroup from its runtime
        how = (
            f"set podGroupPolicy (coscheduling or volcano) in {r.origin.kind} {r.origin.name!r} or a Kueue queue label"
        )
    elif w.is_batch_job:
        how = "use a Volcano Job, a Kueue queue or a coscheduling PodGroup (scheduling.x-k8s.io/pod-group)"
    else:
        how = "use a Kueue queue or a coscheduling PodGroup (scheduling.x-k8s.io/pod-group)"
    how += _scheduler_note(w) + _exclusive_note(w) + _kueue_note(ctx)
    parts = [t for t in w.collective_templates if t.replicas]
    breakdown = f" ({pod_breakdown(w, parts)})" if len(parts) > 1 else ""
    yield ctx.report(
        r,
        path,
        f"{r.kind} runs {pods} pods in one collective without gang scheduling",
        detail=sentences(breakdown and f"Pods: {breakdown.strip(' ()')}", f"{_held(accel)}; {how}"),
    )


def _held(accelerators: int, whose: str = "the") -> str:
    if accelerators:
        return (
            f"Pods that start first hold their share of {whose} {accelerators} accelerators while waiting for the rest"
        )
    return "Pods that start first wait for the rest, and two such jobs can deadlock"


def _lws_finding(ctx: RuleContext, w: Workload) -> Finding:
    """A LeaderWorkerSet is ``replicas`` groups, each its own collective of ``size`` pods (one leader
    and size - 1 workers): the gang is per group, and so is what a partial group holds."""
    r = w.resource
    size = w.collective_size
    groups = parse_int(r.get(("spec", "replicas")))
    groups = groups if groups is not None and groups > 0 else 1

    def per_group(t: PodTemplate) -> int:
        return 1 if t.role == "leader" else size - (1 if any(x.role == "leader" for x in w.templates) else 0)

    accel = sum(per_group(t) * t.accelerator_total for t in w.templates)
    parts = [f"{t.role} {per_group(t)}" for t in w.templates if per_group(t)]
    whose = "the group's" if groups > 1 else "the"
    shape = f"{groups} groups of {size} pods, each one collective" if groups > 1 else f"one group of {size} pods"
    breakdown = f" ({' + '.join(parts)})" if len(parts) > 1 else ""
    how = (
        "use a Kueue queue (Kueue admits each group as one Workload) or the LeaderWorkerSet controller's Volcano "
        "gang scheduling (gangSchedulingManagement.schedulerProvider: volcano, with schedulerName: volcano on "
        "both templates)"
    )
    if r.get(("spec", "startupPolicy")) == LWS_LEADER_READY:
        how += "; with startupPolicy LeaderReady the Volcano PodGroup gangs only the leader (minMember 1)"
    return ctx.report(
        r,
        ("spec",),
        f"LeaderWorkerSet runs {shape} without gang scheduling",
        detail=sentences(
            breakdown and f"Pods: {breakdown.strip(' ()')}",
            f"{_held(accel, whose)}; {how}{_exclusive_note(w)}{_kueue_note(ctx)}",
        ),
    )


def _kueue_note(ctx: RuleContext) -> str:
    """What the suggested Kueue queue brings with the Kueue release assumed: quota admission is
    all-or-nothing in every release, that the pods also start together needs waitForPodsReady.
    Once per run: every finding says it, and it reads only the run's platform."""
    return ctx.run.once("eml201-kueue-note", ctx.platform, _kueue_text)


def _kueue_text(_run: LintRun, platform: Platform) -> str:
    kueue = platform.describe("kueue")
    if platform.at_least("kueue", KUEUE_PODS_READY_DEFAULT):
        return (
            f"; with a Kueue queue a workload whose pods are not all ready within 30 minutes is evicted and "
            f"requeued: {kueue} enables waitForPodsReady by default"
        )
    return (
        f"; a Kueue queue also needs waitForPodsReady for all pods to start together: {kueue} leaves it off "
        f"by default (on from {KUEUE_PODS_READY_DEFAULT})"
    )


def _exclusive_note(w: Workload) -> str:
    names = [k for k in EXCLUSIVE_TOPOLOGY if k in w.resource.annotations]
    if not names:
        return ""
    return f"; {names[0]} places one {'group' if w.kind == LWS else 'child Job'} per topology domain but gangs nothing"


def _scheduler_note(w: Workload) -> str:
    """Why a gang scheduler the pods name does not gang them here."""
    names = {t.scheduler_name for t in w.templates if t.scheduler_name}
    if KAI_SCHEDULER in names:
        return (
            "; KAI Scheduler's pod-grouper gives a plain Job minMember 1 (pod by pod): run the collective "
            "as a PyTorchJob, MPIJob or JobSet"
            if not w.has("kai-gang")
            else "; KAI gangs the job only when every pod template sets schedulerName: kai-scheduler"
        )
    if any(n and YUNIKORN in n for n in names):
        return f"; YuniKorn gang-schedules only pods that declare task groups ({YUNIKORN_TASK_GROUPS})"
    return ""
