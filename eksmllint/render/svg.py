"""The resource graph drawn as inline SVG, with the layout computed here (no Graphviz, no JS).

Layered left to right, the way a platform reads: workloads -> pod templates -> NodePools,
volumes, queues -> EC2NodeClasses, StorageClasses. Each node gets the column its category
prefers, pushed right until every edge points forward (the graph is a DAG by construction; a
cycle, should one appear, falls back to the preferred columns). Within a column, nodes are ordered
by a few barycentre sweeps (fewer crossings) and then placed as close to their neighbours'
average height as the spacing allows (an exact isotonic fit, pool-adjacent-violators).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from html import escape

from eksmllint.render.graph_export import (
    CATEGORIES,
    DASHED_EDGES,
    EDGE_COLORS,
    EDGE_TYPES,
    SEVERITY_COLORS,
    ExportGraph,
    ExportNode,
)

NODE_W, NODE_H, TEMPLATE_H = 210, 46, 38
COL_GAP, ROW_GAP, MARGIN = 110, 14, 16
CHAR_W = 6.1  # average advance of an 11px sans-serif glyph, to truncate names that would overflow

#: Column a category prefers (smaller = further left).
PREFERRED_COLUMN: dict[str, int] = {
    "workload": 0,
    "daemonset": 0,
    "template": 1,
    "queue": 2,
    "nodepool": 2,
    "storage": 2,
    "config": 2,
    "scheduling": 2,
    "other": 2,
    "nodeclass": 3,
    "instance": 3,
}
#: Edges every template has (priority, service account): drawn faint so the placement edges stand out.
FAINT_EDGES = frozenset({"has-priority", "runs-as"})
_SECOND_TIER_KINDS = frozenset({"StorageClass", "PersistentVolume", "ClusterQueue", "ResourceFlavor"})

#: Kinds too long for a box, in the abbreviations kubectl users know (full kind in the tooltip).
_SHORT_KINDS = {"PersistentVolumeClaim": "PVC", "PersistentVolume": "PV", "HorizontalPodAutoscaler": "HPA"}

CATEGORY_STRIPE: dict[str, str] = {
    "workload": "#3949ab",
    "daemonset": "#5e35b1",
    "template": "#90a4ae",
    "queue": "#a15c00",
    "nodepool": "#2e7d32",
    "nodeclass": "#6a1b9a",
    "storage": "#00838f",
    "config": "#546e7a",
    "scheduling": "#795548",
    "instance": "#1f6fb2",
    "other": "#9e9e9e",
}


@dataclass
class Placed:
    node: ExportNode
    column: int
    x: float = 0.0
    y: float = 0.0
    h: float = NODE_H

    @property
    def cy(self) -> float:
        return self.y + self.h / 2


def dom_id(prefix: str, text: str) -> str:
    """An HTML id for ``text``: readable, safe in CSS selectors and URLs, unique by a short hash."""
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-")[:60]
    return f"{prefix}{slug}-{hashlib.sha1(text.encode('utf-8')).hexdigest()[:6]}"


def resource_anchor(resource_id: str) -> str:
    """Anchor of a resource's findings card in the HTML report (shared with html.py)."""
    return dom_id("res-", resource_id)


# --- layout -----------------------------------------------------------------------------------


def _preferred(n: ExportNode) -> int:
    col = PREFERRED_COLUMN.get(n.category, 2)
    if n.kind in _SECOND_TIER_KINDS:
        col = 3
    return col


def layout(graph: ExportGraph) -> tuple[dict[str, Placed], float, float]:
    """Positions of every node; returns (placed by id, width, height)."""
    import networkx as nx

    g = nx.DiGraph()
    g.add_nodes_from(graph.nodes)
    g.add_edges_from((e.source, e.target) for e in graph.edges if e.source != e.target)
    column = {nid: _preferred(n) for nid, n in graph.nodes.items()}
    if nx.is_directed_acyclic_graph(g):
        for nid in nx.topological_sort(g):
            for pred in g.predecessors(nid):
                column[nid] = max(column[nid], column[pred] + 1)
    columns: dict[int, list[str]] = {}
    for nid in graph.nodes:
        columns.setdefault(column[nid], []).append(nid)
    # compact: drop empty columns so a graph of NodePools alone does not start two columns in
    order = sorted(columns)
    columns = {i: columns[c] for i, c in enumerate(order)}
    for ids in columns.values():
        ids.sort(key=lambda nid: _sort_key(graph.nodes[nid]))
    _reduce_crossings(columns, g, {nid for nid, n in graph.nodes.items() if n.owner})
    placed: dict[str, Placed] = {}
    for ci, ids in columns.items():
        for nid in ids:
            n = graph.nodes[nid]
            placed[nid] = Placed(
                n, ci, x=MARGIN + ci * (NODE_W + COL_GAP), h=TEMPLATE_H if n.type == "template" else NODE_H
            )
    _place_vertically(columns, placed, g)
    width = MARGIN * 2 + max(len(columns), 1) * (NODE_W + COL_GAP) - COL_GAP
    height = MARGIN * 2 + max((p.y + p.h for p in placed.values()), default=0) - MARGIN
    return placed, width, max(height, NODE_H + 2 * MARGIN)


