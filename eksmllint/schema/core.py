"""EML002 for core Kubernetes kinds: strict OpenAPI validation, fast.

The schemas are the ones bundled with the ``kubernetes-validate`` package
(``kubernetes-json-schema/v1.XX.0-local-strict``: every object schema carries
``additionalProperties: false``, so unknown fields are errors, as with
``kubectl apply --validate=strict``).

Why not ``kubernetes_validate.validate``?  It re-reads and re-parses the JSON
schema files and builds a new ``jsonschema`` validator for every document
(about 6 ms a document).  Why not ``fastjsonschema``?  It handles the ``$ref``s
once they are inlined into one root with local ``$defs`` (0.065 ms/doc), but
compiling the ~700 KB of Python it generates for a Job or Deployment takes
0.2 s *per kind*, and it stops at the first error.  Instead this module
compiles the schema into a tree of small closures.  That works because the
Kubernetes schemas use a tiny keyword set (``type``, ``properties``,
``additionalProperties``, ``items``, ``required``, ``enum``, ``$ref`` and a
type-only ``oneOf`` for IntOrString/Quantity); anything else makes the
compiler refuse, and that kind falls back to a reused ``jsonschema``
validator.  The closures for one definition (PodSpec, ObjectMeta, ...) are
shared by every kind of the same Kubernetes version, so warm-up costs a few
milliseconds, a Job validates in well under 0.1 ms, and every issue is
collected with its path.

Kind lookup: ``kubernetes_validate`` maps ``apiVersion``/``kind`` to a file
name by keeping only the first DNS label of the group
(``batch.volcano.sh/v1alpha1`` -> ``job-batch-v1alpha1.json``), which can
confuse a CRD with a core kind.  Here the exact group/version/kind comes
from each definition's ``x-kubernetes-group-version-kind``, so only real core
kinds are validated and everything else returns ``None``.

Deliberate differences from plain JSON Schema, to match what the API server
does with YAML that PyYAML loaded: a float such as ``3.0`` is *not* an
integer (Go refuses to decode it into an int32), ``int32``/``int64`` formats
are range-checked, ``null`` satisfies IntOrString and Quantity (the API
server treats it as unset; the bundled ``oneOf`` would reject it because it
matches both branches), and ``datetime``/``date`` values from unquoted YAML
timestamps count as strings.  A template placeholder (``$NUM_NODES``, ``PLACEHOLDER_X``,
``<your-value>``; :mod:`eksmllint.placeholders`) in a number, boolean or enum slot is an
unknown value, not an error.
"""

from __future__ import annotations

import datetime as _dt
import functools
import json
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib import resources
from typing import Any

from eksmllint.placeholders import is_placeholder
from eksmllint.suggest import closest

__all__ = ["MAX_ISSUES", "SchemaIssue", "supported_versions", "validate_core"]

#: Most issues reported for one document; the last slot then says more were cut.
MAX_ISSUES = 20

_SCHEMA_PACKAGE = "kubernetes_validate"
_SCHEMA_DIR = "kubernetes-json-schema"
_DIR_RE = re.compile(r"^v(\d+)\.(\d+)\.0-local-strict$")
_VERSION_RE = re.compile(r"^v?(\d+)\.(\d+)(?:\.\d+)?$")


@dataclass(frozen=True)
class SchemaIssue:
    """One schema violation.

    ``path`` locates the offending value inside the document (the unknown
    key itself for unknown fields, the parent object for a missing required
    field); list indices are ``int``, mapping keys ``str``.
    """

    path: tuple[str | int, ...]
    message: str


# ---------------------------------------------------------------------------
# versions and schema files
# ---------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _schema_root() -> Any:
    # find_spec locates the package without importing it (importing kubernetes_validate pulls in
    # jsonschema: ~0.1 s of every run's start-up); fall back to importlib.resources otherwise.
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec(_SCHEMA_PACKAGE)
    locations = list(spec.submodule_search_locations or ()) if spec else []
    if locations and (Path(locations[0]) / _SCHEMA_DIR).is_dir():
        return Path(locations[0]) / _SCHEMA_DIR
    return resources.files(_SCHEMA_PACKAGE).joinpath(_SCHEMA_DIR)


@functools.lru_cache(maxsize=1)
def _version_dirs() -> dict[str, str]:
    """Map "1.33" to its strict schema directory name."""
    found: dict[tuple[int, int], str] = {}
    try:
        for entry in _schema_root().iterdir():
            m = _DIR_RE.match(entry.name)
            if m:
                found[(int(m.group(1)), int(m.group(2)))] = entry.name
    except (FileNotFoundError, ModuleNotFoundError):  # pragma: no cover - broken install
        return {}
    return {f"{major}.{minor}": found[(major, minor)] for major, minor in sorted(found)}


