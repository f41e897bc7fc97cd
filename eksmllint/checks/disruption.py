"""Family 5xx: voluntary disruption of training nodes by Karpenter.

Karpenter removes nodes on its own initiative: consolidation (empty or underutilized nodes),
drift (the NodePool or EC2NodeClass changed, or a new AMI was released) and expiry
(``expireAfter``, forceful since v1). A training collective loses every rank's progress since the
last checkpoint when one node goes, so training nodes must be protected: a disruption budget
with ``nodes: "0"`` (EML501), the pod annotation ``karpenter.sh/do-not-disrupt`` (EML502), and an
``expireAfter`` longer than the job may run (EML503).

Facts: ml-on-eks-facts.md section 3 (NodePool disruption, budgets, expireAfter, do-not-disrupt)
and section 14 ("Consolidation kills training", "expireAfter mid-run").
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from eksmllint.analysis.placement import placement
from eksmllint.analysis.workload_class import SERVICE_KINDS, WorkloadClass, classify
from eksmllint.core.context import KARPENTER_GROUP
from eksmllint.core.finding import AppendItem, Fix, SetValue
from eksmllint.quantity import parse_int
from eksmllint.resource import Resource
from eksmllint.scheduling import NodePoolView
from eksmllint.workload import ACCELERATORS, PodTemplate, Workload

DO_NOT_DISRUPT = "karpenter.sh/do-not-disrupt"
#: CRD default of ``spec.template.spec.expireAfter`` (v1) / ``spec.disruption.expireAfter`` (v1beta1).
DEFAULT_EXPIRE_AFTER = "720h"
#: Disruption reasons a budget can name; "Empty" is harmless for training (no pod runs there).
REASONS = ("Underutilized", "Empty", "Drifted")
#: Long-running services and per-node daemons are meant to be moved around; do-not-disrupt on
#: them would pin nodes.
_NOT_RUN_TO_COMPLETION = SERVICE_KINDS | {"DaemonSet"}
#: Taint keys that mark a pool as reserved for accelerator pods.
ACCELERATOR_TAINTS = frozenset(ACCELERATORS) | {"aws.amazon.com/neuroncore", "amd.com/gpu"}

# --------------------------------------------------------------------------------------------
# Go durations ("720h", "1h30m", "90s", "1.5h"): the format of expireAfter and consolidateAfter
# --------------------------------------------------------------------------------------------

_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_DURATION = re.compile(r"^(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$")
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


def parse_go_duration(text: object) -> float | None:
    """Seconds in a Go duration string (``time.ParseDuration``: "720h", "1h30m", "90s", "0");
    None when ``text`` is not one. A leading sign is rejected: no Karpenter field takes one."""
    if not isinstance(text, str):
        return None
    s = text.strip()
    if s == "0":
        return 0.0
    if not _DURATION.match(s):
        return None
    return sum(float(n) * _UNIT_SECONDS[u] for n, u in _PART.findall(s))


def format_seconds(seconds: float) -> str:
    """Go-duration form for messages: 3600 -> '1h', 5400 -> '1h30m', 90 -> '1m30s'."""
    s = int(seconds)
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return (f"{h}h" if h else "") + (f"{m}m" if m else "") + (f"{sec}s" if sec or not (h or m) else "")


def human_duration(seconds: float) -> str:
    """'40 days' from two days on, else the Go-duration form ('36h', '90m')."""
    days = seconds / 86400
    if days >= 2:
        return f"{days:g} days" if days == int(days) else f"{days:.1f} days"
    return format_seconds(seconds)


# --------------------------------------------------------------------------------------------
# NodePool disruption analysis (shared by EML501 and EML502)
# --------------------------------------------------------------------------------------------


def _is_zero(nodes: object) -> bool:
    return isinstance(nodes, (str, int)) and not isinstance(nodes, bool) and str(nodes).strip() in ("0", "0%")


@dataclass(frozen=True)
class Exposure:
    """Voluntary disruption a NodePool allows for nodes that run pods."""

    policy: str  # effective consolidation policy (defaults applied)
    consolidates_underutilized: bool
    uncovered: tuple[str, ...]  # reasons (Underutilized, Drifted) no always-on zero budget blocks
    has_budgets: bool
    scheduled_zero: bool = False  # some zero budget exists but only inside a schedule window

    @property
    def disruptable(self) -> bool:
        return bool(self.uncovered)


def exposure(pool: Resource) -> Exposure:
    """Which voluntary disruptions can hit a busy node of ``pool``.

    Drift can always happen (the feature gate is gone in v1). Underutilized consolidation happens
    unless ``consolidationPolicy: WhenEmpty`` or ``consolidateAfter: Never``; the CRD default is
    ``WhenEmptyOrUnderutilized`` (v1beta1: ``WhenUnderutilized``). A budget blocks a reason only
    when it allows zero nodes, has no ``schedule`` (so it is always active) and names that reason
    or none (a budget without reasons applies to all); Drifted is also covered by a scheduled zero
    budget naming it (a maintenance window). Without budgets Karpenter uses 10%."""
    disruption = pool.get(("spec", "disruption"))
    disruption = disruption if isinstance(disruption, dict) else {}
    policy = disruption.get("consolidationPolicy")
    policy = (
        policy
        if isinstance(policy, str)
        else ("WhenUnderutilized" if pool.api_version.endswith("v1beta1") else "WhenEmptyOrUnderutilized")
    )
    never = str(disruption.get("consolidateAfter", "")).strip() == "Never"
    underutilized = policy != "WhenEmpty" and not never
    needed = (["Underutilized"] if underutilized else []) + ["Drifted"]
    covered: set[str] = set()
    scheduled_zero = False
    budgets = disruption.get("budgets")
    budgets = [b for b in budgets if isinstance(b, dict)] if isinstance(budgets, list) else []
    for b in budgets:
        if not _is_zero(b.get("nodes", "10%")):
            continue
        if "schedule" in b:
            scheduled_zero = True
            # a zero budget that names Drifted on a schedule is a deliberate drift window: drift
            # (AMI and security rollouts) happens outside it, at a time the owner chose
            reasons = b.get("reasons")
            if isinstance(reasons, list) and "Drifted" in {str(x) for x in reasons}:
                covered.add("Drifted")
            continue
        reasons = b.get("reasons")
        covered |= set(REASONS) if not isinstance(reasons, list) else {str(x) for x in reasons}
    uncovered = tuple(r for r in needed if r not in covered)
    return Exposure(policy, underutilized, uncovered, bool(budgets), scheduled_zero)


def is_training_pod(t: PodTemplate) -> bool:
    """A pod that runs (part of) a training run to completion: a training-kind template, or a
    Job / Pod with accelerators. Services (Deployment, StatefulSet ...) are excluded even with
    GPUs: they are meant to be rescheduled, and do-not-disrupt on them would pin nodes forever."""
    if t.workload.kind in _NOT_RUN_TO_COMPLETION:
        return False
    return classify(t.workload).is_training  # its launcher too: evicting it ends the job


def hosting_pools(run, t: PodTemplate) -> list[NodePoolView]:
    """Karpenter NodePools of the run that can run ``t``: the run's placement answer (compatible,
    tolerated, an instance type with all its accelerators). Shared per placement: do not modify."""
    where = placement(run, t)
    memo = run.memo("hosting")
    found = memo.get(id(where))
    if found is None:
        found = memo[id(where)] = [p for p in where.hosting if p.resource.group == KARPENTER_GROUP]
    return found


def _hosting_key(run, t: PodTemplate) -> int:
    return id(placement(run, t))


def _hosting_ids(run, t: PodTemplate) -> set[int]:
    memo = run.memo("hosting-ids")
    key = _hosting_key(run, t)
    found = memo.get(key)
    if found is None:
        found = memo[key] = {id(p.resource) for p in hosting_pools(run, t)}
    return found


def _exposure_of(run, pool: Resource) -> Exposure:
    memo = run.memo("exposure")
    found = memo.get(id(pool))
    if found is None:
        found = memo[id(pool)] = exposure(pool)
    return found


def _view(run, pool: Resource) -> NodePoolView:
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


def training_use(run, view: NodePoolView, by_definition: bool = True) -> str | None:
    """Why ``view`` serves training, or None.

    1. A training pod template of the run that requests accelerators lands on it (a CPU-only
       head or launcher without constraints lands on every untainted pool: weak evidence).
    2. Otherwise, if accelerator services (a GPU Deployment ...) land on it, it serves those: no.
    3. Otherwise it is judged by its own definition (:func:`accelerator_pool_reason`), so a lone
       NodePool linted on its own is still checked."""
    services = False
    for t in run.templates:
        if id(view.resource) not in _hosting_ids(run, t):
            continue
        if is_training_pod(t) and t.accelerator_total:
            return f"training pods of {t.display()} land on it"
        if t.accelerator_total and (
            classify(t.workload).cls is WorkloadClass.INFERENCE or (t.workload.kind in SERVICE_KINDS)
        ):
            services = True
    if services or not by_definition:
        return None
    return accelerator_pool_reason(view)


# --------------------------------------------------------------------------------------------
# EML501 nodepool-disruption-budget
# --------------------------------------------------------------------------------------------


#: What Karpenter uses when a NodePool defines no budgets, and the defaulted consolidateAfter of
#: a NodePool without ``spec.disruption`` (facts section 3).
DEFAULT_BUDGET = "10%"
DEFAULT_CONSOLIDATE_AFTER = "0s"
#: The fix blocks drift except in a weekly window (Sunday 00:00-04:00 UTC): a zero budget active
#: for 164 h from Sunday 04:00. A permanent zero budget for Drifted would hold back AMI and security
#: rollouts forever; running jobs are protected by karpenter.sh/do-not-disrupt (EML502).
DRIFT_BLOCK_SCHEDULE = "0 4 * * sun"
DRIFT_BLOCK_DURATION = "164h"


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


def nodepool_disruption_budget(ctx, pool: Resource):
    if pool.group != KARPENTER_GROUP or pool.get(("spec", "replicas")) is not None:
        return  # static NodePools (spec.replicas) do not consolidate
    exp = exposure(pool)
    if not exp.disruptable:
        return
    why = training_use(ctx.run, _view(ctx.run, pool), bool(ctx.options.get("unused-accelerator-pools", True)))
    if why is None:
        return
    reasons = " and ".join(
        {"Underutilized": "consolidate underutilized nodes", "Drifted": "replace drifted nodes"}[r]
        for r in exp.uncovered
    )
    if exp.consolidates_underutilized and "Underutilized" in exp.uncovered:
        path = ("spec", "disruption", "consolidationPolicy")
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
        f"NodePool {pool.name!r} serves training ({why}) but may {reasons} while jobs run: {policy} and {budget}",
        fix=_budget_fix(pool, exp),
    )


# --------------------------------------------------------------------------------------------
# EML502 training-pod-disruptable
# --------------------------------------------------------------------------------------------


def _protected(t: PodTemplate) -> bool:
    """``karpenter.sh/do-not-disrupt`` is "true" or a Go duration (a grace period)."""
    value = t.annotations.get(DO_NOT_DISRUPT)
    if isinstance(value, bool):
        return value
    if not isinstance(value, str):
        return False
    v = value.strip()
    return v.lower() == "true" or parse_go_duration(v) is not None


def _short_protection(t: PodTemplate) -> tuple[float, int] | None:
    """(protected seconds, run bound) when do-not-disrupt is a Go duration shorter than the run's
    known bound (activeDeadlineSeconds): Karpenter honours the duration only for that long after
    the pod starts, so the rest of the run is disruptable. None otherwise (unknown run length:
    the duration is taken as chosen on purpose)."""
    value = t.annotations.get(DO_NOT_DISRUPT)
    protected = parse_go_duration(value.strip()) if isinstance(value, str) else None
    if protected is None:
        return None
    bounds = [seconds for seconds, _, templates in deadlines(t.workload) if any(x is t for x in templates)]
    return (protected, max(bounds)) if bounds and max(bounds) > protected else None


def training_pod_disruptable(ctx, t: PodTemplate):
    # A RayJob submitter only submits and tails the job; the run itself lives in the Ray cluster.
    if not is_training_pod(t) or t.role == "submitter":
        return
    short = _short_protection(t)
    if _protected(t) and short is None:
        return
    memo = ctx.run.memo("exposed")
    key = _hosting_key(ctx.run, t)
    exposed = memo.get(key)
    if exposed is None:
        exposed = [
            (p, _exposure_of(ctx.run, p.resource))
            for p in hosting_pools(ctx.run, t)
            if p.resource.get(("spec", "replicas")) is None
        ]
        exposed = memo[key] = [(p, e) for p, e in exposed if e.disruptable]
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


# --------------------------------------------------------------------------------------------
# EML503 expire-before-finish
# --------------------------------------------------------------------------------------------


def expire_after(pool: Resource) -> tuple[float | None, tuple, bool] | None:
    """(seconds or None for Never, path, defaulted) of the pool's node lifetime; None if unreadable."""
    path = (
        ("spec", "disruption", "expireAfter")
        if pool.api_version.endswith("v1beta1")
        else ("spec", "template", "spec", "expireAfter")
    )
    raw = pool.get(path)
    defaulted = raw is None
    text = DEFAULT_EXPIRE_AFTER if defaulted else raw
    if isinstance(text, str) and text.strip() == "Never":
        return None, path, defaulted
    seconds = parse_go_duration(text)
    return (seconds, path, defaulted) if seconds is not None else None


