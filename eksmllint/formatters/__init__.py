"""Output formats as plugins: each module registers a ``render(result, registry, options) -> str``.

Adding a format means adding a module and one line in :data:`FORMATTERS`, never editing the CLI.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the CLI imports this package at start-up: no engine import for that
    from eksmllint.core.engine import LintResult
    from eksmllint.core.registry import Registry


@dataclass(frozen=True)
class RenderOptions:
    color: bool = False
    show_suppressed: bool = False
    frames: bool = False
    # text on stdout only: the findings alone / counts per rule instead / each finding's detail
    quiet: bool = False
    statistics: bool = False
    detail: bool = False


Renderer = Callable[["LintResult", "Registry", RenderOptions], str]

#: format name -> "module:function"; imported lazily so `lint` starts fast.
FORMATTERS: dict[str, str] = {
    "text": "eksmllint.formatters.text:render",
    "json": "eksmllint.formatters.json:render",
    "sarif": "eksmllint.formatters.sarif:render",
    "github": "eksmllint.formatters.github:render",
    "gitlab": "eksmllint.formatters.gitlab:render",
    "junit": "eksmllint.formatters.junit:render",
    "html": "eksmllint.formatters.html:render",
}


def use_color(stream, env=None) -> bool:
    """Colour on a terminal, unless ``NO_COLOR`` is set (no-color.org: any non-empty value);
    ``FORCE_COLOR`` (non-empty, not ``0``) turns it on in pipes and CI logs. NO_COLOR wins."""
    env = os.environ if env is None else env
    if env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR", "") not in ("", "0"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def get_renderer(name: str) -> Renderer:
    module, _, attr = FORMATTERS[name].partition(":")
    return getattr(importlib.import_module(module), attr)
