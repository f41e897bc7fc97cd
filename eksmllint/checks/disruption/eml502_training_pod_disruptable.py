"""EML502 training-pod-disruptable: a training pod can land on a NodePool that consolidates or
drifts busy nodes, without karpenter.sh/do-not-disrupt (or with a duration shorter than its run)."""

from __future__ import annotations

from collections.abc import Iterator

from eksmllint.analysis.placement import placement
from eksmllint.checks.disruption._shared import (
    DO_NOT_DISRUPT,
    DURATION_RELEASE,
    Exposure,
    annotated_duration,
    exposure,
    hosting_pools,
    human_duration,
    is_training_pod,
    protected_for_run,
    protection,
    run_bound,
)
from eksmllint.core.context import LintRun, RuleContext
from eksmllint.core.finding import Finding, Fix, SetValue
from eksmllint.scheduling import NodePoolView
from eksmllint.workload import PodTemplate


def check(ctx: RuleContext, t: PodTemplate) -> Iterator[Finding]:
    # A RayJob submitter only submits and tails the job; the run itself lives in the Ray cluster.
    if not is_training_pod(t) or t.role == "submitter":
        return
    run = ctx.run

    def disruptable_pools(run: LintRun, _where: object) -> list[tuple[NodePoolView, Exposure]]:
        pools = [
            (p, run.once("exposure", p.resource, lambda _run, pool: exposure(pool)))
            for p in hosting_pools(run, t)
            if p.resource.get(("spec", "replicas")) is None
        ]
        return [(p, e) for p, e in pools if e.disruptable]

    exposed = run.once("exposed", placement(run, t), disruptable_pools)  # shared: the cheap test first
    if not exposed:
        return
    if protected_for_run(t, ctx.platform):
        return  # protected for the whole run, or a duration chosen for a run of unknown length
    protected = protection(t, ctx.platform)
    bound = run_bound(t)
    pool, exp = exposed[0]
    more = f" (and {len(exposed) - 1} more)" if len(exposed) > 1 else ""
    verbs = "/".join({"Underutilized": "consolidation", "Drifted": "drift"}[r] for r in exp.uncovered)
    has = _current_value(ctx, t, protected, bound)
    who = "its pods" if t.role in ("pod", "replica") else f"its {t.role} pods"
    yield ctx.report(
        t.resource,
        t.path + ("metadata", "annotations"),
        f"{who} land on NodePool {pool.name!r}{more}, which allows {verbs} of busy nodes, "
        f'and are not annotated {DO_NOT_DISRUPT}: "true"{has}; Karpenter may evict them mid-run',
        fix=Fix(
            f'Annotate the {t.role} pod template {DO_NOT_DISRUPT}: "true"',
            (SetValue(t.path + ("metadata", "annotations", DO_NOT_DISRUPT), "true"),),
        ),
        related=(pool.resource.location(("spec", "disruption")),),
    )


def _current_value(ctx: RuleContext, t: PodTemplate, protected: float | None, bound: tuple[int, tuple] | None) -> str:
    """Why the pod's own do-not-disrupt value, if any, does not protect the run."""
    current = t.annotations.get(DO_NOT_DISRUPT)
    if current is None:
        return ""
    karpenter = ctx.platform.describe("karpenter")
    if protected is not None and bound is not None:
        return (
            f" ({DO_NOT_DISRUPT} is {current!r}, which {karpenter} honours only for their first "
            f"{human_duration(protected)} of a run allowed {human_duration(bound[0])})"
        )
    if annotated_duration(t) is not None:
        return (
            f' ({DO_NOT_DISRUPT} is {current!r}, a duration {karpenter} does not read: only "true" protects '
            f"before Karpenter {DURATION_RELEASE})"
        )
    return f" ({DO_NOT_DISRUPT} is {current!r})"
