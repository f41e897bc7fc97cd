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
