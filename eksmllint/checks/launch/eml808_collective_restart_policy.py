"""EML808 collective-restart-policy: a collective's failed pod is restarted alone (restartPolicy
OnFailure/Always, or a Job backoffLimit) while its peers wait in the old communicator."""

from __future__ import annotations

import re
from collections.abc import Iterator

from eksmllint.analysis.launch_sites import container_text
from eksmllint.checks.helpers import container_invocations
from eksmllint.core.context import RuleContext
from eksmllint.core.finding import DocPath, Finding
from eksmllint.workload import Workload

DEFAULT_BACKOFF_LIMIT = 6
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
    if w.operator_managed or not w.is_multi_pod:
        return
    if not (w.is_batch_job or w.is_volcano_job or w.kind == "JobSet") or not w.is_collective:
        return
    if w.is_volcano_job and _volcano_restarts_job(w):
        return
    if w.kind == "JobSet" and isinstance(w.resource.get(("spec", "failurePolicy")), dict):
        return
    if _elastic_torchrun(w) or _mpi_launched(w):
        return
    try:
        limit = int(ctx.options["max-backoff-limit"])
    except (TypeError, ValueError):
        limit = 0
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
                f"restartPolicy {policy} restarts one failed container of the {size}-pod collective in place "
                f"while its peers keep waiting in (or time out of) the old communicator; {_remedy(w)}",
            )
            continue
        if w.is_volcano_job:
            continue
        job_path = t.path[:-1]
        job = w.resource.get(job_path)
        if not isinstance(job, dict) or isinstance(job.get("podFailurePolicy"), dict):
            continue
        explicit = _int_or_none(job.get("backoffLimit"))
        backoff = DEFAULT_BACKOFF_LIMIT if "backoffLimit" not in job else explicit
        if backoff is None or backoff <= limit:
            continue
        path = job_path + ("backoffLimit",) if "backoffLimit" in job else job_path
        if path in seen:
            continue
        seen.add(path)
        stated = f"backoffLimit {backoff}" if "backoffLimit" in job else f"backoffLimit (default {backoff})"
        yield ctx.report(
            w.resource,
            path,
            f"{stated}, above max-backoff-limit {limit}, recreates failed pods one at a time ({backoff} times) "
            "while the other pods of the "
            f"{size}-pod collective keep running against a communicator that lost a rank; {_remedy(w)}",
        )


def _remedy(w: Workload) -> str:
    if w.is_volcano_job:
        return "add a job policy {event: PodFailed, action: RestartJob} (and PodEvicted)"
    if w.kind == "JobSet":
        return "set spec.failurePolicy (maxRestarts) so the whole JobSet restarts, with child backoffLimit: 0"
    return (
        "use a podFailurePolicy with restartPolicy: Never, backoffLimit: 0 and an outer retry, "
        "a JobSet with failurePolicy, or elastic torchrun (--max_restarts with c10d rendezvous)"
    )
