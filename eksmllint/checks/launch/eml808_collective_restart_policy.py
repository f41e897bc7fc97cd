"""EML808 collective-restart-policy: a collective's failed pod is restarted alone (restartPolicy
OnFailure/Always, a Job backoffLimit, a LeaderWorkerSet restartPolicy None) while its peers wait in
the old communicator, or a JobSet restarts on every failure without limit."""

from __future__ import annotations

import re
from collections.abc import Iterator

from eksmllint.analysis.launch_sites import container_text
from eksmllint.checks.helpers import container_invocations, sentences
from eksmllint.core.context import RuleContext
from eksmllint.core.finding import DocPath, Finding, format_path
from eksmllint.workload import PodTemplate, Workload

DEFAULT_BACKOFF_LIMIT = 6
#: JobSet failurePolicy actions that restart without counting toward maxRestarts (jobset_types.go).
_UNCOUNTED_RESTARTS = frozenset({"RestartJobSetAndIgnoreMaxRestarts", "RestartJobAndIgnoreMaxRestarts"})
#: LeaderWorkerSet restart policies that restart a failed pod alone (``Default`` is the deprecated name of
#: ``None``); the default, RecreateGroupOnPodRestart, and RecreateGroupAfterStart recreate the whole group.
_LWS_SINGLE_POD = frozenset({"None", "Default"})
_RESTART_EVENTS = frozenset({"PodFailed", "PodEvicted", "*"})


def _volcano_restarts_job(w: Workload) -> bool:
    policies: list = []
    p = w.resource.get(("spec", "policies"))
    if isinstance(p, list):
        policies += p
    tasks = w.resource.get(("spec", "tasks"))
    if isinstance(tasks, list):
        for task in tasks:
            if isinstance(task, dict) and isinstance(task.get("policies"), list):
                policies += task["policies"]
    for pol in policies:
        if not isinstance(pol, dict) or pol.get("action") != "RestartJob":
            continue
        events = set()
        if isinstance(pol.get("event"), str):
            events.add(pol["event"])
        if isinstance(pol.get("events"), list):
            events.update(str(e) for e in pol["events"])
        if events & _RESTART_EVENTS:
            return True
    return False


def _elastic_torchrun(w: Workload) -> bool:
    for t in w.collective_templates:
        for c in t.containers:
            for inv in container_invocations(c):
                if inv.launcher != "torchrun":
                    continue
                restarts = inv.option("max_restarts")
                nn = inv.option("nnodes")
                if (restarts is not None and (restarts.int_value() or 0) > 0) or (
                    nn is not None and nn.resolved is not None and ":" in nn.resolved
                ):
                    return True
    return False


_MPI_WORDS = re.compile(r"\b(mpirun|mpiexec|horovodrun)\b")


def _mpi_launched(w: Workload) -> bool:
    """One pod starts every rank with mpirun over ssh (Volcano ssh/svc plugins, an MPI launcher
    task): restarting that pod re-runs mpirun, which restarts the whole collective."""
    return any(
        _MPI_WORDS.search(container_text(c)) or any(i.launcher == "mpirun" for i in container_invocations(c))
        for t in w.templates
        for c in t.containers
    )


def _int_or_none(v: object) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def check(ctx: RuleContext, w: Workload) -> Iterator[Finding]:
    if w.operator_managed or not w.is_multi_pod or not w.is_collective:
        return
    if w.kind == "LeaderWorkerSet":
        yield from _lws_policy(ctx, w)
        return
    jobset = _jobset_spec(w)
    if not (w.is_batch_job or w.is_volcano_job or jobset is not None):
        return
    policy_path = (*jobset, "failurePolicy") if jobset is not None else None
    failure_policy = w.resource.get(policy_path) if policy_path is not None else None
    if isinstance(failure_policy, dict) and policy_path is not None:
        if failure_policy.get("restartStrategy") == "InPlaceRestart":
            return  # the JobSet restarts every pod of the set together, in place
        yield from _unbounded_rule(ctx, w, failure_policy, policy_path)
    if w.is_volcano_job and _volcano_restarts_job(w):
        return
    if _elastic_torchrun(w) or _mpi_launched(w):
        return
    try:
        limit = int(ctx.options["max-backoff-limit"])
    except (TypeError, ValueError):
        limit = 0
    if isinstance(failure_policy, dict) and policy_path is not None:
        yield from _retries_before_the_jobset_restarts(ctx, w, limit, policy_path)
        return
    size = w.collective_size
    seen: set[DocPath] = set()
    for t in w.collective_templates:
        policy = t.spec.get("restartPolicy")
        if policy in ("OnFailure", "Always"):
            path = t.spec_path + ("restartPolicy",)
            if path in seen:
                continue
            seen.add(path)
            yield ctx.report(
                w.resource,
                path,
                f"restartPolicy {policy} restarts one failed container of the {size}-pod collective in place",
                detail=sentences(f"its peers keep waiting in (or time out of) the old communicator; {_remedy(w)}"),
            )
            continue
        if w.is_volcano_job:
            continue
        retries = _pod_retries(w, t, limit)
        if retries is None or retries[0] in seen:
            continue
        path, backoff, stated = retries
        seen.add(path)
        yield ctx.report(
            w.resource,
            path,
            f"{stated}, above max-backoff-limit {limit}, recreates failed pods of the collective one at a time",
            detail=sentences(
                f"up to {backoff} times, while the other pods of the {size}-pod collective keep running against a "
                f"communicator that lost a rank; {_remedy(w)}"
            ),
        )


