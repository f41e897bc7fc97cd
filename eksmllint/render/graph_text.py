"""The resource graph as text: Graphviz DOT, a Mermaid flowchart and JSON, from the one model of
:mod:`eksmllint.render.graph_export`."""

from __future__ import annotations

import json

from eksmllint.core.finding import Severity
from eksmllint.render.graph_export import (
    DASHED_EDGES,
    EDGE_COLORS,
    EDGE_TYPES,
    SEVERITY_COLORS,
    ExportGraph,
    ExportNode,
    bundle_edges,
)


def _sev(n: ExportNode) -> str | None:
    return str(n.severity) if n.severity else None


def _finding_line(n: ExportNode) -> str:
    counts = n.severity_counts()
    parts = [f"{c} {s}{'s' if c != 1 else ''}" for s, c in counts.items() if c]
    return ", ".join(parts)


def _dot_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\r", " ").replace("\n", " ") + '"'


def _dot_edge_attrs(etype: str, tip: str) -> str:
    attrs = [
        f"color={_dot_string(EDGE_COLORS.get(etype, '#6b7280'))}",
        f"tooltip={_dot_string(tip)}",
        f"class={_dot_string('edge-' + etype)}",
    ]
    return ", ".join(attrs + (["style=dashed"] if etype in DASHED_EDGES else []))


def to_dot(graph: ExportGraph) -> str:
    """Graphviz DOT; ``eksmllint graph --format dot PATH | dot -Tsvg > graph.svg``.

    Edges carry no labels (the title's legend names their colours) and identical edges are
    bundled through a junction point, as in the HTML drawing."""
    from eksmllint.render.legend import dot_title

    types = {e.type for e in graph.edges}
    legend = [
        (t, EDGE_COLORS.get(t, "#6b7280"), t in DASHED_EDGES)
        for t in [*EDGE_TYPES, *sorted(types - EDGE_TYPES.keys())]
        if t in types
    ]
    title = "eksmllint resource graph" + (f" (focus {graph.focus})" if graph.focus else "")
    lines = [
        "digraph eksmllint {",
        '  graph [rankdir=LR, fontname="Helvetica", nodesep=0.3, ranksep=1.1, label='
        + dot_title(title, legend)
        + ", labelloc=t];",
        '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10, penwidth=1.2];',
        '  edge [fontname="Helvetica", fontsize=8, arrowsize=0.7];',
    ]
    for n in graph.nodes.values():
        fill, stroke = SEVERITY_COLORS[_sev(n)]
        label_lines = [n.kind_label, n.title]
        if n.findings:
            label_lines.append(_finding_line(n))
        label = "\\n".join(_dot_string(x)[1:-1] for x in label_lines)
        tooltip = "; ".join(f"{f.code} {f.message}" for f in n.findings[:5]) or n.id
        attrs = [
            f'label="{label}"',
            f"fillcolor={_dot_string(fill)}",
            f"color={_dot_string(stroke)}",
            f"tooltip={_dot_string(tooltip)}",
            f"class={_dot_string('sev-' + (_sev(n) or 'none'))}",
        ]
        if n.type == "template":
            attrs.append('style="rounded,filled,dashed"')
        if n.severity is not None and n.severity >= Severity.ERROR:
            attrs.append("penwidth=2")
        lines.append(f"  {_dot_string(n.id)} [{', '.join(attrs)}];")
    bundles, plain = bundle_edges(graph.edges)
    for i, b in enumerate(bundles):  # a junction point; every node id holds a "/", so none collides
        junction = _dot_string(f"bundle:{i}")
        tip = f"{b.type}: {len(b.sources)} sources \u2192 {len(b.targets)} targets" + (
            f" ({', '.join(b.details[:8])})" if b.details else ""
        )
        color = _dot_string(EDGE_COLORS.get(b.type, "#6b7280"))
        lines.append(
            f'  {junction} [shape=point, width=0.08, color={color}, tooltip={_dot_string(tip)}, class="bundle"];'
        )
        edge_attrs = _dot_edge_attrs(b.type, tip)
        lines += [f"  {_dot_string(s)} -> {junction} [{edge_attrs}, arrowhead=none];" for s in b.sources]
        lines += [f"  {junction} -> {_dot_string(t)} [{edge_attrs}];" for t in b.targets]
    for e in plain:
        tip = e.type + (f" ({e.detail})" if e.detail else "")
        lines.append(f"  {_dot_string(e.source)} -> {_dot_string(e.target)} [{_dot_edge_attrs(e.type, tip)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _mermaid_text(text: str) -> str:
    """Mermaid label text: entity codes for the characters its grammar gives a meaning."""
    out = []
    for ch in text.replace("\r", " ").replace("\n", " "):
        if ch in '"#<>[]{}()|`;':
            out.append(f"#{ord(ch)};")
        else:
            out.append(ch)
    return "".join(out)


def to_mermaid(graph: ExportGraph) -> str:
    """Mermaid ``flowchart``: paste into a GitHub issue or Markdown file between ```mermaid fences."""
    ids = {nid: f"n{i}" for i, nid in enumerate(graph.nodes)}
    lines = ["flowchart LR"]
    if graph.focus:
        lines.append(f"  %% focus: {graph.focus.replace(chr(10), ' ')}")
    for nid, n in graph.nodes.items():
        text = f"{_mermaid_text(n.kind_label)}<br/><b>{_mermaid_text(n.title)}</b>"
        if n.findings:
            text += f"<br/>{_mermaid_text(_finding_line(n))}"
        shape = ('(["', '"])') if n.type == "template" else ('["', '"]')
        lines.append(f"  {ids[nid]}{shape[0]}{text}{shape[1]}")
    for e in graph.edges:
        arrow = "-.->" if e.type in DASHED_EDGES else "-->"
        lines.append(f"  {ids[e.source]} {arrow}|{e.type}| {ids[e.target]}")
    for sev in ("error", "warning", "info"):
        fill, stroke = SEVERITY_COLORS[sev]
        lines.append(f"  classDef {sev} fill:{fill},stroke:{stroke},stroke-width:2px,color:#111")
        members = [ids[nid] for nid, n in graph.nodes.items() if _sev(n) == sev]
        if members:
            lines.append(f"  class {','.join(members)} {sev}")
    return "\n".join(lines) + "\n"


def to_json_data(graph: ExportGraph) -> dict:
    """The graph as plain data (schema ``eksmllint-graph/1``): nodes with findings, typed edges."""
    return {
        "schema": "eksmllint-graph/1",
        "focus": graph.focus,
        "nodes": [
            {
                "id": n.id,
                "type": n.type,
                "kind": n.kind,
                "apiVersion": n.api_version or None,
                "namespace": n.namespace,
                "name": n.name,
                "role": n.role,
                "category": n.category,
                "owner": n.owner,
                "file": n.file,
                "line": n.line or None,
                "severity": _sev(n),
                "findings": [
                    {
                        "code": f.code,
                        "slug": f.slug,
                        "severity": str(f.severity),
                        "message": f.message,
                        "file": f.location.file,
                        "line": f.location.line,
                        "column": f.location.col,
                    }
                    for f in n.findings
                ],
            }
            for n in graph.nodes.values()
        ],
        "edges": [
            {"source": e.source, "target": e.target, "type": e.type, **({"detail": e.detail} if e.detail else {})}
            for e in graph.edges
        ],
    }


def to_json(graph: ExportGraph) -> str:
    return json.dumps(to_json_data(graph), indent=2) + "\n"
