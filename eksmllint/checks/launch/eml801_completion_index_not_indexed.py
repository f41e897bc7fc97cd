"""EML801 completion-index-not-indexed: a Job reads its completion index (JOB_COMPLETION_INDEX or
the job-completion-index annotation) while it is not Indexed, so every pod gets an empty rank."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from eksmllint.checks.helpers import sentences
from eksmllint.checks.launch._shared import field_path
from eksmllint.core.context import RuleContext
from eksmllint.core.finding import DocPath, Finding, Fix, SetValue
from eksmllint.resource import walk
from eksmllint.workload import PodTemplate, Workload

COMPLETION_INDEX_ENV = "JOB_COMPLETION_INDEX"
COMPLETION_INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"
_INDEX_REF = re.compile(r"\$\(JOB_COMPLETION_INDEX\)|\$\{?JOB_COMPLETION_INDEX\b")


@dataclass(frozen=True)
class _JobSpec:
    """A batch Job spec inside a resource: ``path`` of the Job's ``spec`` mapping."""

    path: DocPath
    spec: dict
    what: str
    default_indexed: bool = False


def _job_specs(w: Workload) -> list[tuple[_JobSpec, PodTemplate]]:
    r = w.resource
    out = []
    for t in w.templates:
        spec_path = t.path[:-1]  # the Job spec holding the pod template
        if w.is_batch_job:
            what = f"Job {r.name!r}"
            default = False
        elif w.kind == "CronJob":
            what = f"the jobTemplate of CronJob {r.name!r}"
            default = False
        elif w.kind == "JobSet":
            what = f"replicated job {t.role.split(':', 1)[-1]!r} of JobSet {r.name!r}"
            default = True  # the JobSet webhook defaults child Jobs to Indexed
        else:
            continue
        spec = r.get(spec_path)
        if isinstance(spec, dict):
            out.append((_JobSpec(spec_path, spec, what, default), t))
    return out


def _index_uses(t: PodTemplate) -> list[tuple[DocPath, str]]:
    """Where a pod template reads the completion index: (path, what) in document order."""
    uses: list[tuple[DocPath, str]] = []
    for c in t.init_containers + t.containers:
        literal = any(e.get("name") == COMPLETION_INDEX_ENV and "valueFrom" not in e for e in c.env_list)
        for i, e in enumerate(c.env_list):
            fp = field_path(e)
            if fp is not None and COMPLETION_INDEX_ANNOTATION in fp:
                uses.append(
                    (
                        c.path + ("env", i, "valueFrom", "fieldRef", "fieldPath"),
                        f"env {e.get('name')!r} of container {c.name!r} reads the {COMPLETION_INDEX_ANNOTATION} annotation",
                    )
                )
            elif not literal and isinstance(e.get("value"), str) and _INDEX_REF.search(e["value"]):
                uses.append(
                    (
                        c.path + ("env", i, "value"),
                        f"env {e.get('name')!r} of container {c.name!r} uses {COMPLETION_INDEX_ENV}",
                    )
                )
        if literal:
            continue
        for key in ("command", "args"):
            items = c.data.get(key)
            if isinstance(items, list):
                for i, item in enumerate(items):
                    if isinstance(item, str) and _INDEX_REF.search(item):
                        uses.append(
                            (c.path + (key, i), f"container {c.name!r} uses {COMPLETION_INDEX_ENV} in its {key}")
                        )
    for i, v in t.volumes:
        for path, value in walk(v.get("downwardAPI"), ("volumes", i, "downwardAPI")):
            if path and path[-1] == "fieldPath" and isinstance(value, str) and COMPLETION_INDEX_ANNOTATION in value:
                uses.append(
                    (
                        t.spec_path + path,
                        f"downwardAPI volume {v.get('name')!r} exposes the {COMPLETION_INDEX_ANNOTATION} annotation",
                    )
                )
    return uses


def check(ctx: RuleContext, w: Workload) -> Iterator[Finding]:
    for job, t in _job_specs(w):
        mode = job.spec.get("completionMode")
        if mode == "Indexed" or (mode is None and job.default_indexed):
            continue
        uses = _index_uses(t)
        if not uses:
            continue
        completions = job.spec.get("completions")
        n = (
            completions
            if isinstance(completions, int) and not isinstance(completions, bool) and completions > 0
            else None
        )
        fix = None
        if n is not None:
            fix = Fix(
                f"Set completionMode: Indexed on {job.what}", (SetValue(job.path + ("completionMode",), "Indexed"),)
            )
            how = "set completionMode: Indexed"
        else:
            how = "set completionMode: Indexed (which needs spec.completions, e.g. equal to parallelism)"
        path, first = uses[0]
        more = f" (+{len(uses) - 1} more use{'s' if len(uses) > 2 else ''})" if len(uses) > 1 else ""
        mode_text = "completionMode NonIndexed" if mode else "no completionMode (NonIndexed)"
        yield ctx.report(
            w.resource,
            path,
            f"{first}{more}, but {job.what} has {mode_text}",
            detail=sentences(f"the index is only set for Indexed Jobs, so every pod gets an empty rank; {how}"),
            fix=fix,
        )