def supported_versions() -> list[str]:
    """Kubernetes minor versions with bundled strict schemas, oldest first."""
    return list(_version_dirs())


@functools.lru_cache(maxsize=64)
def _normalise_version(k8s_version: str) -> str:
    """Accept "1.33", "v1.33" or "1.33.2"; raise ValueError for anything unsupported."""
    m = _VERSION_RE.match(str(k8s_version).strip()) if isinstance(k8s_version, str) else None
    version = f"{int(m.group(1))}.{int(m.group(2))}" if m else None
    if version is None or version not in _version_dirs():
        raise ValueError(
            f"unsupported Kubernetes version {k8s_version!r}; supported: {', '.join(supported_versions())}"
        )
    return version


@functools.cache
def _definitions(version: str) -> dict[str, Any]:
    """The ``$defs`` of one version's strict ``_definitions.json`` (parsed once)."""
    path = _schema_root().joinpath(_version_dirs()[version], "_definitions.json")
    with path.open("r", encoding="utf-8") as fh:
        return json.load(fh)["$defs"]


@functools.cache
def _kind_index(version: str) -> dict[tuple[str, str], str]:
    """Exact (apiVersion, kind) -> definition name, from x-kubernetes-group-version-kind."""
    index: dict[tuple[str, str], str] = {}
    for name, schema in _definitions(version).items():
        for gvk in schema.get("x-kubernetes-group-version-kind") or ():
            group, ver, kind = gvk.get("group", ""), gvk.get("version", ""), gvk.get("kind", "")
            api_version = f"{group}/{ver}" if group else ver
            index.setdefault((api_version, kind), name)
    return index


# ---------------------------------------------------------------------------
# the closure compiler
# ---------------------------------------------------------------------------

# A check appends (path, message) pairs; raising _Full stops a runaway document.
_Raw = tuple[tuple[Any, ...], str]
_Check = Callable[[Any, tuple[Any, ...], list[_Raw]], None]


class _Unsupported(Exception):
    """The schema uses a keyword the closure compiler does not implement."""


class _Full(Exception):
    """Enough issues were collected for one document."""


# Keywords that only annotate; they never reject a value.
_ANNOTATIONS = frozenset({"description", "default", "title", "example", "readOnly", "$schema", "$id"})
_HANDLED = frozenset(
    {"type", "properties", "additionalProperties", "items", "required", "enum", "$ref", "oneOf", "format"}
)
#: Where a placeholder string (``$NUM_NODES``, ``REPLACE_ME``) stands for a value decided at render
#: time: a scalar slot. An object or list slot holding a string stays an error.
_SCALARS = frozenset({"integer", "number", "boolean"})
_INT_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}

_NULL = type(None)
_JSON_TYPE_OF: dict[type, str] = {
    str: "string",
    bool: "boolean",
    int: "integer",
    float: "number",
    dict: "object",
    list: "array",
    tuple: "array",
    _NULL: "null",
    _dt.datetime: "string",
    _dt.date: "string",
}


def _json_type(value: Any) -> str:
    """The JSON type name of a loaded YAML value (subclasses resolved by isinstance)."""
    name = _JSON_TYPE_OF.get(type(value))
    if name is not None:
        return name
    for py, json_name in (
        (bool, "boolean"),
        (int, "integer"),
        (float, "number"),
        (str, "string"),
        (dict, "object"),
        (list, "array"),
        (tuple, "array"),
        ((_dt.date, _dt.datetime), "string"),
    ):
        if isinstance(value, py):
            _JSON_TYPE_OF[type(value)] = json_name  # the loader's YMap/YList: one lookup from now on
            return json_name
    return type(value).__name__


def _type_only_union(branches: Any) -> list[str] | None:
    """Types of a ``oneOf`` whose branches are nothing but ``type``; else None."""
    if not isinstance(branches, list) or not branches:
        return None
    names: list[str] = []
    for branch in branches:
        if not isinstance(branch, dict) or set(branch) - {"type"} - _ANNOTATIONS:
            return None
        t = branch.get("type")
        for name in [t] if isinstance(t, str) else (t or []):
            if name not in names:
                names.append(name)
    return names


