"""The resource graph drawn as inline SVG, with the layout computed here (no Graphviz, no JS).

Layered left to right, the way a platform reads: workloads -> pod templates -> NodePools,
volumes, queues -> EC2NodeClasses, StorageClasses. Each node gets the column its category
prefers, pushed right until every edge points forward (the graph is a DAG by construction; a
cycle, should one appear, falls back to the preferred columns). Within a column, nodes are ordered
by a few barycentre sweeps (fewer crossings) and then placed as close to their neighbours'
average height as the spacing allows (an exact isotonic fit, pool-adjacent-violators).

Readable at size: the drawing is never scaled down (the box scrolls sideways instead), so its
labels render at their nominal size (11.5 px and more), and five columns fit the report's width
at 1366 px. Edges carry no labels (a legend names the kinds by colour), and identical edges are
bundled (:func:`bundle_edges`): 76 pod templates blocked by the same 21 NodePools are 97 curves
through one junction, not 1596 crossing lines.
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
    Bundle,
    ExportEdge,
    ExportGraph,
    ExportNode,
    bundle_edges,
)

NODE_W, NODE_H, TEMPLATE_H = 190, 46, 38
ROW_GAP, MARGIN = 14, 16
#: The report's drawing width at 1366 px (main 1280 - 2*28 padding - the box's 2*11): the gaps
#: between columns share what the boxes leave of it, at least COL_GAP each.
FIT_WIDTH, COL_GAP = 1200, 30
# average advance of a kind-line glyph (11.5px) and of a bold name glyph (12.5px), to truncate
# text that would overflow its box (the full id is in the node's tooltip)
CHAR_W, NAME_CHAR_W = 6.5, 7.6

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
#: Edges laid out against their direction: a NodePool stays next to the templates that land on it
#: and the Kueue chain (LocalQueue -> ClusterQueue -> ResourceFlavor) ends to its right, instead of
#: pushing every NodePool and EC2NodeClass three columns out. The arrow still points at the target.
LAYOUT_REVERSED = frozenset({"flavor-of"})
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
    g.add_edges_from(_layout_pair(e) for e in graph.edges if e.source != e.target)
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
    xs = _column_xs(columns, g)
    placed: dict[str, Placed] = {}
    for ci, ids in columns.items():
        for nid in ids:
            n = graph.nodes[nid]
            placed[nid] = Placed(n, ci, x=xs[ci], h=TEMPLATE_H if n.type == "template" else NODE_H)
    _place_vertically(columns, placed, g)
    width = xs[-1] + NODE_W + MARGIN
    height = MARGIN * 2 + max((p.y + p.h for p in placed.values()), default=0) - MARGIN
    return placed, width, max(height, NODE_H + 2 * MARGIN)


def _column_xs(columns: dict[int, list[str]], g) -> list[float]:
    """Left x of each column. The room the boxes leave in FIT_WIDTH goes to the gaps in proportion
    to the edges ending in the column after them: the gap before the volumes, configs and
    NodePools, where most edges run, gets the most."""
    n = max(len(columns), 1)
    into = [0] * n
    column_of = {nid: ci for ci, ids in columns.items() for nid in ids}
    for _, dst in g.edges:
        into[column_of[dst]] += 1
    spare = max(FIT_WIDTH - 2 * MARGIN - n * NODE_W - (n - 1) * COL_GAP, 0)
    weights = [into[ci] + 1 for ci in range(1, n)]
    xs = [float(MARGIN)]
    for w in weights:
        xs.append(xs[-1] + NODE_W + COL_GAP + spare * w / sum(weights))
    return xs


def _layout_pair(e: ExportEdge) -> tuple[str, str]:
    return (e.target, e.source) if e.type in LAYOUT_REVERSED else (e.source, e.target)


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


def _first(lines: list[str], limit: int) -> list[str]:
    """At most ``limit`` lines of a tooltip, then how many were left out."""
    return lines[:limit] + ([f"... and {len(lines) - limit} more"] if len(lines) > limit else [])


def _node_svg(p: Placed, linked: bool) -> str:
    n = p.node
    sev = str(n.severity) if n.severity else None
    fill, stroke = SEVERITY_COLORS[sev]
    x, y, h = p.x, p.y, p.h
    tip = [n.id]
    if n.file:
        tip.append(f"{n.file}:{n.line}" if n.line else n.file)
    tip += _first([f"{f.code} [{f.severity}] {f.message}" for f in n.findings], 8)
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
            f'<text x="{x + 12:.1f}" y="{y + 30:.1f}" class="n">{escape(_truncate(n.title, text_w, NAME_CHAR_W))}</text>'
        )
    else:
        # namespace on the kind line: the name gets the whole bold line
        kind = _SHORT_KINDS.get(n.kind_label, n.kind_label)
        kind_line = f"{kind} \u00b7 {n.namespace}" if n.namespace else kind
        parts.append(f'<text x="{x + 12:.1f}" y="{y + 17:.1f}" class="k">{escape(_truncate(kind_line, text_w))}</text>')
        parts.append(
            f'<text x="{x + 12:.1f}" y="{y + 34:.1f}" class="n">{escape(_truncate(n.name, text_w, NAME_CHAR_W))}</text>'
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


def _curve(x1: float, y1: float, x2: float, y2: float) -> str:
    mid = (x2 - x1) * 0.5
    return f"M{x1:.1f},{y1:.1f} C{x1 + mid:.1f},{y1:.1f} {x2 - mid:.1f},{y2:.1f} {x2:.1f},{y2:.1f}"


def _edge_style(etype: str) -> str:
    dash = ' stroke-dasharray="5 4"' if etype in DASHED_EDGES else ""
    if etype in FAINT_EDGES:
        dash += ' stroke-opacity="0.45"'
    return f'fill="none" stroke="{EDGE_COLORS.get(etype, "#6b7280")}" stroke-width="1.4"{dash}'


def _bundle_svg(b: Bundle, placed: dict[str, Placed], column_xs: list[float]) -> str | None:
    """The bundle through a junction in the middle of the gap before its targets; None when a
    source stands in or after that gap's left column, and the edges are drawn one by one."""
    srcs = [placed[s] for s in b.sources]
    dsts = [placed[t] for t in b.targets]
    left = max((x for x in column_xs if x < min(d.x for d in dsts)), default=None)
    if left is None or max(s.x for s in srcs) > left:
        return None
    jx = (left + NODE_W + min(d.x for d in dsts)) / 2
    jy = sum(d.cy for d in dsts) / len(dsts)
    style = _edge_style(b.type)
    curves = [f'<path d="{_curve(s.x + NODE_W, s.cy, jx, jy)}" {style}/>' for s in srcs]
    curves += [f'<path d="{_curve(jx, jy, d.x - 2, d.cy)}" {style} marker-end="url(#arrow-{b.type})"/>' for d in dsts]
    tip = [f"{b.type}: {len(b.sources)} \u2192 {len(b.targets)} (each source to each target)"]
    tip += _first([f"from {s}" for s in b.sources], 12) + _first([f"to {t}" for t in b.targets], 12)
    if b.details:
        tip.append("detail: " + ", ".join(b.details[:8]))
    return (
        f'<g class="bundle edge-{b.type}" data-type="{b.type}" data-sources="{len(b.sources)}"'
        f' data-targets="{len(b.targets)}"><title>{escape(chr(10).join(tip))}</title>{"".join(curves)}'
        f'<circle class="junction" cx="{jx:.1f}" cy="{jy:.1f}" r="4" fill="{EDGE_COLORS.get(b.type, "#6b7280")}"/></g>'
    )


