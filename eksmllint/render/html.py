"""The self-contained HTML report: one file, everything inline (CSS, SVG, a few lines of JS).

No network, no CDN, no web fonts: the report is attached to CI runs and opened from disk, years
later, on machines without access to anything. It must also print: the filters hide and every
section flows onto paper; nothing relies on the script to be readable.

Sections: summary (by severity and by family), the resource graph (inline SVG, see
:mod:`eksmllint.render.svg`), findings grouped by resource with the offending YAML lines, and the
explanation of every rule that fired (from the registry).
"""

from __future__ import annotations

import re
import textwrap
from collections import Counter, defaultdict
from collections.abc import Iterable
from html import escape
from typing import TYPE_CHECKING

from eksmllint import __version__
from eksmllint.core.finding import Finding, Severity
from eksmllint.core.rule import FAMILIES
from eksmllint.render.graph_export import ExportGraph, export_graph, node_id
from eksmllint.render.html_assets import CSS, SCRIPT
from eksmllint.render.svg import dom_id, draw_svg, legend_html, resource_anchor

if TYPE_CHECKING:
    from eksmllint.core.engine import LintResult
    from eksmllint.core.registry import Registry
    from eksmllint.resource import SourceFile

#: Above this many nodes the report draws only nodes with findings and their neighbours; a drawing
#: of thousands of boxes helps nobody (``eksmllint graph --focus`` is the tool for those runs).
#: A 100-workload repository (about 350 nodes, its edges bundled) is still drawn whole.
GRAPH_NODE_CAP = 400
FRAME_CONTEXT = 2  # source lines shown above and below the offending one
SEVERITIES = (Severity.ERROR, Severity.WARNING, Severity.INFO)


# --- small helpers ----------------------------------------------------------------------------


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _inline(text: str) -> str:
    """Escape, then render `code` spans (rule texts are written in Markdown-lite)."""
    parts = re.split(r"`([^`]+)`", text)
    return "".join(f"<code>{escape(p)}</code>" if i % 2 else escape(p) for i, p in enumerate(parts))


def prose(text: str | None) -> str:
    """Paragraphs and ``- `` lists (items may wrap onto indented lines) of a rule's text as HTML."""
    if not text:
        return ""
    out: list[str] = []
    para: list[str] = []
    items: list[str] | None = None

    def flush() -> None:
        nonlocal items
        if para:
            out.append(f"<p>{_inline(' '.join(para))}</p>")
            para.clear()
        if items is not None:
            out.append("<ul>" + "".join(f"<li>{_inline(i)}</li>" for i in items) + "</ul>")
            items = None

    for raw in textwrap.dedent(text).strip("\n").splitlines():
        stripped = raw.strip()
        if not stripped:
            flush()
        elif stripped.startswith(("- ", "* ")):
            if para:
                flush()
            items = (items or []) + [stripped[2:]]
        elif items is not None and raw[:1] in (" ", "\t"):
            items[-1] += " " + stripped  # a list item wrapped onto the next line
        else:
            if items is not None:
                flush()
            para.append(stripped)
    flush()
    return "".join(out)


def _link(url: str) -> str:
    safe = escape(url)
    if url.startswith(("https://", "http://")):
        return f'<a href="{safe}">{safe}</a>'
    return safe


def rule_anchor(code: str) -> str:
    return f"rule-{code}"


def family_of(code: str, registry: Registry | None) -> str:
    rule = registry.get(code) if registry is not None else None
    if rule is not None:
        return rule.family
    try:
        return FAMILIES[int(code[3])]
    except (ValueError, IndexError, KeyError):
        return "other"


def code_frame(src: SourceFile | None, line: int, col: int, context: int = FRAME_CONTEXT) -> str:
    """The offending line with ``context`` lines around it and a caret under the column."""
    if src is None or src.text is None or not (0 < line <= len(src.lines)):
        return ""
    lines = src.lines
    lo, hi = max(1, line - context), min(len(lines), line + context)
    width = len(str(hi))
    rows = []
    for no in range(lo, hi + 1):
        text = escape(lines[no - 1].replace("\t", "    ").rstrip("\r"))
        cls = "l hit" if no == line else "l"
        rows.append(f'<span class="{cls}"><b>{no:>{width}}</b>{text}</span>')
        if no == line:  # measured on the line as shown (tabs expanded), so the caret lines up
            caret = " " * len(lines[no - 1][: max(col, 1) - 1].replace("\t", "    ")) + "^"
            rows.append(f'<span class="l caret"><b> </b>{caret}</span>')
    return f'<pre class="frame" data-line="{line}">{"".join(rows)}</pre>'


# --- sections ---------------------------------------------------------------------------------


