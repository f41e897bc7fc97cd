"""``--format html``: the self-contained HTML report (see :mod:`eksmllint.render.html`).

Meant for ``eksmllint lint --format html --output report.html``: the terminal keeps the text
report and the file is one page with the summary, the resource graph, every finding with its YAML
lines and each rule's explanation, readable offline and printable.
"""

from __future__ import annotations


def render(result, registry, options) -> str:
    from eksmllint.render.html import render_report

    return render_report(result, registry, show_suppressed=options.show_suppressed)