def _edge_svg(src: Placed, dst: Placed, etype: str, detail: str | None, offset: float) -> str:
    x1, y1 = src.x + NODE_W, src.cy + offset
    x2, y2 = dst.x, dst.cy + offset
    marker = "marker-end"
    if etype in LAYOUT_REVERSED and dst.x < src.x:  # from the target's right side, arrowhead there
        d, marker = _curve(dst.x + NODE_W + 2, y2, src.x, y1), "marker-start"
    elif dst.x <= src.x:  # same or earlier column (only on a cyclic graph): loop around the right
        x2 = dst.x + NODE_W
        bend = COL_GAP * 0.6
        d = f"M{x1:.1f},{y1:.1f} C{x1 + bend:.1f},{y1:.1f} {x2 + bend:.1f},{y2:.1f} {x2:.1f},{y2:.1f}"
    else:
        d = _curve(x1, y1, x2 - 2, y2)
    title = f"{src.node.id} \u2192 {dst.node.id}: {etype}" + (f" ({detail})" if detail else "")
    return (
        f'<path class="edge edge-{etype}" data-type="{etype}" d="{d}" {_edge_style(etype)}'
        f' {marker}="url(#arrow-{etype})"><title>{escape(title)}</title></path>'
    )


@dataclass(frozen=True)
class Drawing:
    svg: str
    bundles: int  # junctions drawn (a bundle whose sources sit right of its targets is drawn edge by edge)


