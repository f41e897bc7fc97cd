"""Kubernetes resource quantities ("500m", "1100Gi", "1e3") as numbers."""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from functools import lru_cache

_SUFFIX: dict[str, int | Decimal] = {
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "Pi": 2**50,
    "Ei": 2**60,
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "": 1,
    "k": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "P": 10**15,
    "E": 10**18,
}
#: Numbers with more digits than this (either side of the point) are not real settings: Kubernetes
#: counts are int32 and the largest quantities in use are a few EiB (19 digits). Longer ones are
#: read as "not a number we know" so rules stay silent instead of computing with thousands of
#: digits (or crashing on Python's 4,300-digit int limit, or on ``.inf``/``.nan``).
MAX_DIGITS = 30
#: A whole number in a regular expression: at most MAX_DIGITS ASCII digits.
DIGITS = rf"[0-9]{{1,{MAX_DIGITS}}}(?![0-9])"
_LIMIT = 10**MAX_DIGITS  # computed once: Python does not fold the power of a global name
_WHOLE = re.compile(DIGITS)
_QTY = re.compile(r"^\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|)\s*$")


def parse_quantity(value: object) -> Decimal | None:
    """The quantity as a Decimal in base units (bytes, cores), or None if it is not one."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return Decimal(value) if abs(value) < _LIMIT else None
    if isinstance(value, float):
        return _scaled(Decimal(str(value)) if math.isfinite(value) else None, "")
    if isinstance(value, str):
        return _parse_text(value)
    return None


@lru_cache(maxsize=4096)  # manifests repeat a few texts ("8", "160Gi") in every container
def _parse_text(value: str) -> Decimal | None:
    m = _QTY.match(value)
    if not m:
        return None
    try:
        number = Decimal(m.group(1))
    except InvalidOperation:
        return None
    return _scaled(number, m.group(2))


def _scaled(number: Decimal | None, suffix: str) -> Decimal | None:
    if number is None or (number and abs(number.adjusted()) > MAX_DIGITS):
        return None
    return number * Decimal(_SUFFIX[suffix])


def parse_int(value: object) -> int | None:
    """A literal whole number: an int, or a string of ASCII digits ("8", " 16 "); None for
    anything else, including templated values ("$N", "{{ .Values.n }}"), other Unicode digits
    ("²") and numbers longer than :data:`MAX_DIGITS`."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if abs(value) < _LIMIT else None
    if isinstance(value, str):
        text = value.strip()
        return int(text) if _WHOLE.fullmatch(text) else None
    return None


def parse_count(value: object) -> int | None:
    """A whole-number quantity (GPU or EFA count); None when absent or not a whole number."""
    q = parse_quantity(value)
    if q is None or q != q.to_integral_value():
        return None
    return int(q)


def to_mib(q: Decimal) -> float:
    return float(q) / 2**20


def format_mib(mib: float) -> str:
    """Human form used in messages and computed fixes: '62Gi', '512Mi'."""
    if mib >= 1024 and mib % 1024 == 0:
        return f"{int(mib // 1024)}Gi"
    return f"{int(mib)}Mi"