class _Compiler:
    """Compiles one version's definitions into shared check closures."""

    def __init__(self, defs: dict[str, Any]) -> None:
        self._defs = defs
        self._cells: dict[str, list[_Check]] = {}

    def definition(self, name: str) -> _Check:
        """The check for ``#/$defs/<name>``; recursion goes through a late-bound cell."""
        cell = self._cells.get(name)
        if cell is None:
            if name not in self._defs:
                raise _Unsupported(f"unresolvable $ref {name}")
            cell = self._cells[name] = []
            try:
                cell.append(self.node(self._defs[name]))
            except _Unsupported:
                del self._cells[name]
                raise

        def check_ref(value: Any, path: tuple[Any, ...], out: list[_Raw]) -> None:
            cell[0](value, path, out)

        return cell[0] if cell else check_ref

    def node(self, schema: Any) -> _Check:
        if schema is True or schema == {}:
            return _accept
        if not isinstance(schema, dict):
            raise _Unsupported(f"schema node {schema!r}")
        unknown = {k for k in schema if k not in _HANDLED and k not in _ANNOTATIONS and not k.startswith("x-")}
        if unknown:
            raise _Unsupported(f"keywords {sorted(unknown)}")
        if "$ref" in schema:
            ref = schema["$ref"]
            if not isinstance(ref, str) or not ref.startswith("#/$defs/"):
                raise _Unsupported(f"$ref {ref!r}")
            if set(schema) & (_HANDLED - {"$ref", "format"}):
                raise _Unsupported("$ref with sibling assertions")
            return self.definition(ref[len("#/$defs/") :])

        types = schema.get("type")
        if "oneOf" in schema:
            union = _type_only_union(schema["oneOf"])
            if union is None or types is not None:
                raise _Unsupported("oneOf beyond a type union")
            types = union
        if isinstance(types, str):
            types = [types]
        allowed = frozenset(types) if types else None
        if allowed is not None and "integer" in allowed:
            int_range = _INT_RANGES.get(schema.get("format", ""))
        else:
            int_range = None
        enum = schema.get("enum")
        if enum is not None and not isinstance(enum, list):
            raise _Unsupported("enum")

        props_schema = schema.get("properties") or {}
        props = {key: self.node(sub) for key, sub in props_schema.items()}
        extra = schema.get("additionalProperties", True)
        extra_check: _Check | None = (
            None if extra is False else (None if extra is True or extra == {} else self.node(extra))
        )
        closed = extra is False
        required = tuple(schema.get("required") or ())
        items = self.node(schema["items"]) if "items" in schema else None
        has_object_rules = bool(props or closed or extra_check or required)

        def check(value: Any, path: tuple[Any, ...], out: list[_Raw]) -> None:
            if allowed is not None:
                jtype = _json_type(value)
                if jtype not in allowed and not (jtype == "integer" and "number" in allowed):
                    if not (jtype == "string" and allowed & _SCALARS and is_placeholder(value)):
                        _add(out, path, f"{_where(path)}expected {_type_words(allowed)}, got {_describe(value)}")
                    return
                if int_range is not None and jtype == "integer" and not (int_range[0] <= value <= int_range[1]):
                    _add(out, path, f"{_where(path)}{value} is out of range for {schema['format']}")
            if enum is not None and value not in enum and not is_placeholder(value):
                choices = ", ".join(json.dumps(e) for e in enum[:8]) + (", ..." if len(enum) > 8 else "")
                _add(out, path, f"{_where(path)}unsupported value {_short(value)}; expected one of {choices}")
            if isinstance(value, dict):
                if has_object_rules:
                    for key in required:
                        if key not in value:
                            where = f" in {_display(path)}" if path else ""
                            _add(out, path, f'missing required field "{key}"{where}')
                    for key, sub in value.items():
                        child = props.get(key) if isinstance(key, str) else None
                        if child is not None:
                            child(sub, (*path, _key(key)), out)
                        elif closed:
                            _add(out, (*path, _key(key)), _unknown(path, key, props_schema))
                        elif extra_check is not None:
                            extra_check(sub, (*path, _key(key)), out)
            elif items is not None and isinstance(value, (list, tuple)):
                for i, sub in enumerate(value):
                    items(sub, (*path, i), out)

        return check


def _accept(value: Any, path: tuple[Any, ...], out: list[_Raw]) -> None:
    return None


def _add(out: list[_Raw], path: tuple[Any, ...], message: str) -> None:
    if len(out) >= MAX_ISSUES:
        raise _Full
    out.append((path, message))


def _key(key: Any) -> str:
    """Mapping keys in paths are always strings (ints are reserved for list indices)."""
    return key if isinstance(key, str) else str(key)


