"""Shared building blocks for the CRD models.

The models mirror the OpenAPI schemas of the CRDs eksmllint knows, closely enough that a
manifest the API server would reject for an unknown field, a wrong type or a missing
required field is reported, and a manifest it accepts passes.  Two principles follow:

* Scalars are *strict*: the API server rejects ``replicas: "2"`` for an integer field and
  ``nprocPerNode: 8`` for a string field, so pydantic's lax coercion would hide real
  errors.  ``Int``/``Str``/``Bool``/``Float`` below are the strict variants.
* Embedded core Kubernetes structures (pod templates, resource requirements, tolerations,
  affinity ...) are plain mappings (``Obj``); core validation is done elsewhere and
  re-modelling it here would only drift.

``CRDModel`` forbids unknown keys (that is how a typo such as ``slotPerWorker`` is found);
``LooseModel`` allows them, for objects whose field set changes too fast between releases
to pin down (we still type the fields we know).
"""

# No postponed annotations here: pydantic eval()s each annotation text as it builds a class (see the package doc).

import datetime as _dt
import re
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
)
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from eksmllint.placeholders import is_placeholder

__all__ = [
    "MAX_ISSUES",
    "Bool",
    "CRDModel",
    "Duration",
    "Float",
    "Int",
    "IntOrString",
    "KubeObject",
    "LooseModel",
    "ModelIssue",
    "Obj",
    "ObjList",
    "Quantity",
    "ResourceList",
    "Str",
    "StrList",
    "StrMap",
    "format_path",
    "is_placeholder",
    "issues_from_validation_error",
    "one_of",
    "pattern",
]

#: Issues reported per document at most; beyond this the document is hopeless anyway.
MAX_ISSUES = 20


@dataclass(frozen=True)
class ModelIssue:
    """One schema problem in a document.

    ``path`` is the document path (YAML keys as written, list indices as ints), so callers
    can map it back to a line; ``message`` is a short, self-contained sentence.
    """

    path: tuple[str | int, ...]
    message: str


# --------------------------------------------------------------------------- scalars


def _yaml_scalar_to_str(value: Any) -> Any:
    """YAML timestamps (``2024-01-01``) load as dates; kubectl sends them as strings."""
    if isinstance(value, (_dt.date, _dt.datetime)):
        return value.isoformat()
    return value


Int = StrictInt
Bool = StrictBool
Float = StrictFloat  # accepts ints too, like a JSON "number"
Str = Annotated[StrictStr, BeforeValidator(_yaml_scalar_to_str)]

_QUANTITY_RE = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)(([KMGTPE]i)|[numkMGTPE]|([eE][+-]?(\d+(\.\d*)?|\.\d+)))?$")