def _summary(findings: list[Finding], suppressed: int, registry: Registry | None, files: int, resources: int) -> str:
    counts = Counter(f.severity for f in findings)
    cards = []
    if not findings:
        cards.append('<div class="card clean"><div class="num">0</div><div class="lbl">findings</div></div>')
    for sev in SEVERITIES:
        n = counts.get(sev, 0)
        cards.append(
            f'<div class="card {sev}" data-severity="{sev}"><div class="num">{n}</div>'
            f'<div class="lbl">{escape(str(sev))}{"s" if n != 1 else ""}</div></div>'
        )
    fixable = sum(1 for f in findings if f.fix is not None)
    cards.append(f'<div class="card"><div class="num">{fixable}</div><div class="lbl">fixable</div></div>')
    if suppressed:
        cards.append(f'<div class="card"><div class="num">{suppressed}</div><div class="lbl">suppressed</div></div>')
    cards.append(
        f'<div class="card"><div class="num">{resources}</div><div class="lbl">resources in {_plural(files, "file")}</div></div>'
    )

    by_family: dict[str, Counter] = defaultdict(Counter)
    for f in findings:
        by_family[family_of(f.code, registry)][f.severity] += 1
    family_order = {name: digit for digit, name in FAMILIES.items()}
    rows = []
    for fam in sorted(by_family, key=lambda x: (family_order.get(x, 99), x)):
        c = by_family[fam]
        cells = "".join(f'<td class="n">{c.get(s, 0) or ""}</td>' for s in SEVERITIES)
        rows.append(f'<tr><td>{escape(fam)}</td>{cells}<td class="n">{sum(c.values())}</td></tr>')
    family_table = ""
    if rows:
        total = "".join(f'<td class="n">{counts.get(s, 0)}</td>' for s in SEVERITIES)
        family_table = (
            '<table class="by-family"><thead><tr><th>family</th>'
            + "".join(f'<th class="n">{s}</th>' for s in SEVERITIES)
            + '<th class="n">total</th></tr></thead><tbody>'
            + "".join(rows)
            + f'<tr class="total"><td>all</td>{total}<td class="n">{len(findings)}</td></tr></tbody></table>'
        )
    by_rule = Counter((f.code, f.slug, f.severity) for f in findings)
    rule_rows = "".join(
        f'<tr><td><a class="code" href="#{rule_anchor(code)}">{escape(code)}</a></td><td class="slug">{escape(slug)}</td>'
        f'<td><span class="sev {sev}">{sev}</span></td><td class="n">{n}</td></tr>'
        for (code, slug, sev), n in sorted(by_rule.items(), key=lambda kv: (-kv[0][2], -kv[1], kv[0][0]))
    )
    rule_table = (
        '<table class="by-rule"><thead><tr><th>rule</th><th>slug</th><th>severity</th><th class="n">findings</th></tr>'
        f"</thead><tbody>{rule_rows}</tbody></table>"
        if rule_rows
        else ""
    )
    return (
        f'<section id="summary"><h2>Summary</h2><div class="cards">{"".join(cards)}</div>'
        f'<div class="tables">{family_table}{rule_table}</div></section>'
    )


def _reduce_graph(graph: ExportGraph, cap: int) -> tuple[ExportGraph | None, str]:
    """The graph to draw and a note saying what was left out (empty note: everything drawn)."""
    if len(graph.nodes) <= cap:
        return graph, ""
    flagged = {nid for nid, n in graph.nodes.items() if n.findings}
    keep = set(flagged)
    for e in graph.edges:
        if e.source in flagged or e.target in flagged:
            keep |= {e.source, e.target}
    if not keep or len(keep) > cap:
        return None, (
            f"The run has {len(graph.nodes)} graph nodes, too many to draw legibly; use "
            "<code>eksmllint graph --focus KIND/NAME --format html</code> to draw one workload's neighbourhood."
        )
    return graph.with_nodes(keep), (
        f"Showing the {len(keep)} of {len(graph.nodes)} nodes that have findings or "
        "touch one; <code>eksmllint graph --format html</code> draws them all."
    )


def _graph_section(graph: ExportGraph, linked: set[str], cap: int = GRAPH_NODE_CAP) -> str:
    drawn, note = _reduce_graph(graph, cap)
    body = f'<p class="note">{note}</p>' if note else ""
    if drawn is not None and drawn.nodes:
        title = "Resource graph" + (f" (focus {drawn.focus})" if drawn.focus else "")
        drawing = draw_svg(drawn, linked=linked, title=title)
        body += legend_html(drawn, bundled=drawing.bundles > 0) + f'<div class="graph-wrap">{drawing.svg}</div>'
        body += (
            '<p class="note">Hover a node for its findings; click a coloured node to jump to them. '
            "Dashed boxes are pod templates.</p>"
        )
    elif drawn is not None:
        body += '<p class="note">No Kubernetes resources were found.</p>'
    return f'<section id="graph"><h2>Resource graph</h2>{body}</section>'


