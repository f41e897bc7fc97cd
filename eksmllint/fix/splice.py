"""Text edits for one node: replace it, add a key, append an item, remove a key or item.

Each function takes the parsed :class:`~eksmllint.fix.spans.Stream` and returns the whole new
text; only the bytes of the edited node (and the line(s) it occupies when a key or item is added
or removed) change. Inserted keys go after the last key of their mapping, appended items after
the last item, each indented like its siblings.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from eksmllint.fix.render import (
    Style,
    block_lines,
    flow_text,
    is_collection,
    literal_block,
    scalar_text,
)
from eksmllint.fix.spans import FixError, Step, Stream, is_flow, walk

_PROPS = re.compile(r"((?:[&!][^\s,\[\]{}]*\s+)*)")
_STR_TAG = "tag:yaml.org,2002:str"
_HEADER = re.compile(r"[|>][-+0-9]*")


def _splice(text: str, start: int, end: int, new: str) -> str:
    return text[:start] + new + text[end:]


def _props(st: Stream, node: Node) -> str:
    """Anchor/tag text before a node's content (``&a !!str ``)."""
    m = _PROPS.match(st.text, node.start_mark.index)
    return m.group(1) if m else ""


def _insert_after_line(st: Stream, pos: int, lines: list[str], style: Style) -> str:
    nl = style.newline
    end = st.line_end(pos)
    block = nl.join(lines)
    if end >= len(st.text):  # last line without a newline: keep it that way
        return st.text + nl + block
    return _splice(st.text, end + 1, end + 1, block + nl)


def _delete_lines(st: Stream, first: int, last_pos: int) -> str:
    """Remove whole lines from the one holding ``first`` through the one holding ``last_pos``."""
    start = st.line_start(first)
    end = st.line_end(last_pos)
    if end < len(st.text):
        return _splice(st.text, start, end + 1, "")
    if start > 0:  # unterminated last line: drop the preceding break instead, keep "no final newline"
        brk = 2 if st.text[start - 2 : start] == "\r\n" else 1
        return _splice(st.text, start - brk, end, "")
    return _splice(st.text, start, end, "")


def _in_flow(step: Step) -> bool:
    return step.parent is not None and is_flow(step.parent)


def _flow_item(st: Stream, coll: Node, last_start: int, value: Any, style: Style, key: str | None = None) -> str:
    """The text added after a flow collection's last item: ``, item`` on one-line collections;
    on collections whose items stand on their own lines, a new line (pretty JSON for JSON files)."""
    head = f"{key}: " if key is not None else ""
    if st.line_start(last_start) == st.line_start(coll.start_mark.index):
        return ", " + head + flow_text(value, style)
    col = st.column(last_start)
    if style.json and isinstance(value, (dict, list)) and value:
        line = st.text[st.line_start(coll.start_mark.index) :]
        step = col - (len(line) - len(line.lstrip(" ")))
        body = json.dumps(value, indent=step if step > 0 else 2, ensure_ascii=False)
        body = body.replace("\n", style.newline + " " * col)
    else:
        body = flow_text(value, style)
    return "," + style.newline + " " * col + head + body