def _sort_key(n: ExportNode) -> tuple:
    return (
        list(CATEGORIES).index(n.category) if n.category in CATEGORIES else 99,
        n.owner or n.id,
        n.kind,
        n.namespace or "",
        n.name,
        n.role or "",
    )


def _reduce_crossings(columns: dict[int, list[str]], g, owners: AbstractSet[str] = frozenset()) -> None:
    """Barycentre heuristic: sort each column by the mean position of its neighbours in the
    previous column (then, sweeping back, the next); four sweeps are plenty at this size.

    Pod templates (``owners``) always follow their workload: ordering them by what they mount
    would scatter one job's templates across the column.
    """
    for sweep in range(4):
        forward = sweep % 2 == 0
        seq = sorted(columns) if forward else sorted(columns, reverse=True)
        for ci in seq[1:]:
            prev = {nid: i for i, nid in enumerate(columns.get(ci - 1, []))}
            nxt = {nid: i for i, nid in enumerate(columns.get(ci + 1, []))}
            current = {nid: i for i, nid in enumerate(columns[ci])}

            def bary(nid: str, forward=forward, prev=prev, nxt=nxt, current=current) -> float:
                if forward or nid in owners:
                    ref, nbrs = prev, g.predecessors(nid)
                else:
                    ref, nbrs = nxt, g.successors(nid)
                pos = [ref[m] for m in nbrs if m in ref]
                if pos:
                    return sum(pos) / len(pos)
                return current[nid] * (max(len(ref), 1) / max(len(current), 1))  # keep its place

            columns[ci].sort(key=lambda nid: (bary(nid), current[nid]))


def _place_vertically(columns: dict[int, list[str]], placed: dict[str, Placed], g) -> None:
    # start: each column stacked from the top
    for ids in columns.values():
        y: float = MARGIN
        for nid in ids:
            placed[nid].y = y
            y += placed[nid].h + ROW_GAP
    # then pull every node towards its neighbours' mean height, keeping order and spacing
    for sweep in range(6):
        seq = sorted(columns) if sweep % 2 == 0 else sorted(columns, reverse=True)
        for ci in seq:
            ids = columns[ci]
            desired = []
            for nid in ids:
                nbrs = [placed[m].cy for m in list(g.predecessors(nid)) + list(g.successors(nid)) if m in placed]
                desired.append(sum(nbrs) / len(nbrs) - placed[nid].h / 2 if nbrs else placed[nid].y)
            ys = _isotonic_spaced(desired, [placed[nid].h + ROW_GAP for nid in ids])
            for nid, y in zip(ids, ys):
                placed[nid].y = y
    top = min((p.y for p in placed.values()), default=MARGIN)
    for p in placed.values():
        p.y += MARGIN - top


def _isotonic_spaced(desired: list[float], gaps: list[float]) -> list[float]:
    """Heights closest (least squares) to ``desired`` with y[i+1] >= y[i] + gaps[i]."""
    if not desired:
        return []
    offsets = [0.0]
    for gap in gaps[:-1]:
        offsets.append(offsets[-1] + gap)
    z = [d - o for d, o in zip(desired, offsets)]
    blocks: list[list[float]] = []  # [mean, weight]
    for v in z:
        blocks.append([v, 1.0])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            m2, w2 = blocks.pop()
            m1, w1 = blocks.pop()
            blocks.append([(m1 * w1 + m2 * w2) / (w1 + w2), w1 + w2])
    fitted: list[float] = []
    for mean, weight in blocks:
        fitted.extend([mean] * int(weight))
    return [f + o for f, o in zip(fitted, offsets)]