def _check_int_or_string(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise PydanticCustomError("int_or_string", "expected integer or string{got}", {"got": describe_input(value)})
    return value


def _check_quantity(value: Any) -> Any:
    value = _yaml_scalar_to_str(value)
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise PydanticCustomError(
            "quantity",
            'expected a quantity such as 8, "500m" or "16Gi"{got}',
            {"got": describe_input(value)},
        )
    if isinstance(value, str) and not _QUANTITY_RE.match(value.strip()):
        raise PydanticCustomError(
            "quantity",
            'expected a quantity such as 8, "500m" or "16Gi"{got}',
            {"got": describe_input(value)},
        )
    return value


#: Kubernetes ``IntOrString`` (ports, maxUnavailable, ...).
IntOrString = Annotated[int | str, BeforeValidator(_check_int_or_string)]
#: ``resource.Quantity``: an integer, a number or a quantity string.
Quantity = Annotated[int | float | str, BeforeValidator(_check_quantity)]

#: Opaque mapping: embedded core structures we deliberately do not re-model.
Obj = dict[str, Any]
ObjList = list[Obj]
StrMap = dict[str, Str]
StrList = list[Str]
ResourceList = dict[str, Quantity]


def one_of(*allowed: str) -> BeforeValidator:
    """A string enum with a readable error (``must be one of A, B (got "C")``), used as
    ``Annotated[str, one_of(...)]`` (a type checker reads the field as a plain ``str``).

    Implemented as a validator rather than ``Literal`` so the message lists the allowed
    values in the CRD's order and the attribute stays a plain ``str`` for rules.
    """

    allowed_set = frozenset(allowed)
    listing = ", ".join(allowed)

    def _check(value: Any) -> Any:
        if isinstance(value, str) and value in allowed_set:
            return value
        raise PydanticCustomError(
            "enum_value",
            "must be one of {allowed}{got}",
            {"allowed": listing, "got": describe_input(value)},
        )

    return BeforeValidator(_check)


def pattern(regex: str, hint: str) -> BeforeValidator:
    """A string that must match ``regex`` (as the CRD's ``pattern``); ``hint`` is shown. Used as
    ``Annotated[str, pattern(...)]``."""

    compiled = re.compile(regex)

    def _check(value: Any) -> Any:
        value = _yaml_scalar_to_str(value)
        if isinstance(value, str) and compiled.match(value):
            return value
        raise PydanticCustomError("pattern_value", "must be {hint}{got}", {"hint": hint, "got": describe_input(value)})

    return BeforeValidator(_check)


#: Go duration as accepted by the Karpenter CRDs (``30s``, ``1h30m``) or ``Never``.
Duration = Annotated[str, pattern(r"^(([0-9]+(s|m|h))+|Never)$", 'a duration such as "30s", "10m", "1h" or "Never"')]


# --------------------------------------------------------------------------- models


class CRDModel(BaseModel):
    """A fully modelled CRD object: unknown keys are errors (typos are found)."""

    model_config = ConfigDict(
        extra="forbid",
        populate_by_name=True,
        alias_generator=to_camel,
        frozen=False,
        revalidate_instances="never",
        defer_build=True,
    )


class LooseModel(BaseModel):
    """A loosely modelled object: known fields are typed, unknown keys are kept."""

    model_config = ConfigDict(
        extra="allow",
        populate_by_name=True,
        alias_generator=to_camel,
        revalidate_instances="never",
        defer_build=True,
    )


class KubeObject(CRDModel):
    """Top level of a custom resource: ``apiVersion``, ``kind``, ``metadata``, ``status``.

    Subclasses add ``spec``.  ``extra_issues`` is a hook for checks that pydantic cannot
    express with a path (e.g. which keys a replica-type map may use).
    """

    api_version: Str = Field(alias="apiVersion")
    kind: Str
    metadata: Obj | None = None
    status: Obj | None = None

    #: (apiVersion, kind) pairs this class models; filled in by each module.
    KINDS: ClassVar[tuple[tuple[str, str], ...]] = ()

    @classmethod
    def extra_issues(cls, obj: dict[str, Any]) -> list[ModelIssue]:
        """Checks beyond the schema shape; ``obj`` is the raw document."""
        return []


def check_map_keys(
    obj: dict[str, Any],
    path: tuple[str, ...],
    allowed: tuple[str, ...],
    what: str,
    case_insensitive: bool = True,
) -> list[ModelIssue]:
    """Report keys of the mapping at ``path`` that are not in ``allowed``.

    The Kubeflow operators normalise replica-type names case-insensitively (``worker`` ->
    ``Worker``) before validating them, hence ``case_insensitive``.
    """
    node: Any = obj
    for part in path:
        if not isinstance(node, dict):
            return []
        node = node.get(part)
    if not isinstance(node, dict):
        return []
    norm = {a.lower() if case_insensitive else a for a in allowed}
    issues = []
    for key in node:
        k = key.lower() if case_insensitive and isinstance(key, str) else key
        if k not in norm:
            full = (*path, key)
            issues.append(
                ModelIssue(
                    full,
                    f'unknown {what} "{format_path(full)}" (expected one of {", ".join(allowed)})',
                )
            )
    return issues


# --------------------------------------------------------------------------- errors

_TYPE_WORDS = {
    "int_type": "expected integer",
    "int_parsing": "expected integer",
    "int_from_float": "expected integer",
    "string_type": "expected string",
    "bool_type": "expected boolean",
    "bool_parsing": "expected boolean",
    "float_type": "expected number",
    "float_parsing": "expected number",
    "dict_type": "expected a mapping",
    "model_type": "expected a mapping",
    "model_attributes_type": "expected a mapping",
    "list_type": "expected a list",
    "tuple_type": "expected a list",
}

_SAFE_KEY_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")

#: Value errors that a template placeholder (:mod:`eksmllint.placeholders`) legitimately triggers:
#: the models stay strict (typed access still fails on it), only these issues are skipped.
_PLACEHOLDER_TOLERANT = frozenset(
    {
        "int_type",
        "int_parsing",
        "bool_type",
        "bool_parsing",
        "float_type",
        "float_parsing",
        "enum_value",
        "pattern_value",
        "quantity",
    }
)


def format_path(path: tuple[str | int, ...]) -> str:
    """``("spec", "tasks", 0, "name")`` -> ``spec.tasks[0].name``.

    Keys that are not plain identifiers (``nvidia.com/gpu``) go in brackets
    (``spec.limits[nvidia.com/gpu]``) so the dotted form stays unambiguous.
    """
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, str) and _SAFE_KEY_RE.match(part):
            out += f".{part}" if out else part
        else:
            out += f"[{part}]"
    return out