def _group_key(f: Finding) -> tuple:
    r = f.resource
    return (f.location.file, r.kind, r.namespace, r.name) if r else (f.location.file, None, None, None)


def _resource_id(f: Finding) -> str | None:
    r = f.resource
    return None if r is None else node_id(("res", r.kind, r.namespace, r.name))


def _finding_html(f: Finding, sources: dict, registry: Registry | None) -> str:
    loc = f.location
    rule = registry.get(f.code) if registry is not None else None
    where = f"{loc.file}:{loc.line}:{loc.col}" if loc.line else loc.file
    if loc.template:
        where += f"  [{loc.template}]"
    classes = f"finding {f.severity}" + (" suppressed" if f.suppressed_by else "")
    parts = [
        f'<li class="{classes}" data-code="{escape(f.code)}" data-severity="{f.severity}" data-line="{loc.line}">',
        '<div class="fhead">',
        f'<span class="sev {f.severity}">{f.severity}</span>',
        f'<a class="code" href="#{rule_anchor(f.code)}">{escape(f.code)}</a>',
        f'<span class="slug">{escape(f.slug)}</span>',
    ]
    if f.fix is not None:
        parts.append(
            f'<span class="fixable" title="{escape(f.fix.title)}">fixable ({f.fix.applicability.value})</span>'
        )
    parts.append("</div>")
    parts.append(f'<div class="msg">{escape(f.message)}</div>')
    if f.detail:
        parts.append(f'<div class="detail">{escape(f.detail)}</div>')
    parts.append(f'<div class="loc">{escape(where)}</div>')
    parts.append(code_frame(sources.get(loc.file), loc.line, loc.col))
    for rel in f.related[:5]:
        parts.append(f'<div class="loc">related: {escape(rel.file)}:{rel.line}:{rel.col}</div>')
    if f.suppressed_by:
        parts.append(f'<div class="why">suppressed by {escape(f.suppressed_by)}</div>')
    if rule is not None:
        parts.append(
            f'<div class="why">{_inline(rule.spec.summary)} <a href="#{rule_anchor(f.code)}">Why and how to fix</a></div>'
        )
    parts.append("</li>")
    return "".join(parts)


def _findings_section(findings: list[Finding], sources: dict, registry: Registry | None) -> str:
    if not findings:
        return (
            '<section id="findings"><h2>Findings</h2><div class="clean-box">No findings: '
            "every rule passed.</div></section>"
        )
    groups: dict[tuple, list[Finding]] = defaultdict(list)
    for f in findings:
        groups[_group_key(f)].append(f)

    def order(item):
        key, fs = item
        return (-max(f.severity for f in fs), key[0], min(f.location.line for f in fs))

    articles = []
    for key, fs in sorted(groups.items(), key=order):
        file, kind, ns, name = key
        worst = max(f.severity for f in fs)
        present = " ".join(f"has-{s}" for s in SEVERITIES if any(f.severity == s for f in fs))
        first = fs[0]
        rid = _resource_id(first)
        if rid is not None:
            heading = f'{escape(kind or "<no kind>")} <span class="slug">{escape(f"{ns}/" if ns else "")}{escape(name or "<unnamed>")}</span>'
            anchor = resource_anchor(rid)
        else:
            heading = f"File {escape(file)}"
            anchor = dom_id("file-", file)
        counts = Counter(f.severity for f in fs)
        tally = ", ".join(_plural(counts[s], str(s)) for s in SEVERITIES if counts.get(s))
        line = min(f.location.line for f in fs)
        where = f"{file}:{line}" if rid is not None and line else file
        body = "".join(_finding_html(f, sources, registry) for f in sorted(fs, key=Finding.sort_key))
        articles.append(
            f'<article class="res sev-{worst} {present}" id="{anchor}" data-resource="{escape(rid or "")}">'
            f'<header><h3>{heading}</h3><span class="where">{escape(where)}</span><span class="note">{tally}</span></header>'
            f'<ol class="findings">{body}</ol></article>'
        )
    filters = (
        '<div class="filters" role="toolbar" aria-label="Filter by severity"><span class="note">Show:</span>'
        '<button type="button" data-filter="all" aria-pressed="true">all</button>'
        + "".join(f'<button type="button" data-filter="{s}" aria-pressed="false">{s}s</button>' for s in SEVERITIES)
        + "</div>"
    )
    return f'<section id="findings"><h2>Findings by resource</h2>{filters}{"".join(articles)}</section>'