# --- drawing ----------------------------------------------------------------------------------


def _truncate(text: str, width: float, char_w: float = CHAR_W) -> str:
    limit = max(int(width / char_w), 4)
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _node_svg(p: Placed, linked: bool) -> str:
    n = p.node
    sev = str(n.severity) if n.severity else None
    fill, stroke = SEVERITY_COLORS[sev]
    x, y, h = p.x, p.y, p.h
    tip = [n.id]
    if n.file:
        tip.append(f"{n.file}:{n.line}" if n.line else n.file)
    tip += [f"{f.code} [{f.severity}] {f.message}" for f in n.findings[:8]]
    if len(n.findings) > 8:
        tip.append(f"... and {len(n.findings) - 8} more")
    classes = f"node node-{n.type} sev-{sev or 'none'}"
    dash = ' stroke-dasharray="4 3"' if n.type == "template" else ""
    width_px = 2.2 if sev == "error" else 1.4
    parts = [
        f'<g class="{classes}" data-node-id="{escape(n.id)}" data-type="{n.type}" data-category="{n.category}"'
        f' data-severity="{sev or "none"}" data-findings="{len(n.findings)}">',
        f"<title>{escape(chr(10).join(tip))}</title>",
        f'<rect x="{x:.1f}" y="{y:.1f}" width="{NODE_W}" height="{h}" rx="7" fill="{fill}" stroke="{stroke}"'
        f' stroke-width="{width_px}"{dash}/>',
        f'<rect x="{x + 1:.1f}" y="{y + 5:.1f}" width="4" height="{h - 10}" rx="2"'
        f' fill="{CATEGORY_STRIPE.get(n.category, "#9e9e9e")}"/>',
    ]
    text_w = NODE_W - 22 - (26 if n.findings else 0)
    if n.type == "template":
        parts.append(
            f'<text x="{x + 12:.1f}" y="{y + 15:.1f}" class="k">{escape(_truncate("pod template", text_w))}</text>'
        )
        parts.append(
            f'<text x="{x + 12:.1f}" y="{y + 30:.1f}" class="n">{escape(_truncate(n.title, text_w, 6.6))}</text>'
        )
    else:
        # namespace on the kind line: the name gets the whole bold line
        kind = _SHORT_KINDS.get(n.kind_label, n.kind_label)
        kind_line = f"{kind} \u00b7 {n.namespace}" if n.namespace else kind
        parts.append(f'<text x="{x + 12:.1f}" y="{y + 17:.1f}" class="k">{escape(_truncate(kind_line, text_w))}</text>')
        parts.append(
            f'<text x="{x + 12:.1f}" y="{y + 34:.1f}" class="n">{escape(_truncate(n.name, text_w, 6.6))}</text>'
        )
    if n.findings:
        cx, cy = x + NODE_W - 17, y + h / 2
        parts.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="11" fill="{stroke}"/>')
        parts.append(f'<text x="{cx:.1f}" y="{cy + 4:.1f}" class="badge" text-anchor="middle">{len(n.findings)}</text>')
    parts.append("</g>")
    body = "".join(parts)
    if linked:
        return f'<a href="#{resource_anchor(n.owner or n.id)}" class="node-link">{body}</a>'
    return body


def _edge_svg(src: Placed, dst: Placed, etype: str, detail: str | None, offset: float) -> str:
    color = EDGE_COLORS.get(etype, "#6b7280")
    x1, y1 = src.x + NODE_W, src.cy + offset
    x2, y2 = dst.x, dst.cy + offset
    if dst.x <= src.x:  # same or earlier column (only on a cyclic graph): loop around the right
        x2 = dst.x + NODE_W
        bend = COL_GAP * 0.6
        d = f"M{x1:.1f},{y1:.1f} C{x1 + bend:.1f},{y1:.1f} {x2 + bend:.1f},{y2:.1f} {x2:.1f},{y2:.1f}"
    else:
        mid = (x2 - x1) * 0.5
        d = f"M{x1:.1f},{y1:.1f} C{x1 + mid:.1f},{y1:.1f} {x2 - mid:.1f},{y2:.1f} {x2 - 2:.1f},{y2:.1f}"
    dash = ' stroke-dasharray="5 4"' if etype in DASHED_EDGES else ""
    if etype in FAINT_EDGES:
        dash += ' stroke-opacity="0.45"'

    title = f"{src.node.id} \u2192 {dst.node.id}: {etype}" + (f" ({detail})" if detail else "")
    return (
        f'<path class="edge edge-{etype}" data-type="{etype}" d="{d}" fill="none" stroke="{color}"'
        f' stroke-width="1.4"{dash} marker-end="url(#arrow-{etype})"><title>{escape(title)}</title></path>'
    )


