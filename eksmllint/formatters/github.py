"""GitHub Actions workflow commands: ``::error file=…,line=…,col=…,title=…::message``."""

from __future__ import annotations

from eksmllint.core.finding import Severity

_CMD = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_prop(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render(result, registry, options) -> str:
    lines = []
    for f in result.active:
        loc = f.location
        props = [f"file={_escape_prop(loc.file)}"]
        if loc.line:
            props.append(f"line={loc.line}")
        if loc.col:
            props.append(f"col={loc.col}")
        props.append(f"title={_escape_prop(f'{f.code} {f.slug}')}")
        msg = f.message + (f" ({f.resource.display()})" if f.resource else "")
        lines.append(f"::{_CMD[f.severity]} {','.join(props)}::{_escape_data(msg)}")
    return "\n".join(lines) + ("\n" if lines else "")
