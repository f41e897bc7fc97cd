"""``--format html``: the self-contained HTML report (see :mod:`eksmllint.render.html`).

Meant for ``eksmllint lint --format html --output report.html``: the terminal keeps the text
report and the file is one page with the summary, the resource graph, every finding with its YAML
lines and each rule's explanation, readable offline and printable.
"""

from __future__ import annotations


def render(result, registry, options) -> str:
    from eksmllint.formatters.safe import without_surrogates
    from eksmllint.render.html import render_report

    # File names reach the page in many places (findings, the graph's tooltips): escaped once here.
    return without_surrogates(render_report(result, registry, show_suppressed=options.show_suppressed))