def render_svg(graph: ExportGraph, *, linked: set[str] | None = None, title: str = "Resource graph") -> str:
    """The graph as one ``<svg>`` element (no external references: fonts come from the page).

    ``linked`` holds resource ids that have a findings card to jump to in the HTML report.
    """
    placed, width, height = layout(graph)
    linked = linked or set()
    used_types = sorted(
        {e.type for e in graph.edges}, key=lambda t: list(EDGE_TYPES).index(t) if t in EDGE_TYPES else 99
    )
    markers = "".join(
        f'<marker id="arrow-{t}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7"'
        f' orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{EDGE_COLORS.get(t, "#6b7280")}"/></marker>'
        for t in used_types
    )
    # parallel edges of different types between one pair are fanned out a little
    pair_count: dict[tuple[str, str], int] = {}
    edges_svg = []
    for e in graph.edges:
        if e.source not in placed or e.target not in placed:
            continue
        k = pair_count.get((e.source, e.target), 0)
        pair_count[(e.source, e.target)] = k + 1
        edges_svg.append(_edge_svg(placed[e.source], placed[e.target], e.type, e.detail, (k % 3) * 4 - (4 if k else 0)))
    nodes_svg = [_node_svg(p, (p.node.owner or p.node.id) in linked) for p in placed.values()]
    style = (
        "<style>"
        ".eml-graph text{font-family:-apple-system,'Segoe UI',Roboto,'DejaVu Sans',Arial,sans-serif}"
        ".eml-graph .k{font-size:10.5px;fill:#4b5563}"
        ".eml-graph .n{font-size:12px;font-weight:600;fill:#111827}"
        ".eml-graph .badge{font-size:11px;font-weight:700;fill:#fff}"
        ".eml-graph a.node-link:hover rect{filter:brightness(0.96)}"
        "</style>"
    )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="eml-graph" role="img" aria-label="{escape(title)}"'
        f' viewBox="0 0 {width:.0f} {height:.0f}" width="{width:.0f}" height="{height:.0f}"'
        f' data-nodes="{len(placed)}" data-edges="{len(edges_svg)}">'
        f"<title>{escape(title)}</title>{style}<defs>{markers}</defs>"
        f'<g class="edges">{"".join(edges_svg)}</g><g class="nodes">{"".join(nodes_svg)}</g></svg>'
    )


def legend_html(graph: ExportGraph) -> str:
    """Legend for the SVG (HTML, so it wraps on narrow screens and prints with the page)."""
    cats = sorted(
        {n.category for n in graph.nodes.values()}, key=lambda c: list(CATEGORIES).index(c) if c in CATEGORIES else 99
    )
    types = [t for t in EDGE_TYPES if any(e.type == t for e in graph.edges)]
    sev_items = "".join(
        f'<span class="lg"><i style="background:{SEVERITY_COLORS[s][0]};border:2px solid {SEVERITY_COLORS[s][1]}"></i>{label}</span>'
        for s, label in (("error", "error"), ("warning", "warning"), ("info", "info"), (None, "no findings"))
    )
    cat_items = "".join(
        f'<span class="lg"><i style="background:{CATEGORY_STRIPE.get(c, "#9e9e9e")}"></i>{escape(CATEGORIES.get(c, c))}</span>'
        for c in cats
    )
    edge_items = "".join(
        f'<span class="lg" title="{escape(EDGE_TYPES[t])}"><b class="ln{" dash" if t in DASHED_EDGES else ""}"'
        f' style="border-color:{EDGE_COLORS[t]}"></b>{escape(t)}</span>'
        for t in types
    )
    return (
        f'<div class="legend"><div><strong>Node colour</strong> (worst finding): {sev_items}</div>'
        f"<div><strong>Stripe</strong>: {cat_items}</div>"
        + (f"<div><strong>Edges</strong>: {edge_items}</div>" if edge_items else "")
        + "</div>"
    )
