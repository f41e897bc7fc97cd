"""Legends of the graph drawings: what the colours of edges mean, named once instead of on each
edge (at size, a label on every edge overlaps into an unreadable tangle; each edge keeps its type
and detail in a tooltip)."""

from __future__ import annotations

from html import escape


def dot_title(title: str, legend: list[tuple[str, str, bool]]) -> str:
    """A DOT graph label: ``title``, then one coloured line per (edge type, colour, dashed), as an
    HTML-like label, so the legend adds no node to the drawing."""
    cells = "".join(
        f'<td><font point-size="9"><font color="{escape(color)}">{"- - -" if dashed else "&#8212;&#8212;"}</font> '
        f"{escape(kind)}</font></td>"
        for kind, color, dashed in legend
    )
    head = f'<tr><td colspan="{max(len(legend), 1)}">{escape(title)}</td></tr>'
    return f'<<table border="0" cellspacing="4">{head}{f"<tr>{cells}</tr>" if cells else ""}</table>>'
