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
from eksmllint.core.finding import Finding, format_path
from eksmllint.landing import unjudged_form
from eksmllint.models import KNOWN_CRD_KINDS, model_for
from eksmllint.platform.kinds import pod_template_paths, row_for
from eksmllint.resource import Resource
from eksmllint.schema import ApiStatus, api_status
from eksmllint.suggest import closest
from eksmllint.workload import iter_containers

if TYPE_CHECKING:
    from eksmllint.core.context import RuleContext
    from eksmllint.platform import Platform


def check(ctx: RuleContext, r: Resource) -> Iterator[Finding]:
    if (unjudged := unjudged_form(ctx.run, r)) is not None:  # a provisioner form without a model
        yield ctx.report(r, *unjudged)
        return
    api, kind = r.api_version, r.kind
    if api == "v1" and kind == "ConfigMap":
        yield from _unmodelled_configs(ctx, r)
        return
    if not api or not kind:
        return  # EML002 reports the missing apiVersion/kind
    yield from _unread_commands(ctx, r)
    row = row_for(r.group, kind)
    if row is not None and row.runtime_ref is not None and ctx.run.own_workload(r) is None:
        yield from _runtime_not_in_run(ctx, r, row.runtime_ref)
    target = ctx.run.settings.kubernetes_version
    if model_for(api, kind) is not None or deprecation_status(api, kind, target, ctx.platform) is not None:
        return  # a modelled kind with pod templates has a kinds row (tests/unit/platform/test_kinds.py)
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
        message = f"eksmllint has no model for {kind} in {api}" + (f"; did you mean {close[0]}?" if close else "")
        detail = f"{'; '.join(notes)}. The object is loaded into the graph but not validated."
    else:
        message = f"eksmllint has no model for {api} {kind}"
        detail = "The object is loaded into the graph but its fields are not validated."
    if row is None and (paths := pod_template_paths(r.data)):
        message += f"; its pod templates {_at(paths)} are not judged"
        detail += f" No rule judges its pod templates: eksmllint's kinds table has no row for {kind}."
    yield ctx.report(r, ("kind",), message, detail=detail)


def _unread_commands(ctx: RuleContext, r: Resource) -> Iterator[Finding]:
    """A container command too large for the launch and command readers (README "Limits")."""
    w = ctx.run.workload_for(r)
    for c in iter_containers(w.templates) if w is not None else ():
        if why := c.command_unread:
            key = "command" if isinstance(c.data.get("command"), list) else "args"
            yield ctx.report(
                r,
                c.path + (key,),
                f"not judged: the command of container {c.name!r} holds {why}",
                detail="The launch and precision rules do not read a command this large; nothing is concluded from it.",
            )


def _at(paths: list) -> str:
    shown = ", ".join(format_path(p) or "(the object)" for p in paths[:3])
    return f"at {shown}{' ...' if len(paths) > 3 else ''}"


def _runtime_not_in_run(ctx: RuleContext, r: Resource, ref_path: tuple) -> Iterator[Finding]:
    """A TrainJob whose runtime the run does not hold: its pods are not judged (the runtime is
    usually installed cluster-wide; lint it with ``--context`` to judge them)."""
    ref = r.get(ref_path)
    if not isinstance(ref, dict) or not isinstance(ref.get("name"), str):
        return  # EML002: the reference itself is broken
    kind = ref.get("kind") or "ClusterTrainingRuntime"
    copies = ctx.run.find(kind, ref["name"], namespace=r.namespace if kind == "TrainingRuntime" else None)
    name = ref["name"]
    message = (
        f"not judged: {len(copies)} different {kind}s are named {name!r}"
        if copies
        else f"not judged: {kind} {name!r}, which runs its pods, is not in the run"
    )
    detail = f"The pods of this {r.kind} come from its runtime; " + (
        "which copy the cluster holds is unknown." if copies else "lint it with the runtime (--context)."
    )
    yield ctx.report(r, ref_path, message, detail=detail)


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


def _unmodelled_configs(ctx: RuleContext, cm: Resource) -> Iterator[Finding]:
    """A training config eksmllint recognises but does not read (platform/configs.yaml): said once,
    so its silence is not taken for a clean bill."""
    from eksmllint.analysis.configs import unmodelled_configmap_keys
    from eksmllint.platform.configs import config_forms

    read = [f.label for f in config_forms() if f.modelled]
    for key, form in unmodelled_configmap_keys(cm):
        yield ctx.report(
            cm,
            ("data", key),
            f"not judged: key {key} holds a config for {form.label}, which eksmllint does not read",
            detail=f"The precision, batch and checkpoint rules read {', '.join(read[:-1])} and {read[-1]} configs only.",
        )
