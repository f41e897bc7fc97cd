"""EML202 gang-min-available: a gang minimum (Volcano minAvailable, Kubeflow schedulingPolicy,
PodGroup minMember) above the pods the job creates or below the pods of its collective."""

from __future__ import annotations

from collections.abc import Iterator

from eksmllint.checks.gang._shared import (
    COSCHEDULING_GROUP,
    COSCHEDULING_LABELS,
    SCHEDULING_POLICY,
    VOLCANO_GROUP_ANNOTATION,
    VOLCANO_SCHEDULING_GROUP,
    has_scheduling_policy,
    is_elastic,
    pod_breakdown,
)
from eksmllint.core.context import LintRun, RuleContext
from eksmllint.core.finding import Finding, Fix, SetValue
from eksmllint.quantity import parse_int as literal_int
from eksmllint.resource import Resource
from eksmllint.workload import PodTemplate, Workload


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


def _volcano_min(ctx: RuleContext, w: Workload) -> Iterator[Finding]:
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


def _kubeflow_min(ctx: RuleContext, w: Workload) -> Iterator[Finding]:
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


def podgroup_members(run: LintRun, pg: Resource) -> list[PodTemplate]:
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


def _podgroup_min(ctx: RuleContext, pg: Resource) -> Iterator[Finding]:
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


def check(ctx: RuleContext, run: LintRun) -> Iterator[Finding]:
    for w in run.workloads:
        if w.is_volcano_job:
            yield from _volcano_min(ctx, w)
        elif has_scheduling_policy(w):
            yield from _kubeflow_min(ctx, w)
    for pg in run.of_kind("PodGroup"):
        if pg.group in (COSCHEDULING_GROUP, VOLCANO_SCHEDULING_GROUP):
            yield from _podgroup_min(ctx, pg)
