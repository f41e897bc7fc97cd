"""Family 0xx, schema part: EML002 schema-invalid, EML003 api-deprecated, EML004 unknown-kind.

Who answers what, so that one object gets at most one of the three "what is this?" verdicts:

* a removed or deprecated apiVersion (``eksmllint.schema.api_status``) is EML003's, and nothing else
  is said about it (a removed API has no schema to validate against);
* a core Kubernetes kind (``validate_core``) or a kind with a CRD model (``validate_crd``) is
  validated by EML002, one finding per issue;
* an apiVersion of a core API group that the target Kubernetes version does not serve (too new,
  or no such kind at all, e.g. ``apps/v1`` ``Deploymnet``) is an EML002 error too: the API server
  rejects it;
* everything else has no model: EML004 (info), unless its API group is in the rule's
  ``ignore-groups`` option.
"""

from __future__ import annotations

import os
from functools import cache

from eksmllint.core.finding import Fix, SetValue, Severity
from eksmllint.models import KNOWN_CRD_KINDS, model_for, validate_crd
from eksmllint.resource import Resource
from eksmllint.schema import api_status, supported_versions, validate_core

#: Pseudo-kinds of the OpenAPI documents (not objects anyone applies).
_PSEUDO_KINDS = frozenset(
    {
        "DeleteOptions",
        "WatchEvent",
        "Status",
        "APIGroup",
        "APIGroupList",
        "APIResourceList",
        "APIVersions",
        "Eviction",
        "Scale",
        "TokenRequest",
    }
)


def _group(api_version: str) -> str:
    return api_version.split("/", 1)[0] if "/" in api_version else ""


def _minor(v: str) -> tuple[int, int] | None:
    parts = str(v).strip().lstrip("v").split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (ValueError, IndexError):
        return None


@cache
def schema_version(k8s_version: str) -> str | None:
    """The bundled schema version for ``k8s_version``: itself, or the nearest bundled one (a target
    outside the bundled range is validated against its closest neighbour rather than not at all)."""
    versions = supported_versions()
    wanted = _minor(k8s_version)
    if not versions or wanted is None:
        return versions[-1] if versions else None

    def distance(v: str) -> int:
        m = _minor(v) or (0, 0)
        return abs((m[0] - wanted[0]) * 1000 + m[1] - wanted[1])

    return min(versions, key=distance)


@cache
def core_kinds(version: str) -> frozenset[tuple[str, str]]:
    """(apiVersion, kind) pairs the core schemas of ``version`` define.

    Reads the schema module's kind index (``eksmllint.schema.core._kind_index``); if that is ever
    renamed, core-group detection degrades to "unknown" and those objects get EML004 instead."""
    try:
        from eksmllint.schema.core import _kind_index
    except ImportError:  # pragma: no cover - depends on the schema module's internals
        return frozenset()
    return frozenset(k for k in _kind_index(version) if k[1] not in _PSEUDO_KINDS and not k[1].endswith("List"))


@cache
def _groups_of(version: str) -> frozenset[str]:
    return frozenset(_group(api) for api, _ in core_kinds(version))


@cache
def is_core_group(group: str) -> bool:
    """Is ``group`` a Kubernetes API group in any bundled version? Newest first, stopping at the
    first hit: each version's index costs a JSON parse (~10 ms), so "core" is usually one read."""
    return any(group in _groups_of(v) for v in reversed(supported_versions()))


def served_in(api_version: str, kind: str) -> list[str]:
    return [v for v in supported_versions() if (api_version, kind) in core_kinds(v)]


def _span(versions: list[str]) -> str:
    return versions[0] if len(versions) == 1 else f"{versions[0]}-{versions[-1]}"


