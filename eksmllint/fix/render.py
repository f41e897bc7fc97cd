"""Render the small pieces of YAML a fix inserts, in the style of the document around them.

Only the new node is rendered. Its layout is copied from the file: the mapping indent step, how
far a sequence's ``-`` sits under its key (``key:\\n- a`` or ``key:\\n  - a``), where an item's
content starts after the dash, which quote character the author prefers, the newline convention,
and JSON syntax for ``.json`` files. Inserted mappings and lists are block style unless their
parent is flow.
"""

from __future__ import annotations

import io
import json
import math
from collections import Counter
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from eksmllint.fix.spans import Stream, is_flow, walk

_STR_TAG = "tag:yaml.org,2002:str"
_emitter = yaml.emitter.Emitter(io.StringIO())
_resolver = yaml.resolver.Resolver()


@dataclass(frozen=True)
class Style:
    indent: int = 2  # columns a nested mapping is indented under its key
    seq_indent: int = 2  # columns a sequence's "-" is indented under its key (0 = "key:\n- a")
    item_offset: int = 2  # column of an item's content after its "-"
    quote: str = '"'  # preferred quote when a string must be quoted
    newline: str = "\n"
    json: bool = False  # the file is JSON: render JSON syntax
    force_quote: str | None = None  # quote every string (the replaced collection quoted all of its)


def detect_style(stream: Stream, json_file: bool = False, fallback: Style | None = None) -> Style:
    """The layout the author used most; without evidence, ``fallback`` (e.g. the style of the
    whole file when ``stream`` is one of its documents) or the Kubernetes docs' style."""
    fb = fallback or Style()
    indents: Counter[int] = Counter()
    seq_indents: Counter[int] = Counter()
    offsets: Counter[int] = Counter()
    quotes: Counter[str] = Counter()
    for doc in stream.docs:
        for node in walk(doc):
            if isinstance(node, ScalarNode) and node.style in ("'", '"'):
                quotes[node.style] += 1
            elif isinstance(node, MappingNode) and not is_flow(node):
                for k, v in node.value:
                    if isinstance(v, (MappingNode, SequenceNode)) and not is_flow(v) and v.value:
                        if v.start_mark.line == k.start_mark.line:
                            continue
                        col = v.start_mark.column
                        if isinstance(v, SequenceNode):
                            seq_indents[
                                stream.column(stream.dash_before(v.value[0].start_mark.index)) - k.start_mark.column
                            ] += 1
                        else:
                            indents[col - k.start_mark.column] += 1
            elif isinstance(node, SequenceNode) and not is_flow(node):
                for item in node.value:
                    if isinstance(item, (MappingNode, SequenceNode)) and not is_flow(item) and item.value:
                        dash = stream.dash_before(item.start_mark.index)
                        if stream.line_start(dash) == stream.line_start(item.start_mark.index):
                            offsets[item.start_mark.index - dash] += 1
    indent = _most_common(indents, fb.indent, lambda v: v > 0)
    return Style(
        indent=indent,
        seq_indent=_most_common(seq_indents, fb.seq_indent if fallback else indent, lambda v: v >= 0),
        item_offset=_most_common(offsets, fb.item_offset, lambda v: v >= 2),
        quote=_most_common(quotes, fb.quote, lambda v: True),
        newline=stream.newline,
        json=json_file,
    )


def _most_common(counter: Counter, default: Any, ok) -> Any:
    best = [v for v, _ in counter.most_common() if ok(v)]
    return best[0] if best else default


# -- scalars -----------------------------------------------------------------------------------
def plain_ok(text: str, flow: bool) -> bool:
    """Whether ``text`` can be written unquoted and still load as the same string."""
    if not text:
        return False
    analysis = _emitter.analyze_scalar(text)
    if analysis.multiline or not (analysis.allow_flow_plain if flow else analysis.allow_block_plain):
        return False
    return _resolver.resolve(ScalarNode, text, (True, False)) == _STR_TAG


def quoted(text: str, quote: str) -> str:
    """``text`` in the given quote style (double quotes when single ones cannot hold it)."""
    style = "'" if quote == "'" else '"'
    out = yaml.safe_dump(text, default_style=style, width=2**30, allow_unicode=True)
    out = out.removesuffix("\n")
    out = out.removesuffix("\n...")
    return out


def scalar_text(value: Any, style: Style, *, flow: bool = False, like: str | None = None) -> str:
    """A scalar (or empty collection) as it would be typed; ``like`` is the quote style to keep."""
    if style.json:
        return json.dumps(value, ensure_ascii=False)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return ".nan"
        if math.isinf(value):
            return ".inf" if value > 0 else "-.inf"
        return repr(value)
    if isinstance(value, dict) and not value:
        return "{}"
    if isinstance(value, list) and not value:
        return "[]"
    text = str(value)
    like = like or style.force_quote
    if like in ("'", '"'):
        return quoted(text, like)
    if plain_ok(text, flow):
        return text
    return quoted(text, style.quote)


def literal_block(text: str, col: int, style: Style) -> str | None:
    """``text`` as a literal block scalar (``|`` / ``|-``) indented to ``col``, or None if it cannot be."""
    if text.endswith("\n\n") or not text.strip() or text[:1] in (" ", "\t"):
        return None
    body = text.removesuffix("\n")
    lines = body.split("\n")
    if any(not line.isprintable() for line in lines) or any(
        line != line.rstrip(" \t") and not line.strip() for line in lines
    ):
        return None
    header = "|" if text.endswith("\n") else "|-"
    pad = " " * col
    return header + "".join(style.newline + (pad + line if line else "") for line in lines)


# -- collections -------------------------------------------------------------------------------
def is_collection(value: Any) -> bool:
    return isinstance(value, (dict, list)) and bool(value)


def flow_text(value: Any, style: Style) -> str:
    """A value in flow style (JSON for JSON files)."""
    if style.json:
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict) and value:
        inner = ", ".join(f"{scalar_text(k, style, flow=True)}: {flow_text(v, style)}" for k, v in value.items())
        return "{" + inner + "}"
    if isinstance(value, list) and value:
        return "[" + ", ".join(flow_text(v, style) for v in value) + "]"
    return scalar_text(value, style, flow=True)


def block_lines(value: Any, col: int, style: Style) -> list[str]:
    """A non-empty mapping or list in block style, every line indented to ``col``."""
    pad = " " * col
    out: list[str] = []
    if isinstance(value, dict):
        for k, v in value.items():
            head = f"{pad}{scalar_text(k, style)}:"
            if is_collection(v):
                out.append(head)
                out += block_lines(v, col + (style.indent if isinstance(v, dict) else style.seq_indent), style)
            else:
                out.append(f"{head} {scalar_text(v, style)}")
        return out
    for item in value:
        if is_collection(item):
            inner = col + style.item_offset
            sub = block_lines(item, inner, style)
            out.append(pad + "-" + " " * (style.item_offset - 1) + sub[0][inner:])
            out += sub[1:]
        else:
            out.append(f"{pad}- {scalar_text(item, style)}")
    return out