def _pod_retries(w: Workload, t: PodTemplate, limit: int) -> tuple[DocPath, int, str] | None:
    """Where the Job of template ``t`` retries failed pods more than ``limit`` times (path, count,
    how it is stated); None without such retries or with a podFailurePolicy deciding them."""
    job_path = t.path[:-1]
    job = w.resource.get(job_path)
    if not isinstance(job, dict) or isinstance(job.get("podFailurePolicy"), dict):
        return None
    backoff = DEFAULT_BACKOFF_LIMIT if "backoffLimit" not in job else _int_or_none(job.get("backoffLimit"))
    if backoff is None or backoff <= limit:
        return None
    if "backoffLimit" in job:
        return job_path + ("backoffLimit",), backoff, f"backoffLimit {backoff}"
    return job_path, backoff, f"backoffLimit (default {backoff})"


def _retries_before_the_jobset_restarts(ctx: RuleContext, w: Workload, limit: int, at: DocPath) -> Iterator[Finding]:
    """A JobSet failurePolicy acts when a child Job has failed; until its backoffLimit is spent the
    Job retries failed pods (or, with restartPolicy OnFailure, containers) one at a time."""
    seen: set[DocPath] = set()
    for t in w.collective_templates:
        retries = _pod_retries(w, t, limit)
        if retries is None or retries[0] in seen:
            continue
        path, backoff, stated = retries
        seen.add(path)
        how = (
            "restarts a failed container in place (restartPolicy OnFailure)"
            if t.spec.get("restartPolicy") == "OnFailure"
            else "recreates a failed pod alone"
        )
        yield ctx.report(
            w.resource,
            path,
            f"{stated}, above max-backoff-limit {limit}: the child Job {how} before the JobSet restarts",
            detail=f"{format_path(at)} acts on the whole JobSet only after a child Job fails, and this child Job "
            f"first {how} up to {backoff} times while the other pods of the {w.collective_size}-pod collective wait "
            "in a communicator that lost a rank; set backoffLimit: 0 so the first failure fails the child Job and "
            "the failurePolicy restarts (or fails) the JobSet as a whole.",
        )


def _jobset_spec(w: Workload) -> DocPath | None:
    """Where the workload's JobSet spec is (a JobSet's own, a training runtime's template; kinds
    table ``jobset-spec``); None when it is no JobSet."""
    return w.row.jobset_spec if w.row is not None else None


def _unbounded_rule(ctx: RuleContext, w: Workload, failure_policy: dict, at: DocPath) -> Iterator[Finding]:
    """The failurePolicy rule that handles every child Job failure (no reason or message filter), when
    it restarts without counting toward maxRestarts: a crash in the training code loops forever."""
    rules = failure_policy.get("rules")
    for i, rule in enumerate(rules if isinstance(rules, list) else []):
        if not isinstance(rule, dict) or rule.get("onJobFailureReasons") or rule.get("onJobFailureMessagePatterns"):
            continue
        action = rule.get("action")
        if action in _UNCOUNTED_RESTARTS:
            name = f"rule {rule['name']!r}" if isinstance(rule.get("name"), str) else f"rule {i}"
            yield ctx.report(
                w.resource,
                (*at, "rules", i, "action"),
                f"failurePolicy {name} ({action}) matches every failure: the collective may restart forever",
                detail=f"It has no onJobFailureReasons or onJobFailureMessagePatterns: every child Job failure, a "
                f"crash in the training code included, restarts the {w.collective_size}-pod collective without "
                "counting toward maxRestarts, so a failure that repeats restarts it forever; limit the rule to "
                "infrastructure failures (e.g. onJobFailureReasons: [PodFailurePolicy] with a child "
                "podFailurePolicy that fails the Job on DisruptionTarget).",
            )
            return
        if not rule.get("targetReplicatedJobs"):
            return  # this rule decides every failure of every replicated job


def _lws_policy(ctx: RuleContext, w: Workload) -> Iterator[Finding]:
    path = ("spec", "leaderWorkerTemplate", "restartPolicy")
    policy = w.resource.get(path)
    if policy in _LWS_SINGLE_POD:
        yield ctx.report(
            w.resource,
            path,
            f"restartPolicy {policy} restarts a failed pod of a {w.collective_size}-pod group alone",
            detail="StatefulSet semantics: the group's other pods keep waiting in the old communicator; use "
            "RecreateGroupOnPodRestart (the default), which recreates the whole group.",
        )


def _remedy(w: Workload) -> str:
    if w.is_volcano_job:
        return "add a job policy {event: PodFailed, action: RestartJob} (and PodEvicted)"
    jobset = _jobset_spec(w)
    if jobset is not None:
        return f"set {format_path((*jobset, 'failurePolicy'))} (maxRestarts) so the whole JobSet restarts, with child backoffLimit: 0"
    return (
        "use a podFailurePolicy with restartPolicy: Never, backoffLimit: 0 and an outer retry, "
        "a JobSet with failurePolicy, or elastic torchrun (--max_restarts with c10d rendezvous)"
    )