def _did_you_mean(word: str, choices: set[str]) -> str:
    import difflib  # only for a message

    close = difflib.get_close_matches(word, sorted(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


# --- EML002 schema-invalid ------------------------------------------------------------------


def schema_invalid(ctx, r: Resource):
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
    issues = validate_core(r.data, version) if version else None
    if issues is None:
        issues = validate_crd(r.data)
    if issues is not None:
        fragment = _pod_template_fragment(r)
        for issue in issues:
            if fragment and issue.message.startswith(_MISSING_CONTAINERS):
                continue  # another tool (Spark) supplies the containers
            yield ctx.report(r, tuple(issue.path), issue.message)
        return
    if _status(api, kind, target) is not None or not is_core_group(_group(api)):
        return  # EML003 or EML004
    served = served_in(api, kind)
    if served:
        yield ctx.report(
            r,
            ("apiVersion",),
            f"{api} {kind} is not served by Kubernetes {target} (it exists in {_span(served)}); "
            "set kubernetes-version if you target another release",
        )
        return
    same_api = {k for a, k in core_kinds(version) if a == api} if version else set()
    if same_api:
        yield ctx.report(r, ("kind",), f"{api} has no kind {kind}{_did_you_mean(kind, same_api)}")
        return
    group = _group(api)
    apis = sorted({a for a, k in core_kinds(version) if _group(a) == group and k == kind}) if version else []
    hint = f" ({kind} is served as {', '.join(apis)})" if apis else ""
    yield ctx.report(r, ("apiVersion",), f"Kubernetes {target} does not serve {api}{hint}")


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


def _status(api: str, kind: str, target: str):
    """The deprecation entry that speaks for this object, if any.

    A table entry may cover every kind of an apiVersion (``slinky.slurm.net/v1alpha1``). It does
    not speak for a kind the API group never had: ``SlurmCluster`` is not "deprecated", it does
    not exist, and EML004 says so (mentioning the deprecation)."""
    try:
        st = api_status(api, kind, target)
        if st is None or kind in _modelled_kinds(_group(api)) or not _modelled_kinds(_group(api)):
            return st
        return None if api_status(api, _PROBE_KIND, target) is not None else st
    except ValueError:
        return None


_PROBE_KIND = "\x00no-such-kind"


def _raw_status(api: str, kind: str, target: str):
    try:
        return api_status(api, kind, target)
    except ValueError:
        return None


@cache
def _modelled_kinds(group: str) -> frozenset[str]:
    return frozenset(k for a, k in KNOWN_CRD_KINDS if _group(a) == group)


# --- EML003 api-deprecated ------------------------------------------------------------------


def api_deprecated(ctx, r: Resource):
    if not r.api_version or not r.kind:
        return
    target = ctx.run.settings.kubernetes_version
    st = _status(r.api_version, r.kind, target)
    if st is None:
        return
    where = f"Kubernetes {st.since}" if st.since[:1].isdigit() else st.since
    if st.state == "removed":
        head = f"{r.api_version} {r.kind} is no longer served (removed in {where}; target Kubernetes {target})"
        severity = Severity.ERROR
    else:
        head = f"{r.api_version} {r.kind} is deprecated (since {where})"
        severity = Severity.WARNING
    if st.replacement:
        move = st.replacement + (f" {st.replacement_kind}" if st.replacement_kind else "")
        head += f"; move to {move}"
    note = st.note.strip().rstrip(".")
    message = f"{head}; {note}" if note else head
    fix = None
    if st.mechanical and st.replacement and not st.replacement_kind:
        fix = Fix(f"Change apiVersion to {st.replacement}", (SetValue(("apiVersion",), st.replacement),))
    yield ctx.report(r, ("apiVersion",), message, fix=fix, severity=severity)


# --- EML004 unknown-kind --------------------------------------------------------------------


def _ignored(group: str, patterns) -> bool:
    for p in patterns or ():
        p = str(p).strip().lstrip(".")
        if p and (group == p or group.endswith("." + p)):
            return True
    return False


def unknown_kind(ctx, r: Resource):
    api, kind = r.api_version, r.kind
    if not api or not kind:
        return  # EML002 reports the missing apiVersion/kind
    if model_for(api, kind) is not None or _status(api, kind, ctx.run.settings.kubernetes_version) is not None:
        return
    version = schema_version(ctx.run.settings.kubernetes_version)
    if version and (api, kind) in core_kinds(version):
        return  # a core kind: answered without reading other bundled versions
    group = _group(api)
    if is_core_group(group) or _ignored(group, ctx.options.get("ignore-groups")):
        return
    modelled = _modelled_kinds(group)
    deprecated = _raw_status(api, kind, ctx.run.settings.kubernetes_version)
    if modelled:
        same = {k for a, k in KNOWN_CRD_KINDS if a == api}
        known = sorted(same or modelled)
        notes = [f"it models {', '.join(known[:8])}{' ...' if len(known) > 8 else ''} there"]
        import difflib  # only for a message

        close = difflib.get_close_matches(kind, known, n=1, cutoff=0.6)
        if close:
            notes.append(f"did you mean {close[0]}?")
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
