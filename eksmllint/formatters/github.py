"""GitHub Actions workflow commands: ``::error file=…,line=…,col=…,title=…::message``.

Values are escaped as GitHub's own toolkit does (``%``, CR, LF in the message; also ``:`` and
``,`` in properties), so no file or object name can end the command or start another one; other
control and line-separator characters are written as visible escapes first (:func:`one_line`).
Paths are repository-relative, as the annotations need to land on the pull request's files.
"""

from __future__ import annotations

from eksmllint.core.finding import Severity
from eksmllint.formatters.places import ReportPaths
from eksmllint.formatters.safe import one_line

_CMD = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    return one_line(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


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