def _deadline(value: object) -> int | None:
    seconds = parse_int(value)
    return seconds if seconds is not None and seconds > 0 else None


def deadlines(w: Workload) -> Iterator[tuple[int, tuple, list[PodTemplate]]]:
    """(seconds, path, templates bounded by it) for every activeDeadlineSeconds of ``w``."""
    r = w.resource
    job_level = {
        "PyTorchJob": ("spec", "runPolicy", "activeDeadlineSeconds"),
        "TFJob": ("spec", "runPolicy", "activeDeadlineSeconds"),
        "MPIJob": ("spec", "runPolicy", "activeDeadlineSeconds"),
        "RayJob": ("spec", "activeDeadlineSeconds"),
        "CronJob": ("spec", "jobTemplate", "spec", "activeDeadlineSeconds"),
    }.get(w.kind)
    if w.is_batch_job:
        job_level = ("spec", "activeDeadlineSeconds")
    if job_level and (d := _deadline(r.get(job_level))):
        yield d, job_level, list(w.templates)
    if w.kind == "JobSet":
        for t in w.templates:  # path: spec.replicatedJobs[i].template.spec.template
            child = t.path[:-1] + ("activeDeadlineSeconds",)
            if d := _deadline(r.get(child)):
                yield d, child, [t]
    for t in w.templates:
        pod = t.spec_path + ("activeDeadlineSeconds",)
        if d := _deadline(r.get(pod)):
            yield d, pod, [t]


