"""Output formats as plugins: each module registers a ``render(result, registry, options) -> str``.

Adding a format means adding a module and one line in :data:`FORMATTERS`, never editing the CLI.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable

from eksmllint.core.engine import LintResult
from eksmllint.core.registry import Registry


@dataclass(frozen=True)
class RenderOptions:
    color: bool = False
    show_suppressed: bool = False
    frames: bool = False


Renderer = Callable[[LintResult, Registry, RenderOptions], str]

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


def get_renderer(name: str) -> Renderer:
    module, _, attr = FORMATTERS[name].partition(":")
    return getattr(importlib.import_module(module), attr)
