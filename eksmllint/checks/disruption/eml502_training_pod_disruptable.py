"""EML502 training-pod-disruptable: a training pod can land on a NodePool that consolidates or
drifts busy nodes, without karpenter.sh/do-not-disrupt (or with a duration shorter than its run)."""

from __future__ import annotations

from collections.abc import Iterator

from eksmllint.analysis.placement import placement
from eksmllint.checks.disruption._shared import (
    DO_NOT_DISRUPT,
    Exposure,
    exposure,
    hosting_pools,
    human_duration,
    is_training_pod,
    parse_go_duration,
    protected,
    run_bound,
)
from eksmllint.core.context import LintRun, RuleContext
from eksmllint.core.finding import Finding, Fix, SetValue
from eksmllint.scheduling import NodePoolView
from eksmllint.workload import PodTemplate


def _short_protection(t: PodTemplate) -> tuple[float, int] | None:
    """(protected seconds, run bound) when do-not-disrupt is a Go duration shorter than the run's
    known bound (the shortest activeDeadlineSeconds or Kueue maximum execution time that applies):
    Karpenter honours the duration only for that long after the pod starts, so the rest of the run
    is disruptable. None otherwise (unknown run length: the duration is taken as chosen on purpose)."""
    value = t.annotations.get(DO_NOT_DISRUPT)
    seconds = parse_go_duration(value.strip()) if isinstance(value, str) else None
    bound = run_bound(t) if seconds is not None else None
    return (seconds, bound[0]) if seconds is not None and bound is not None and bound[0] > seconds else None


def check(ctx: RuleContext, t: PodTemplate) -> Iterator[Finding]:
    # A RayJob submitter only submits and tails the job; the run itself lives in the Ray cluster.
    if not is_training_pod(t) or t.role == "submitter":
        return
    short = _short_protection(t)
    if protected(t) and short is None:
        return
    run = ctx.run

    def disruptable_pools(run: LintRun, _where: object) -> list[tuple[NodePoolView, Exposure]]:
        pools = [
            (p, run.once("exposure", p.resource, lambda _run, pool: exposure(pool)))
            for p in hosting_pools(run, t)
            if p.resource.get(("spec", "replicas")) is None
        ]
        return [(p, e) for p, e in pools if e.disruptable]

    exposed = run.once("exposed", placement(run, t), disruptable_pools)
    if not exposed:
        return
    pool, exp = exposed[0]
    more = f" (and {len(exposed) - 1} more)" if len(exposed) > 1 else ""
    verbs = "/".join({"Underutilized": "consolidation", "Drifted": "drift"}[r] for r in exp.uncovered)
    current = t.annotations.get(DO_NOT_DISRUPT)
    has = f" ({DO_NOT_DISRUPT} is {current!r})" if current is not None else ""
    if short is not None:
        has = (
            f" ({DO_NOT_DISRUPT} is {current!r}, which protects them only for their first "
            f"{human_duration(short[0])} of a run allowed {human_duration(short[1])})"
        )
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