def expire_before_finish(ctx, w: Workload):
    if not w.is_training:
        return
    reported: set[tuple] = set()
    for seconds, path, templates in deadlines(w):
        for t in templates:
            if not is_training_pod(t):
                continue
            for pool in hosting_pools(ctx.run, t):
                key = (path, id(pool.resource))
                if key in reported:
                    continue
                life = expire_after(pool.resource)
                if life is None or life[0] is None:
                    continue
                expire, epath, defaulted = life
                grace = parse_go_duration(pool.resource.get(("spec", "template", "spec", "terminationGracePeriod")))
                if _protected(t):
                    # do-not-disrupt pods hold an expired node's drain until terminationGracePeriod
                    if grace is None:
                        continue
                    expire += grace
                if expire >= seconds:
                    continue
                reported.add(key)
                bound = f"expireAfter {format_seconds(life[0])}{', the default' if defaulted else ''}"
                if _protected(t):
                    bound += f" + terminationGracePeriod {format_seconds(grace)}"
                lifetime = human_duration(expire)
                lifetime = "" if lifetime == format_seconds(expire) and not _protected(t) else f"{lifetime}: "
                yield ctx.report(
                    w.resource,
                    path,
                    f"activeDeadlineSeconds {seconds} ({human_duration(seconds)}) lets the job run longer than "
                    f"NodePool {pool.name!r} keeps a node ({lifetime}{bound}): expiry drains "
                    "the node forcefully, disruption budgets do not apply, and the run is killed",
                    related=(pool.resource.location(epath),),
                )
