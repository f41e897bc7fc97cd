"""EML004 unknown-kind: a kind eksmllint has no model for (loaded into the graph, not validated),
with the modelled kinds of its API group as suggestions; ecosystem groups in ``ignore-groups`` are
skipped."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from eksmllint.checks.input._shared import (
    api_group,
    core_kinds,
    deprecation_status,
    is_core_group,
    modelled_kinds,
    schema_version,
)
from eksmllint.core.finding import Finding
from eksmllint.models import KNOWN_CRD_KINDS, model_for
from eksmllint.resource import Resource
from eksmllint.schema import ApiStatus, api_status
from eksmllint.suggest import closest

if TYPE_CHECKING:
    from eksmllint.core.context import RuleContext
    from eksmllint.platform import Platform


def check(ctx: RuleContext, r: Resource) -> Iterator[Finding]:
    api, kind = r.api_version, r.kind
    if not api or not kind:
        return  # EML002 reports the missing apiVersion/kind
    target = ctx.run.settings.kubernetes_version
    if model_for(api, kind) is not None or deprecation_status(api, kind, target, ctx.platform) is not None:
        return
    version = schema_version(target)
    if version and (api, kind) in core_kinds(version):
        return  # a core kind: answered without reading other bundled versions
    group = api_group(api)
    if is_core_group(group) or _ignored(group, ctx.options.get("ignore-groups")):
        return
    modelled = modelled_kinds(group)
    deprecated = _raw_status(api, kind, target, ctx.platform)
    if modelled:
        same = {k for a, k in KNOWN_CRD_KINDS if a == api}
        known = sorted(same or modelled)
        notes = [f"it models {', '.join(known[:8])}{' ...' if len(known) > 8 else ''} there"]
        if close := closest(kind, known, cutoff=0.6):
            notes.append(f"did you mean {close}?")
        if deprecated is not None and deprecated.replacement:
            notes.append(f"{api} itself is {deprecated.state}, use {deprecated.replacement}")
        message = (
            f"eksmllint has no model for {kind} in {api} ({'; '.join(notes)}), so this object is "
            "loaded into the graph but not validated"
        )
    else:
        message = (
            f"eksmllint has no model for {api} {kind}; it is loaded into the graph but its fields are not validated"
        )
    yield ctx.report(r, ("kind",), message)


def _raw_status(api: str, kind: str, target: str, platform: Platform) -> ApiStatus | None:
    try:
        return api_status(api, kind, target, platform)
    except ValueError:
        return None


def _ignored(group: str, patterns: Iterable[object] | None) -> bool:
    for p in patterns or ():
        p = str(p).strip().lstrip(".")
        if p and (group == p or group.endswith("." + p)):
            return True
    return False