def describe_input(value: Any) -> str:
    """`` (got string "8")`` style suffix; empty when nothing useful can be said."""
    if value is None:
        return " (got null)"
    if isinstance(value, bool):
        return f" (got boolean {str(value).lower()})"
    if isinstance(value, int):
        return f" (got integer {value})"
    if isinstance(value, float):
        return f" (got number {value:g})"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f' (got "{shown}")' if shown else ' (got "")'
    if isinstance(value, dict):
        return " (got a mapping)"
    if isinstance(value, (list, tuple)):
        return " (got a list)"
    return f" (got {type(value).__name__})"


def _typed_got(value: Any) -> str:
    # For type errors, say the *type* of a string input explicitly: (got string "8").
    if isinstance(value, str):
        return " (got string" + describe_input(value)[5:]
    return describe_input(value)


def issues_from_validation_error(err: ValidationError, limit: int = MAX_ISSUES) -> list[ModelIssue]:
    """Turn pydantic errors into :class:`ModelIssue` with document paths and short messages."""
    issues: list[ModelIssue] = []
    seen: set[tuple[tuple[str | int, ...], str]] = set()
    for e in err.errors(include_url=False):
        loc = tuple(p for p in e.get("loc", ()) if p != "[key]")
        path = tuple(p if isinstance(p, (str, int)) else str(p) for p in loc)
        etype = e.get("type", "")
        if etype in _PLACEHOLDER_TOLERANT and is_placeholder(e.get("input")):
            continue
        where = format_path(path) or "<document>"
        value = e.get("input")
        ctx = e.get("ctx") or {}
        if etype == "extra_forbidden":
            msg = f'unknown field "{where}"'
        elif etype == "missing":
            msg = f'missing required field "{where}"'
        elif etype in ("enum_value", "pattern_value", "int_or_string", "quantity"):
            msg = f'"{where}": {e.get("msg", "invalid value")}'
        elif etype in _TYPE_WORDS:
            msg = f'"{where}": {_TYPE_WORDS[etype]}{_typed_got(value)}'
        elif etype in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
            sym = {"greater_than_equal": ">=", "greater_than": ">", "less_than_equal": "<=", "less_than": "<"}[etype]
            bound = next(iter(ctx.values()), "?")
            msg = f'"{where}": must be {sym} {bound}{describe_input(value)}'
        elif etype == "too_short":
            msg = f'"{where}": must not be empty'
        else:
            msg = f'"{where}": {e.get("msg", "invalid value")}'
        key = (path, msg)
        if key in seen:
            continue
        seen.add(key)
        issues.append(ModelIssue(path, msg))
        if len(issues) >= limit:
            break
    return issues