# -- replace ------------------------------------------------------------------------------------
def replace_value(st: Stream, step: Step, value: Any, style: Style) -> str:
    """Replace the node at ``step`` with ``value``."""
    node = step.node
    text = st.text
    in_flow = _in_flow(step) or style.json
    start = node.start_mark.index
    props = _props(st, node)
    anchor = " ".join(p for p in props.split() if p.startswith("&"))
    anchor = anchor + " " if anchor else ""
    content = start + len(props)
    end = st.content_end(node)
    block_coll = isinstance(node, (MappingNode, SequenceNode)) and not is_flow(node) and bool(node.value)
    if block_coll:  # a comment after the old block's last value belongs to that block
        end = _through_comment(st, end)

    if not is_collection(value):
        if isinstance(node, ScalarNode):
            if isinstance(value, str) and node.style in ("|", ">") and not in_flow:
                col = _block_scalar_indent(st, node, step, style)
                lit = literal_block(value, col, style)
                if lit is not None:
                    header, _, body = lit.partition(style.newline)
                    m = _HEADER.match(text, content)
                    comment = text[m.end() : st.line_end(content)].rstrip("\r") if m else ""
                    if comment.strip().startswith("#"):  # keep "|  # note" on the header line
                        lit = header + comment + style.newline + body
                    return _splice(text, start, end, anchor + lit)
            like = node.style if node.style in ("'", '"') and isinstance(value, str) else None
            new = anchor + scalar_text(value, style, flow=in_flow, like=like)
            if start == end and start > 0 and not text[start - 1].isspace():
                new = " " + new
            return _splice(text, start, end, new)
        new = anchor + scalar_text(value, style, flow=in_flow)
        if block_coll and step.parent is not None and isinstance(step.parent, MappingNode):
            colon = st.colon_after(step.key_node.end_mark.index)
            return _splice(text, colon, end, " " + new)
        return _splice(text, start, end, new)

    quote = _uniform_quote(node)
    if quote:
        style = replace(style, force_quote=quote)
    if in_flow or (is_flow(node) and node.value):
        return _splice(text, start, end, anchor + flow_text(value, style))
    if isinstance(step.parent, MappingNode):
        key_col = step.key_node.start_mark.column
        col = key_col + (style.indent if isinstance(value, dict) else style.seq_indent)
        colon = st.colon_after(step.key_node.end_mark.index)
        lines = block_lines(value, col, style)
        if not block_coll:
            tail_end = st.line_end(end)
            tail = text[end:tail_end].rstrip("\r")
            if tail.strip().startswith("#"):  # keep a trailing comment on the key's line
                return _splice(text, colon, end + len(tail), tail + style.newline + style.newline.join(lines))
        lead = " " + anchor.rstrip() if anchor else ""
        return _splice(text, colon, end, lead + style.newline + style.newline.join(lines))
    if isinstance(step.parent, SequenceNode):
        if start == end:  # a null item: nothing after its "-"
            col = st.column(st.dash_before(start)) + style.item_offset
            lead = " " * max(1, col - st.column(start))
        else:
            col = st.column(start) + len(anchor)
            lead = ""
        lines = block_lines(value, col, style)
        rest = "".join(style.newline + ln for ln in lines[1:])
        return _splice(text, start, end, lead + anchor + lines[0][col:] + rest)
    # the document root
    lines = block_lines(value, st.column(start), style)
    return _splice(text, start, end, anchor + lines[0].lstrip(" ") + "".join(style.newline + ln for ln in lines[1:]))


def _through_comment(st: Stream, end: int) -> int:
    tail = st.text[end : st.line_end(end)].rstrip("\r")
    return end + len(tail) if tail.strip().startswith("#") else end


def _uniform_quote(node: Node) -> str | None:
    """The quote character every string scalar of a collection uses, if they all use one."""
    if not isinstance(node, (MappingNode, SequenceNode)):
        return None
    styles = {n.style for n in walk(node) if isinstance(n, ScalarNode) and n.tag == _STR_TAG}
    if len(styles) == 1 and (q := styles.pop()) in ("'", '"'):
        return q
    return None


def _block_scalar_indent(st: Stream, node: ScalarNode, step: Step, style: Style) -> int:
    raw = st.text[node.start_mark.index : node.end_mark.index]
    for line in raw.split("\n")[1:]:
        if line.strip():
            return len(line) - len(line.lstrip(" "))
    base = step.key.start_mark.column if step.key is not None else st.column(node.start_mark.index)
    return base + style.indent


