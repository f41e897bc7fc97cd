"""EML002 schema-invalid: an object fails the schema of its kind (strict core OpenAPI schemas or the
project's CRD models), or has a kind/apiVersion the target Kubernetes version does not serve."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from eksmllint.checks.input._shared import (
    api_group,
    core_kinds,
    deprecation_status,
    is_core_group,
    schema_version,
)
from eksmllint.core.finding import Finding
from eksmllint.models import validate_crd
from eksmllint.models.common import ModelIssue
from eksmllint.resource import Resource
from eksmllint.schema import supported_versions, validate_core
from eksmllint.schema.core import SchemaIssue
from eksmllint.suggest import closest

if TYPE_CHECKING:
    from eksmllint.core.context import RuleContext


def check(ctx: RuleContext, r: Resource) -> Iterator[Finding]:
    api, kind = r.data.get("apiVersion"), r.data.get("kind")
    if not isinstance(kind, str) or not kind.strip():
        yield ctx.report(r, ("kind",), f"kind must be a non-empty string, got {kind!r}")
        return
    if not isinstance(api, str) or not api.strip():
        yield ctx.report(
            r,
            ("apiVersion",) if "apiVersion" in r.data else (),
            f"{kind} has no apiVersion (every Kubernetes object needs one, e.g. apps/v1)",
        )
        return
    target = ctx.run.settings.kubernetes_version
    version = schema_version(target)
    # The validators only read: they take the loaded YMap/YList (dict/list subclasses) as they are.
    issues: Sequence[SchemaIssue | ModelIssue] | None = validate_core(r.data, version) if version else None
    if issues is None:
        issues = validate_crd(r.data)
    if issues is not None:
        fragment = _pod_template_fragment(r)
        for issue in issues:
            if fragment and issue.message.startswith(_MISSING_CONTAINERS):
                continue  # another tool (Spark) supplies the containers
            yield ctx.report(r, tuple(issue.path), issue.message)
        return
    if deprecation_status(api, kind, target, ctx.platform) is not None or not is_core_group(api_group(api)):
        return  # EML003 or EML004
    served = served_in(api, kind)
    if served:
        yield ctx.report(
            r,
            ("apiVersion",),
            f"{api} {kind} is not served by Kubernetes {target} (it exists in {_span(served)})",
            detail="Set kubernetes-version if you target another release.",
        )
        return
    same_api = {k for a, k in core_kinds(version) if a == api} if version else set()
    if same_api:
        yield ctx.report(r, ("kind",), f"{api} has no kind {kind}{_did_you_mean(kind, same_api)}")
        return
    group = api_group(api)
    apis = sorted({a for a, k in core_kinds(version) if api_group(a) == group and k == kind}) if version else []
    hint = f" ({kind} is served as {', '.join(apis)})" if apis else ""
    yield ctx.report(r, ("apiVersion",), f"Kubernetes {target} does not serve {api}{hint}")


def served_in(api_version: str, kind: str) -> list[str]:
    return [v for v in supported_versions() if (api_version, kind) in core_kinds(v)]


def _span(versions: list[str]) -> str:
    return versions[0] if len(versions) == 1 else f"{versions[0]}-{versions[-1]}"


def _did_you_mean(word: str, choices: set[str]) -> str:
    close = closest(word, choices, cutoff=0.6)
    return f" (did you mean {close}?)" if close else ""


_MISSING_CONTAINERS = 'missing required field "containers"'


def _pod_template_fragment(r: Resource) -> bool:
    """A Pod with no ``containers`` in a file named as a template (``driver-pod-template.yaml``) is
    a pod template another tool merges into the pods it creates (Spark on Kubernetes'
    ``spark.kubernetes.driver.podTemplateFile``): nothing applies it as a Pod, so its missing
    containers are not an error. Its other fields are still validated."""
    if r.kind != "Pod" or "template" not in os.path.basename(r.doc.file.path).lower():
        return False
    spec = r.data.get("spec")
    return isinstance(spec, dict) and "containers" not in spec