_PLAIN_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def _display(path: tuple[Any, ...]) -> str:
    """kubectl-style path: spec.containers[0].resources.limits[nvidia.com/gpu]."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        elif _PLAIN_KEY.match(part):
            text += f".{part}" if text else part
        else:
            text += f"[{part}]"
    return text


def _where(path: tuple[Any, ...]) -> str:
    return f'"{_display(path)}": ' if path else ""


def _short(value: Any, limit: int = 40) -> str:
    try:
        text = json.dumps(value) if isinstance(value, str) else repr(value)
    except Exception:
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _describe(value: Any) -> str:
    jtype = _json_type(value)
    if jtype in ("object", "array"):
        return "an object" if jtype == "object" else "a list"
    if jtype == "null":
        return "null"
    return f"{jtype} {_short(value)}"


def _type_words(allowed: frozenset[str]) -> str:
    order = ["object", "array", "string", "integer", "number", "boolean"]
    names = [n for n in order if n in allowed] + sorted(allowed - set(order) - {"null"})
    words = {"array": "list"}
    names = [words.get(n, n) for n in names] or ["null"]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def _unknown(path: tuple[Any, ...], key: Any, known: dict[str, Any]) -> str:
    message = f'unknown field "{_display((*path, _key(key)))}"'
    if isinstance(key, str):
        close = closest(key, known, cutoff=0.75)
        if close:
            message += f' (did you mean "{close}"?)'
    return message


# ---------------------------------------------------------------------------
# validators per (apiVersion, kind, version)
# ---------------------------------------------------------------------------


class _Validator:
    """Validates documents of one core kind for one Kubernetes version."""

    def __init__(self, check: _Check | None, fallback: Any = None) -> None:
        self._check = check
        self._fallback = fallback

    def issues(self, obj: dict[str, Any]) -> list[_Raw]:
        out: list[_Raw] = []
        if self._check is not None:
            try:
                self._check(obj, (), out)
            except _Full:
                out[-1] = ((), f"more than {MAX_ISSUES - 1} schema issues; only the first {MAX_ISSUES - 1} are shown")
            return out
        return _fallback_issues(self._fallback, obj)


@functools.cache
def _compiler(version: str) -> _Compiler:
    return _Compiler(_definitions(version))


def _build_validator(api_version: str, kind: str, version: str) -> _Validator | None:
    """Compile the validator for one core kind; None when the kind is not core."""
    name = _kind_index(version).get((api_version, kind))
    if name is None:
        return None
    try:
        return _Validator(_compiler(version).definition(name))
    except _Unsupported:
        import jsonschema  # only needed if a future schema outgrows the closure compiler

        root = {"$defs": _definitions(version), "$ref": f"#/$defs/{name}"}
        return _Validator(None, jsonschema.Draft202012Validator(root))


_VALIDATORS: dict[tuple[str, str, str], _Validator | None] = {}
#: Compiling is not thread-safe (a definition's cell is empty until compiled; another thread that
#: found it would call into nothing: the webhook's concurrent first requests got a spurious EML002
#: IndexError). Builds are serialised; lookups of built validators take no lock.
_BUILD_LOCK = threading.RLock()


def _validator_for(api_version: str, kind: str, version: str) -> _Validator | None:
    """Cached per (apiVersion, kind, version); misses are cached too."""
    key = (api_version, kind, version)
    try:
        return _VALIDATORS[key]
    except KeyError:
        with _BUILD_LOCK:
            if key not in _VALIDATORS:
                _VALIDATORS[key] = _build_validator(api_version, kind, version)
            return _VALIDATORS[key]


def _fallback_issues(validator: Any, obj: dict[str, Any]) -> list[_Raw]:
    out: list[_Raw] = []
    errors: Iterator[Any] = validator.iter_errors(obj)
    for error in errors:
        path = tuple(p if isinstance(p, int) else _key(p) for p in error.absolute_path)
        if len(out) >= MAX_ISSUES - 1:
            out.append(((), f"more than {MAX_ISSUES - 1} schema issues; only the first {MAX_ISSUES - 1} are shown"))
            break
        out.append((path, f"{_where(path)}{error.message}"))
    return out


def validate_core(obj: dict[str, Any], k8s_version: str = "1.33") -> list[SchemaIssue] | None:
    """Validate one manifest document against the strict core schema.

    Returns None when (apiVersion, kind) is not a core kind served by that
    Kubernetes version (a CRD, a typo, or a removed API such as
    policy/v1beta1 PodDisruptionBudget on 1.25+: EML003 reports those), so
    the caller can try other validators.  Otherwise returns the issues, at
    most MAX_ISSUES of them, in document order; empty when valid.  Raises
    ValueError only for an unsupported ``k8s_version``; never for the
    document.
    """
    version = _normalise_version(k8s_version)
    if not isinstance(obj, dict):
        return None
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return None
    try:
        validator = _validator_for(api_version, kind, version)
        if validator is None:
            return None
        raw = validator.issues(obj)
    except RecursionError:
        return [SchemaIssue((), "document is nested too deeply to validate")]
    except Exception as exc:
        return [SchemaIssue((), f"could not validate against the schema: {type(exc).__name__}: {exc}")]
    return [SchemaIssue(tuple(path), message) for path, message in raw]