# -- insert -------------------------------------------------------------------------------------
def insert_key(st: Stream, step: Step, key: Any, value: Any, style: Style) -> str:
    """Add ``key: value`` at the end of the mapping at ``step`` (the key is known to be absent)."""
    m = step.node
    if not isinstance(m, MappingNode):
        raise FixError("not a mapping")
    if is_flow(m) or style.json:
        if not m.value:
            return replace_value(st, step, {key: value}, style)
        last_key, last_val = m.value[-1]
        pos = st.content_end(last_val)
        item = _flow_item(st, m, last_key.start_mark.index, value, style, scalar_text(key, style, flow=True))
        return _splice(st.text, pos, pos, item)
    first = m.value[0][0]
    col = first.start_mark.column
    lines = block_lines({key: value}, col, style)
    end = st.content_end(m)
    if st.line_end(end) >= len(st.text) and _ends_in_block_scalar(m):
        # The mapping ends the file with a block scalar and no final newline: a key after it
        # would add a line break to that scalar's value. Put the key first if that is clean.
        at = first.start_mark.index
        if not st.text[st.line_start(at) : at].strip():
            at = st.line_start(at)
            return _splice(st.text, at, at, style.newline.join(lines) + style.newline)
    return _insert_after_line(st, end, lines, style)


def _ends_in_block_scalar(node: Node) -> bool:
    while isinstance(node, (MappingNode, SequenceNode)) and not is_flow(node) and node.value:
        node = node.value[-1][1] if isinstance(node, MappingNode) else node.value[-1]
    return isinstance(node, ScalarNode) and node.style in ("|", ">")


def append_item(st: Stream, step: Step, value: Any, style: Style) -> str:
    """Add ``value`` after the last item of the sequence at ``step``."""
    s = step.node
    if not isinstance(s, SequenceNode):
        raise FixError("not a list")
    if is_flow(s) or style.json:
        if not s.value:
            return replace_value(st, step, [value], style)
        last = s.value[-1]
        pos = st.content_end(last)
        return _splice(st.text, pos, pos, _flow_item(st, s, last.start_mark.index, value, style))
    first = s.value[0]
    dash = st.dash_before(first.start_mark.index)
    offset = first.start_mark.index - dash
    if st.line_start(dash) != st.line_start(first.start_mark.index) or offset < 2:
        offset = style.item_offset
    lines = block_lines([value], st.column(dash), replace(style, item_offset=offset))
    return _insert_after_line(st, st.content_end(s), lines, style)


# -- remove -------------------------------------------------------------------------------------
def remove(st: Stream, steps: list[Step], style: Style) -> str:
    """Remove the key or item at ``steps[-1]``; the last one of a collection leaves ``{}``/``[]``."""
    step = steps[-1]
    parent = step.parent
    if parent is None:
        raise FixError("cannot remove a whole document")
    text = st.text
    siblings = parent.value
    if len(siblings) == 1:
        return replace_value(st, steps[-2], {} if isinstance(parent, MappingNode) else [], style)
    i = step.index
    if isinstance(parent, MappingNode):
        starts = [k.start_mark.index for k, _ in siblings]
        item_end = st.content_end(siblings[i][1])
        prev_end = st.content_end(siblings[i - 1][1]) if i > 0 else None
    else:
        if is_flow(parent):
            starts = [n.start_mark.index for n in siblings]
        else:
            starts = [st.dash_before(n.start_mark.index) for n in siblings]
        item_end = st.content_end(siblings[i])
        prev_end = st.content_end(siblings[i - 1]) if i > 0 else None
    start = starts[i]
    if is_flow(parent):
        if i + 1 < len(siblings):
            return _splice(text, start, starts[i + 1], "")
        assert prev_end is not None  # the last of two or more items has one before it
        return _splice(text, prev_end, item_end, "")
    if not text[st.line_start(start) : start].strip():
        return _delete_lines(st, start, item_end)
    if i + 1 < len(siblings):  # first key/item sharing its line with a "- ": pull the next one up
        return _splice(text, start, starts[i + 1], "")
    raise FixError("cannot remove this node without touching its neighbours")
