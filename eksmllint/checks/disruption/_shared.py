"""Helpers of the disruption family (5xx) used by several of its rules.

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

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass

from eksmllint.analysis.placement import placement
from eksmllint.analysis.workload_class import classify
from eksmllint.core.context import KARPENTER_GROUP, LintRun
from eksmllint.lazy import kept_on
from eksmllint.platform import Platform
from eksmllint.quantity import parse_int
from eksmllint.resource import Resource
from eksmllint.scheduling import NodePoolView
from eksmllint.workload import PodTemplate, Workload

DO_NOT_DISRUPT = "karpenter.sh/do-not-disrupt"
#: The Karpenter release that reads a Go duration in do-not-disrupt (kubernetes-sigs/karpenter#2874,
#: v1.12.0); earlier releases protect only pods whose value is "true".
DURATION_RELEASE = "1.12"
#: Kueue's maximum execution time: the Workload is deactivated after running this many seconds.
KUEUE_MAX_EXEC_TIME = "kueue.x-k8s.io/max-exec-time-seconds"
#: Disruption reasons a budget can name; "Empty" is harmless for training (no pod runs there).
REASONS = ("Underutilized", "Empty", "Drifted")

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
# NodePool disruption analysis (EML501 and EML502)
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
    if t.workload.has("service") or t.workload.has("per-node"):
        return False  # meant to be moved around: do-not-disrupt on them would pin nodes
    return classify(t.workload).is_training  # its launcher too: evicting it ends the job


def hosting_pools(run: LintRun, t: PodTemplate) -> list[NodePoolView]:
    """Karpenter NodePools of the run that can run ``t``: the run's placement answer (compatible,
    tolerated, an instance type with all its accelerators). Shared per placement: do not modify."""
    return run.once(
        "hosting",
        placement(run, t),
        lambda _run, where: [p for p in where.hosting if p.resource.group == KARPENTER_GROUP],
    )


# --------------------------------------------------------------------------------------------
# Protection and run length (EML502 and EML503)
# --------------------------------------------------------------------------------------------


def protection(t: PodTemplate, platform: Platform) -> float | None:
    """Seconds ``karpenter.sh/do-not-disrupt`` protects a pod of ``t`` from its start: ``inf`` for
    "true"; a Go duration ("30m") from Karpenter 1.12 on, which honours it that long; None when it
    does not protect (absent, "false", or a duration before 1.12, which only compared the value
    with "true")."""
    value = t.annotations.get(DO_NOT_DISRUPT)
    if value is True or (isinstance(value, str) and value.strip().lower() == "true"):
        return math.inf
    seconds = annotated_duration(t)
    return seconds if seconds is not None and platform.at_least("karpenter", DURATION_RELEASE) else None


def protected_for_run(t: PodTemplate, platform: Platform) -> bool:
    """``karpenter.sh/do-not-disrupt`` protects the pods of ``t`` for their whole declared run (or
    for a duration chosen for a run of unknown length)."""
    protected = protection(t, platform)
    bound = run_bound(t)
    return protected is not None and (bound is None or bound[0] <= protected)


def annotated_duration(t: PodTemplate) -> float | None:
    """The Go duration ``karpenter.sh/do-not-disrupt`` is set to, or None."""
    value = t.annotations.get(DO_NOT_DISRUPT)
    return parse_go_duration(value.strip()) if isinstance(value, str) else None


def _deadline(value: object) -> int | None:
    seconds = parse_int(value)
    return seconds if seconds is not None and seconds > 0 else None


def deadlines(w: Workload) -> Iterator[tuple[int, tuple, list[PodTemplate]]]:
    """(seconds, path, templates bounded by it) for every declared run length of ``w``: the kind's
    ``deadline`` and each template's (kinds table), each pod's ``activeDeadlineSeconds`` and Kueue's
    ``kueue.x-k8s.io/max-exec-time-seconds`` label. The path's last key names the bound in messages."""
    r = w.resource
    row = w.row
    job_level = row.deadline if row is not None else None
    if job_level and (d := _deadline(r.get(job_level))):
        yield d, job_level, list(w.templates)
    for t in w.templates:  # a JobSet's child Job: spec.replicatedJobs[i].template.spec
        spec = t.spec_row
        if spec is not None and spec.deadline and spec.template and t.path[-len(spec.template) :] == spec.template:
            child = t.path[: -len(spec.template)] + spec.deadline
            if d := _deadline(r.get(child)):
                yield d, child, [t]
    for t in w.templates:
        pod = t.spec_path + ("activeDeadlineSeconds",)
        if d := _deadline(r.get(pod)):
            yield d, pod, [t]
    if d := _deadline(r.labels.get(KUEUE_MAX_EXEC_TIME)):
        yield d, ("metadata", "labels", KUEUE_MAX_EXEC_TIME), list(w.templates)


def run_bound(t: PodTemplate) -> tuple[int, tuple] | None:
    """(seconds, path) of the shortest declared run length that bounds the pods of ``t``: a pod
    outlives none of the bounds that apply to it (the first on a tie); None when none does."""
    return _run_bounds(t.workload).get(id(t))


@kept_on
def _run_bounds(w: Workload) -> dict[int, tuple[int, tuple]]:
    """:func:`run_bound` of every template of ``w`` (by id), from one pass over its deadlines."""
    best: dict[int, tuple[int, tuple]] = {}
    for seconds, path, templates in deadlines(w):
        for t in templates:
            if id(t) not in best or seconds < best[id(t)][0]:  # the first on a tie
                best[id(t)] = (seconds, path)
    return best