def _rules_section(codes: Iterable[str], registry: Registry | None) -> str:
    items = []
    for code in sorted(set(codes)):
        rule = registry.get(code) if registry is not None else None
        if rule is None:
            continue
        s = rule.spec
        body = [
            f'<article class="rule" id="{rule_anchor(code)}">',
            f'<h3>{escape(code)} <span class="slug">{escape(rule.slug)}</span> '
            f'<span class="sev {s.severity}">{s.severity}</span></h3>',
            f"<p><strong>{_inline(s.summary)}</strong></p>",
            f'<p class="note">family {escape(rule.family)} &middot; fix: {escape(s.fix)}</p>',
            "<h4>What it checks</h4>",
            prose(s.description),
            "<h4>Why it matters</h4>",
            prose(s.rationale),
        ]
        if s.fix_description:
            body += [f"<h4>Fix ({escape(s.fix)})</h4>", prose(s.fix_description)]
        if s.references:
            body += ["<h4>References</h4><ul>", "".join(f"<li>{_link(r)}</li>" for r in s.references), "</ul>"]
        body.append("</article>")
        items.append("".join(body))
    if not items:
        return ""
    return f'<section id="rules"><h2>Rules reported</h2>{"".join(items)}</section>'


def _page(title: str, meta: str, nav: list[tuple[str, str]], sections: list[str]) -> str:
    nav_html = "".join(f'<a href="#{a}">{escape(t)}</a>' for a, t in nav)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="generator" content="eksmllint">'
        # belt and braces: the page must never fetch anything, even if a message contained a URL
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
        "script-src 'unsafe-inline'; img-src data:\">"
        f"<title>{escape(title)}</title><style>{CSS}</style></head>"
        f'<body data-filter="all"><header class="top"><h1>{escape(title)}</h1><div class="meta">{meta}</div></header>'
        f'<nav class="toc">{nav_html}</nav><main>{"".join(sections)}</main>'
        f"<script>{SCRIPT}</script></body></html>\n"
    )


# --- entry points -----------------------------------------------------------------------------


def render_report(
    result: LintResult,
    registry: Registry | None,
    *,
    show_suppressed: bool = False,
    title: str = "eksmllint report",
    graph_cap: int = GRAPH_NODE_CAP,
) -> str:
    """The full report for ``eksmllint lint --format html``."""
    shown = result.findings if show_suppressed else result.active
    files = result.linted_files
    resources = result.linted_resources
    sources = {f.path: f for f in result.run.files}
    graph = export_graph(result, show_suppressed=show_suppressed)
    linked = {rid for f in shown if (rid := _resource_id(f)) is not None}
    counts = Counter(f.severity for f in result.active)
    meta = (
        f"eksmllint {escape(__version__)} &middot; {_plural(len(files), 'file')} &middot; "
        f"{_plural(len(resources), 'resource')} &middot; {_plural(len(result.rules), 'rule')} enabled &middot; "
        + ", ".join(_plural(counts.get(s, 0), str(s)) for s in SEVERITIES)
    )
    sections = [
        _summary(result.active, len(result.suppressed), registry, len(files), len(resources)),
        _graph_section(graph, linked, graph_cap),
        _findings_section(shown, sources, registry),
        _rules_section((f.code for f in shown), registry),
    ]
    nav = [("summary", "Summary"), ("graph", "Resource graph"), ("findings", "Findings")]
    if sections[-1]:
        nav.append(("rules", "Rules"))
    return _page(title, meta, nav, sections)


def render_graph_page(graph: ExportGraph, result: LintResult, registry: Registry | None) -> str:
    """``eksmllint graph --format html``: the drawing (never reduced), then the findings of the
    nodes drawn, so a focused page is a complete picture of one workload."""
    ids = {nid for nid, n in graph.nodes.items() if n.type == "resource"}
    shown = [f for f in result.active if (_resource_id(f) in ids)]
    sources = {f.path: f for f in result.run.files}
    linked = {rid for f in shown if (rid := _resource_id(f)) is not None}
    title = "eksmllint resource graph" + (f": {graph.focus}" if graph.focus else "")
    counts = Counter(f.severity for f in shown)
    meta = (
        f"eksmllint {escape(__version__)} &middot; {_plural(len(graph.nodes), 'node')} &middot; "
        f"{_plural(len(graph.edges), 'edge')} &middot; "
        + ", ".join(_plural(counts.get(s, 0), str(s)) for s in SEVERITIES)
    )
    sections = [
        _graph_section(graph, linked, cap=10**9),
        _findings_section(shown, sources, registry),
        _rules_section((f.code for f in shown), registry),
    ]
    nav = [("graph", "Resource graph"), ("findings", "Findings")] + ([("rules", "Rules")] if sections[-1] else [])
    return _page(title, meta, nav, sections)
