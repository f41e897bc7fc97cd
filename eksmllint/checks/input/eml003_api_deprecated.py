"""EML003 api-deprecated: the object's apiVersion is deprecated (warning) or no longer served
(error) for the target Kubernetes version, or for the platform release of a CRD project that
decides it (Kueue), per eksmllint's deprecation table (eksmllint.schema.deprecations)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from eksmllint.checks.input._shared import deprecation_status
from eksmllint.core.finding import Finding, Fix, SetValue, Severity
from eksmllint.resource import Resource

if TYPE_CHECKING:
    from eksmllint.core.context import RuleContext


def check(ctx: RuleContext, r: Resource) -> Iterator[Finding]:
    if not r.api_version or not r.kind:
        return
    target = ctx.run.settings.kubernetes_version
    st = deprecation_status(r.api_version, r.kind, target, ctx.platform)
    if st is None:
        return
    where = f"Kubernetes {st.since}" if st.since[:1].isdigit() else st.since
    if st.state == "removed":
        scope = "" if st.assumed else f"; target Kubernetes {target}"  # a project release decided it
        head = f"{r.api_version} {r.kind} is no longer served (removed in {where}{scope})"
        severity = Severity.ERROR
    else:
        head = f"{r.api_version} {r.kind} is deprecated (since {where})"
        severity = Severity.WARNING
    move = st.replacement and "Move to " + st.replacement + (f" {st.replacement_kind}" if st.replacement_kind else "")
    details = [part for part in (move, st.note.strip().rstrip("."), st.assumed and f"judged for {st.assumed}") if part]
    fix = None
    if st.mechanical and st.replacement and not st.replacement_kind:
        fix = Fix(f"Change apiVersion to {st.replacement}", (SetValue(("apiVersion",), st.replacement),))
    detail = "; ".join(details) + "." if details else None
    yield ctx.report(r, ("apiVersion",), head, fix=fix, severity=severity, detail=detail)
