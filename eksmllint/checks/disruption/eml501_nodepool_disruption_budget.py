"""EML501 nodepool-disruption-budget: a Karpenter NodePool serving training may consolidate
underutilized or replace drifted nodes while jobs run (no always-active zero budget)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from eksmllint.analysis.placement import placement
from eksmllint.analysis.workload_class import WorkloadClass, classify
from eksmllint.checks.disruption._shared import (
    Exposure,
    exposure,
    hosting_pools,
    is_training_pod,
    protected_for_run,
)
from eksmllint.checks.helpers import sentences
from eksmllint.core.context import KARPENTER_GROUP, LintRun, RuleContext
from eksmllint.core.finding import AppendItem, Finding, Fix, SetValue
from eksmllint.resource import Resource
from eksmllint.scheduling import NodePoolView
from eksmllint.workload import ACCELERATORS, PodTemplate

#: Taint keys that mark a pool as reserved for accelerator pods.
ACCELERATOR_TAINTS = frozenset(ACCELERATORS) | {"aws.amazon.com/neuroncore", "amd.com/gpu"}
#: What Karpenter uses when a NodePool defines no budgets, and the defaulted consolidateAfter of
#: a NodePool without ``spec.disruption`` (facts section 3).
DEFAULT_BUDGET = "10%"
DEFAULT_CONSOLIDATE_AFTER = "0s"
#: The fix blocks drift except in a weekly window (Sunday 00:00-04:00 UTC): a zero budget active
#: for 164 h from Sunday 04:00. A permanent zero budget for Drifted would hold back AMI and security
#: rollouts forever; running jobs are protected by karpenter.sh/do-not-disrupt (EML502).
DRIFT_BLOCK_SCHEDULE = "0 4 * * sun"
DRIFT_BLOCK_DURATION = "164h"


def _hosting_ids(run: LintRun, t: PodTemplate) -> set[int]:
    return run.once(
        "hosting-ids", placement(run, t), lambda _run, _where: {id(p.resource) for p in hosting_pools(run, t)}
    )


def _templates_on(run: LintRun) -> dict[int, list[PodTemplate]]:
    """NodePool resource id -> the templates of the run hosted there, in run order: built once per
    run, where a scan of every template per pool made the rule pools x templates."""

    def build(run: LintRun, _: object) -> dict[int, list[PodTemplate]]:
        index: dict[int, list[PodTemplate]] = {}
        for t in run.templates:
            for pool_id in _hosting_ids(run, t):
                index.setdefault(pool_id, []).append(t)
        return index

    return run.once("eml501-templates-on", run, build)


def _view(run: LintRun, pool: Resource) -> NodePoolView:
    return run.nodepool_of(pool) or NodePoolView(pool)


def accelerator_pool_reason(view: NodePoolView) -> str | None:
    """Why a pool is evidently meant for accelerator pods, judged by its own definition (used
    when no pod of the run shows what it serves); None when nothing says so. Inference-only
    families (inf*) do not count: nobody trains there."""
    types = view.instance_types
    if types:  # closed over the catalogue, which holds only accelerated types
        trainable = sorted(it.name for it in types if not it.family.startswith("inf"))
        if not trainable:
            return None  # Inferentia only
        shown = ", ".join(trainable[:3]) + (" ..." if len(trainable) > 3 else "")
        return f"it offers only accelerated instance types: {shown}"
    limits = view.resource.get(("spec", "limits"))
    if isinstance(limits, dict):
        for key in ACCELERATORS:
            if key in limits and str(limits[key]).strip() not in ("0", ""):
                return f"it limits {key}"
    for taint in view.taints:
        if taint.key in ACCELERATOR_TAINTS and taint.effect in ("NoSchedule", "NoExecute"):
            return f"it taints its nodes {taint.key}"
    return None


def training_tenants(run: LintRun, view: NodePoolView) -> list[PodTemplate]:
    """Training pod templates of the run that request accelerators and land on ``view``."""
    hosted = _templates_on(run).get(id(view.resource), [])
    return [t for t in hosted if is_training_pod(t) and t.accelerator_total]


def training_use(run: LintRun, view: NodePoolView, by_definition: bool = True) -> str | None:
    """Why ``view`` serves training, or None.

    1. A training pod template of the run that requests accelerators lands on it (a CPU-only
       head or launcher without constraints lands on every untainted pool: weak evidence).
    2. Otherwise, if accelerator services (a GPU Deployment ...) land on it, it serves those: no.
    3. Otherwise it is judged by its own definition (:func:`accelerator_pool_reason`), so a lone
       NodePool linted on its own is still checked."""
    services = False
    for t in _templates_on(run).get(id(view.resource), ()):
        if is_training_pod(t) and t.accelerator_total:
            return f"training pods of {t.display()} land on it"
        if t.accelerator_total and (classify(t.workload).cls is WorkloadClass.INFERENCE or t.workload.has("service")):
            services = True
    if services or not by_definition:
        return None
    return accelerator_pool_reason(view)


def _budget_fix(pool: Resource, exp: Exposure) -> Fix:
    """Append a zero budget for the uncovered reasons. Without budgets Karpenter's implicit 10%
    budget applies to every reason; it is written out first so Empty consolidation keeps its
    pace. Without a disruption block its defaulted consolidateAfter is written too, because the
    CRD requires it once the block exists."""
    path = ("spec", "disruption", "budgets")
    budgets: list[dict] = []
    if pool.api_version.endswith("v1beta1"):  # no budget reasons before karpenter.sh/v1
        budgets.append({"nodes": "0"})
    else:
        held = [r for r in exp.uncovered if r != "Drifted"]
        if held:
            budgets.append({"nodes": "0", "reasons": held})
        if "Drifted" in exp.uncovered:
            budgets.append(
                {
                    "nodes": "0",
                    "reasons": ["Drifted"],
                    "schedule": DRIFT_BLOCK_SCHEDULE,
                    "duration": DRIFT_BLOCK_DURATION,
                }
            )
    ops: list = []
    if not isinstance(pool.get(("spec", "disruption")), dict):
        ops.append(SetValue(("spec", "disruption", "consolidateAfter"), DEFAULT_CONSOLIDATE_AFTER))
    if not isinstance(pool.get(path), list) or not pool.get(path):
        ops.append(AppendItem(path, {"nodes": DEFAULT_BUDGET}))
    ops.extend(AppendItem(path, b) for b in budgets)
    return Fix(
        f'Add disruption budgets nodes "0" for {", ".join(exp.uncovered)} (drift outside a weekly window)', tuple(ops)
    )


def check(ctx: RuleContext, pool: Resource) -> Iterator[Finding]:
    if pool.group != KARPENTER_GROUP or pool.get(("spec", "replicas")) is not None:
        return  # static NodePools (spec.replicas) do not consolidate
    exp = exposure(pool)
    if not exp.disruptable:
        return
    view = _view(ctx.run, pool)
    why = training_use(ctx.run, view, bool(ctx.options.get("unused-accelerator-pools", True)))
    if why is None:
        return
    tenants = training_tenants(ctx.run, view)
    grace = view.template_spec.get("terminationGracePeriod") is not None
    if tenants and all(protected_for_run(t, ctx.platform) for t in tenants):
        # do-not-disrupt on every training pod keeps consolidation and drift off busy nodes, so a
        # non-zero Drifted budget rolls AMIs on idle nodes only (Karpenter's recommended setting);
        # terminationGracePeriod overrides do-not-disrupt for drift, which then reaches them.
        if not grace or "Drifted" not in exp.uncovered:
            return
        exp = replace(exp, uncovered=("Drifted",))
        why += "; its terminationGracePeriod overrides their karpenter.sh/do-not-disrupt for drift"
    reasons = " and ".join(
        {"Underutilized": "consolidate underutilized nodes", "Drifted": "replace drifted nodes"}[r]
        for r in exp.uncovered
    )
    if exp.consolidates_underutilized and "Underutilized" in exp.uncovered:
        path: tuple = ("spec", "disruption", "consolidationPolicy")
        policy = f"consolidationPolicy {exp.policy}" + ("" if isinstance(pool.get(path), str) else " (the default)")
    else:
        path = ("spec", "disruption", "budgets")
        policy = f"consolidationPolicy {exp.policy}"
    budget = 'no always-active disruption budget with nodes "0" covers ' + "/".join(exp.uncovered)
    if not exp.has_budgets:
        budget += " (the default budget allows 10%)"
    elif exp.scheduled_zero:
        budget += " (a budget with a schedule protects only during its window)"
    yield ctx.report(
        pool,
        path,
        f"NodePool {pool.name!r} serves training but may {reasons}",
        fix=_budget_fix(pool, exp),
        detail=sentences(f"it serves training: {why}", f"{policy} and {budget}"),
    )
