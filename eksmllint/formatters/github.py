"""GitHub Actions workflow commands: ``::error file=…,line=…,col=…,title=…::message``.

Values are escaped as GitHub's own toolkit does (``%``, CR, LF in the message; also ``:`` and
``,`` in properties), so no file or object name can end the command or start another one.
Paths are repository-relative, as the annotations need to land on the pull request's files.
"""

from __future__ import annotations

from eksmllint.core.finding import Severity
from eksmllint.formatters.places import ReportPaths

_CMD = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render(result, registry, options) -> str:
    paths = ReportPaths(result.run.files)
    lines = []
    for f in result.active:
        place = paths.place(f.location)
        props = [f"file={escape_property(place.path)}"]
        if place.line:
            props.append(f"line={place.line}")
            if place.col:
                props.append(f"col={place.col}")
        props.append(f"title={escape_property(f'{f.code} {f.slug}')}")
        msg = f.message + (f" ({f.resource.display()})" if f.resource else "")
        if place.note:
            msg += f" [{place.note}]"
        lines.append(f"::{_CMD[f.severity]} {','.join(props)}::{escape_data(msg)}")
    return "\n".join(lines) + ("\n" if lines else "")