def render_svg(graph: ExportGraph, *, linked: set[str] | None = None, title: str = "Resource graph") -> str:
    """The graph as one ``<svg>`` element (no external references: fonts come from the page)."""
    return draw_svg(graph, linked=linked, title=title).svg


def draw_svg(graph: ExportGraph, *, linked: set[str] | None = None, title: str = "Resource graph") -> Drawing:
    """The graph drawn, and what the legend must explain.

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
    drawable = [e for e in graph.edges if e.source in placed and e.target in placed]
    bundles, plain = bundle_edges(drawable)
    edges_svg = []
    curves = 0
    column_xs = sorted({p.x for p in placed.values()})
    for b in list(bundles):
        drawn = _bundle_svg(b, placed, column_xs)
        if drawn is None:
            bundles.remove(b)
            plain += [e for e in drawable if e.type == b.type and e.source in b.sources and e.target in b.targets]
        else:
            edges_svg.append(drawn)
            curves += len(b.sources) + len(b.targets)
    # parallel edges of different types between one pair are fanned out a little
    pair_count: dict[tuple[str, str], int] = {}
    for e in plain:
        k = pair_count.get((e.source, e.target), 0)
        pair_count[(e.source, e.target)] = k + 1
        edges_svg.append(_edge_svg(placed[e.source], placed[e.target], e.type, e.detail, (k % 3) * 4 - (4 if k else 0)))
        curves += 1
    nodes_svg = [_node_svg(p, (p.node.owner or p.node.id) in linked) for p in placed.values()]
    style = (
        "<style>"
        ".eml-graph text{font-family:-apple-system,'Segoe UI',Roboto,'DejaVu Sans',Arial,sans-serif}"
        ".eml-graph .k{font-size:11.5px;fill:#4b5563}"
        ".eml-graph .n{font-size:12.5px;font-weight:600;fill:#111827}"
        ".eml-graph .badge{font-size:11.5px;font-weight:700;fill:#fff}"
        ".eml-graph a.node-link:hover rect{filter:brightness(0.96)}"
        "</style>"
    )
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="eml-graph" role="img" aria-label="{escape(title)}"'
        f' viewBox="0 0 {width:.0f} {height:.0f}" width="{width:.0f}" height="{height:.0f}"'
        f' data-nodes="{len(placed)}" data-edges="{len(drawable)}" data-curves="{curves}" data-bundles="{len(bundles)}">'
        f"<title>{escape(title)}</title>{style}<defs>{markers}</defs>"
        f'<g class="edges">{"".join(edges_svg)}</g><g class="nodes">{"".join(nodes_svg)}</g></svg>'
    )
    return Drawing(svg, len(bundles))


def legend_html(graph: ExportGraph, *, bundled: bool = False) -> str:
    """Legend for the SVG (HTML, so it wraps on narrow screens and prints with the page);
    ``bundled``: the drawing has junctions (:attr:`Drawing.bundles`)."""
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
    if bundled:
        edge_items += (
            '<span class="lg"><i class="junction"></i>bundle: edges of one kind from several sources to the same'
            " targets meet in a dot (hover it for the members)</span>"
        )
    return (
        f'<div class="legend"><div><strong>Node colour</strong> (worst finding): {sev_items}</div>'
        f"<div><strong>Stripe</strong>: {cat_items}</div>"
        + (f"<div><strong>Edges</strong> (by colour and dash, no labels): {edge_items}</div>" if edge_items else "")
        + "</div>"
    )
