"""Node-selector requirements normalised for :meth:`~eksmllint.catalogue.models.Catalogue.matching`.

Label matching
--------------
:meth:`Catalogue.matching` evaluates node-selector / NodePool requirements against the
well-known labels Karpenter puts on these instance types (:data:`INSTANCE_LABEL_KEYS`).
Requirements on any other key (zone, capacity type, custom labels, or instance properties this
catalogue does not model, such as ``instance-hypervisor``) are ignored, so the result is the
set of catalogue types that *could* satisfy the requirements. Malformed requirements (unknown
operator, ``In`` without values, ``Gt`` with a non-integer or more than one value) are ignored as
well: schema rules report them, and ignoring keeps downstream rules from cascading on them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .labels import INSTANCE_LABEL_KEYS, L_INSTANCE_TYPE, LABEL_ALIASES, ec2_instance_name

Requirement = tuple[str, str, tuple[str, ...]]
"""A normalised node-selector requirement: (key, operator, values)."""

SET_OPERATORS = frozenset({"In", "NotIn"})
PRESENCE_OPERATORS = frozenset({"Exists", "DoesNotExist"})
NUMERIC_OPERATORS: Mapping[str, Any] = {
    "Gt": lambda a, b: a > b,
    "Lt": lambda a, b: a < b,
    "Gte": lambda a, b: a >= b,
    "Lte": lambda a, b: a <= b,
}


def parse_label_int(text: str) -> int | None:
    try:
        return int(text.strip())
    except (ValueError, AttributeError):
        return None


def _label_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def normalise_requirement(raw: Any) -> Requirement | None:
    """Canonical (key, operator, values) or None when the requirement is ignored."""
    if isinstance(raw, Mapping):
        key, operator, values = raw.get("key"), raw.get("operator"), raw.get("values")
    elif isinstance(raw, (tuple, list)) and len(raw) in (2, 3):
        key, operator = raw[0], raw[1]
        values = raw[2] if len(raw) == 3 else None
    else:
        return None
    if not isinstance(key, str) or not isinstance(operator, str):
        return None
    key = LABEL_ALIASES.get(key.strip(), key.strip())
    if key not in INSTANCE_LABEL_KEYS:
        return None
    if values is None:
        items: tuple[str, ...] = ()
    elif isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        items = (_label_value(values),)
    else:
        items = tuple(_label_value(v) for v in values)
    if key == L_INSTANCE_TYPE:  # a HyperPod node's ml.<type> label names the same hardware
        items = tuple(ec2_instance_name(v) for v in items)
    if operator in SET_OPERATORS:
        return (key, operator, tuple(sorted(set(items)))) if items else None
    if operator in PRESENCE_OPERATORS:
        return (key, operator, ())
    if operator in NUMERIC_OPERATORS:
        if len(items) != 1 or parse_label_int(items[0]) is None:
            return None
        return (key, operator, (str(parse_label_int(items[0])),))
    return None
