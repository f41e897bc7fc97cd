"""EML704 cross-namespace-reference: a pod mounts a PVC or ConfigMap that exists only in another
(explicitly named) namespace."""

from __future__ import annotations

from collections.abc import Iterator

from eksmllint.checks.scheduling._shared import elsewhere, literal_name, optional_volume
from eksmllint.core.context import RuleContext
from eksmllint.core.finding import Finding
from eksmllint.graph import template_references
from eksmllint.workload import PodTemplate


def check(ctx: RuleContext, t: PodTemplate) -> Iterator[Finding]:
    """EML704: a PVC / ConfigMap the pod uses exists only in another (explicit) namespace."""
    ns = t.resource.namespace
    if ns is None:
        return  # manifests without a namespace are applied with -n: nothing to compare
    for kind, raw_name, path in template_references(t):
        name = literal_name(raw_name)
        if kind not in ("PersistentVolumeClaim", "ConfigMap") or name is None or optional_volume(t, path):
            continue
        if ctx.run.find(kind, name, ns):
            continue
        others = elsewhere(ctx.run, kind, name, ns)
        if not others:
            continue
        spaces = ", ".join(sorted({x.namespace for x in others if x.namespace}))
        yield ctx.report(
            t.resource,
            path,
            f"{kind} {name!r} exists only in namespace {spaces}, but the pod runs in namespace {ns}",
            detail=f"Pods can only use {kind}s of their own namespace.",
            related=[x.location(("metadata", "namespace")) for x in others[:3]],
        )
