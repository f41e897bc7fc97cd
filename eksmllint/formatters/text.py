"""``path:line:col: EML301 [warning] message (Kind namespace/name)``, then a summary line."""

from __future__ import annotations

from collections import Counter

from eksmllint.core.finding import Finding, Severity
from eksmllint.formatters.places import STDIN_NAME, ReportPaths
from eksmllint.formatters.safe import one_line

_COLORS = {Severity.ERROR: "\033[31m", Severity.WARNING: "\033[33m", Severity.INFO: "\033[36m"}
_RESET = "\033[0m"


def format_finding(f: Finding, color: bool = False, source: str | None = None) -> str:
    """One line whatever the finding quotes: names and values are escaped (:func:`one_line`).
    ``source``: where a Helm template is in the repository (default: the template as named)."""
    loc = f.location
    where = f"{one_line(loc.file)}:{loc.line}:{loc.col}"
    if loc.template:
        where += f" [{one_line(source or loc.template)}]"
    sev = str(f.severity)
    if color:
        sev = f"{_COLORS[f.severity]}{sev}{_RESET}"
    line = f"{where}: {f.code} [{sev}] {one_line(f.message)}"
    if f.resource is not None:
        line += f" ({one_line(f.resource.display())})"
    if f.suppressed_by:
        line += f" [suppressed by {one_line(f.suppressed_by)}]"
    return line


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def linted(result) -> str:
    """``Linted 21 files, 27 objects.``: what the run read, so that one that read nothing shows."""
    return f"Linted {_plural(len(result.linted_files), 'file')}, {_plural(len(result.linted_resources), 'object')}."


def summary(findings: list[Finding], suppressed: int = 0) -> str:
    counts = Counter(f.severity for f in findings)
    fixable = sum(1 for f in findings if f.fix is not None)
    parts = [
        f"{counts.get(s, 0)} {s}" + ("s" if counts.get(s, 0) != 1 else "")
        for s in (Severity.ERROR, Severity.WARNING, Severity.INFO)
    ]
    text = f"Found {len(findings)} finding{'s' if len(findings) != 1 else ''} ({', '.join(parts)})"
    if fixable:
        text += f"; {fixable} fixable with `eksmllint fix`"
    if suppressed:
        text += f"; {suppressed} suppressed"
    return text + "."


def _chart_source(f: Finding, paths) -> str | None:
    """For a Helm stream on stdin: the chart file in the repository (with the template's line
    when it is known), as CI reports name it; None when the chart is not found."""
    if paths is None or f.location.file != STDIN_NAME or not f.location.template:
        return None
    place = paths.place(f.location)
    if place.path == f.location.template:
        return None
    return f"{place.path}:{place.line}" if place.line else place.path


def statistics(findings: list[Finding]) -> list[str]:
    """``  12  EML301  [warning]  shm-missing``: one line per rule, most frequent first (ruff's
    ``--statistics``)."""
    counts = Counter((f.code, f.slug, f.severity) for f in findings)
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0][0]))
    width = len(str(ranked[0][1])) if ranked else 1
    return [f"{n:>{width}}  {code}  [{sev}]  {slug}" for (code, slug, sev), n in ranked]


def render(result, registry, options) -> str:
    shown = result.findings if options.show_suppressed else result.active
    if options.statistics:
        lines = statistics(shown)
    else:
        helm_stdin = any(f.location.file == STDIN_NAME and f.location.template for f in shown)
        paths = ReportPaths(result.run.files) if helm_stdin else None
        lines = [format_finding(f, options.color, _chart_source(f, paths)) for f in shown]
        if options.detail:
            lines = [line + (f"\n    {one_line(f.detail)}" if f.detail else "") for line, f in zip(lines, shown)]
        if options.frames:
            from eksmllint.formatters.frames import with_frames

            lines = with_frames(shown, lines, result.run.files)
    if not options.quiet:
        lines.append(linted(result))
        lines.append(summary(result.active, len(result.suppressed)))
    return "".join(line + "\n" for line in lines)
