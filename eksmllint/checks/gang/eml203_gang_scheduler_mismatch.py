"""EML203 gang-scheduler-mismatch: a Volcano Job whose pods go to another scheduler, or a queue /
PodGroup / ClusterQueue that is named but missing from a run that defines such objects."""

from __future__ import annotations

from collections.abc import Iterator

from eksmllint.checks.gang._shared import VOLCANO, is_volcano_scheduler, queue_refs
from eksmllint.core.context import KUEUE_GROUP, LintRun, RuleContext
from eksmllint.core.finding import Finding, Fix, SetValue
from eksmllint.resource import Resource
from eksmllint.workload import Workload

#: The Volcano scheduler creates a Queue named "default" itself.
VOLCANO_DEFAULT_QUEUE = "default"


def _namespaced(kind: str) -> bool:
    return kind in ("LocalQueue", "PodGroup")


def _missing_reference(
    ctx: RuleContext, r: Resource, kind: str, group: str | None, name: str, path: tuple
) -> Finding | None:
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
        f"{label} {name!r} is not defined{where}{extra}",
        detail=f"The run defines {kind}s ({shown}), but not this one: what is submitted to it waits forever.",
    )


def _scheduler_mismatches(ctx: RuleContext, w: Workload) -> Iterator[Finding]:
    r = w.resource
    if w.is_volcano_job:
        sched = r.get(("spec", "schedulerName"))
        if isinstance(sched, str) and not is_volcano_scheduler(sched):
            yield ctx.report(
                r,
                ("spec", "schedulerName"),
                f"Volcano Job sets schedulerName {sched!r}, so its pods bypass Volcano",
                detail="minAvailable, the queue and the gang are ignored.",
                fix=Fix("Set schedulerName to volcano", (SetValue(("spec", "schedulerName"), VOLCANO),)),
            )
        for t in w.templates:
            if t.scheduler_name is not None and not is_volcano_scheduler(t.scheduler_name):
                yield ctx.report(
                    r,
                    t.spec_path + ("schedulerName",),
                    f"task template sets schedulerName {t.scheduler_name!r}, so its pods bypass Volcano",
                    detail=f"It overrides the Job's: the {t.role.split(':', 1)[-1]} pods bypass Volcano and the gang.",
                    fix=Fix("Set schedulerName to volcano", (SetValue(t.spec_path + ("schedulerName",), VOLCANO),)),
                )


def check(ctx: RuleContext, run: LintRun) -> Iterator[Finding]:
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
