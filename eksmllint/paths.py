"""Where the built-in rule files and fixtures are: inside the wheel, or in a source checkout."""

from __future__ import annotations

from pathlib import Path

_PKG = Path(__file__).resolve().parent
_DATA = _PKG / "_data"  # the wheel build copies rules/ and fixtures/rules/ here
_REPO = _PKG.parent


def builtin_rules_dir() -> Path:
    return _DATA / "rules" if (_DATA / "rules").is_dir() else _REPO / "rules"


def rule_fixtures_dir() -> Path:
    return _DATA / "fixtures" if (_DATA / "fixtures").is_dir() else _REPO / "fixtures" / "rules"


def relative_inside(path: str, base: str) -> str | None:
    """``path`` relative to the folder ``base`` as a POSIX path (``./x`` and ``a/../x`` normalised),
    or None when it lies outside ``base`` (another drive, or reached only through ``..``)."""
    import os

    full = os.path.normpath(os.path.abspath(path))
    base = os.path.abspath(base)
    if os.path.splitdrive(full)[0].lower() != os.path.splitdrive(base)[0].lower():
        return None
    rel = os.path.relpath(full, base)
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        return None
    return rel.replace(os.sep, "/")
