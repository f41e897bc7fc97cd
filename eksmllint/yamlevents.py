"""Documents composed from libyaml's events, so that a ``kind: List`` is read one item at a time.

libyaml's own composer (what :mod:`eksmllint.yamlpos` uses for every other text) builds a
document's whole node tree before anything can be converted: for a ``kind: List`` that is the
whole file, ~400 bytes a node next to the data built from it (bench/README.md, issue 22). Here
the same nodes are composed in Python from the same events, and a document's top-level
``items`` are composed, converted and dropped one at a time.
"""

from __future__ import annotations

from typing import Any

from yaml.composer import ComposerError
from yaml.events import (
    AliasEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
)
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from eksmllint.yamlnodes import (
    _MAP,
    _SEQ,
    _STR,
    MAX_DEPTH,
    MAX_EXPANDED_NODES,
    YAMLLoadError,
    YList,
    _convert,
    _converted,
    _expanded_size,
    _ListOverBudget,
    _mark,
    _new_list,
    objects_over_budget,
)


def _compose(loader: Any, anchors: dict[str, Node], depth: int) -> Node:
    """One node from libyaml's events, as libyaml's own composer builds it (same tags, marks,
    anchors and node count, same errors), but in Python, so a caller can stop between nodes.
    (``loader``: a :class:`_PosLoader`, whose events the stubs do not type.)"""
    event = loader.get_event()
    kind = type(event)  # (not ``type(event) is``: that would narrow the untyped event)
    if kind is AliasEvent:
        target = anchors.get(event.anchor)
        if target is None:
            raise ComposerError(None, None, "found undefined alias", event.start_mark)
        return target
    if depth > MAX_DEPTH:
        raise YAMLLoadError(
            f"nesting deeper than {MAX_DEPTH} levels", event.start_mark.line + 1, event.start_mark.column + 1
        )
    loader.descend_resolver(None, None)  # counts the node where the node budget applies
    anchor = event.anchor
    if anchor is not None and anchor in anchors:
        raise ComposerError(
            "found duplicate anchor; first occurrence",
            anchors[anchor].start_mark,
            "second occurrence",
            event.start_mark,
        )
    tag = event.tag
    node: Node
    if kind is ScalarEvent:
        if tag is None or tag == "!":
            tag = loader.resolve(ScalarNode, event.value, event.implicit)
        node = ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style)
        if anchor is not None:
            anchors[anchor] = node
        return node
    if kind is MappingStartEvent:
        node = MappingNode(_MAP if tag is None or tag == "!" else tag, [], event.start_mark, None, event.flow_style)
        if anchor is not None:
            anchors[anchor] = node
        pairs = node.value
        while type(loader.peek_event()) is not MappingEndEvent:
            key = _compose(loader, anchors, depth + 1)
            pairs.append((key, _compose(loader, anchors, depth + 1)))
    else:
        node = SequenceNode(_SEQ if tag is None or tag == "!" else tag, [], event.start_mark, None, event.flow_style)
        if anchor is not None:
            anchors[anchor] = node
        items = node.value
        while type(loader.peek_event()) is not SequenceEndEvent:
            items.append(_compose(loader, anchors, depth + 1))
    node.end_mark = loader.get_event().end_mark
    return node


def streamed_root(loader: Any, may_alias: bool, room: int, limit: int) -> tuple[Node, Any]:
    """One document's root node and data, its top-level ``items:`` sequence composed, checked
    and converted one item at a time (each item's nodes are dropped once it is data).

    A ``kind: List`` composed whole holds a node tree of the entire file (~400 bytes a node)
    next to the data built from it: ~100x the input instead of ~35x for the same objects as
    separate documents (bench/README.md). The data is the same as :func:`_convert` of the whole
    tree; an ``items`` that carries an anchor or a tag is composed whole. Items past ``room``
    (what the document budget of ``limit`` objects leaves) are composed, to find the end of the document and its
    ``kind`` (``kubectl`` writes it after the items), but not kept: :class:`_ListOverBudget`."""
    anchors: dict[str, Node] = {}
    event = loader.peek_event()
    shape = type(event)  # (not ``type(event) is``: that would narrow the untyped event)
    if shape is not MappingStartEvent:
        return (node := _compose(loader, anchors, 0)), _converted(node, may_alias)
    loader.get_event()
    loader.descend_resolver(None, None)
    root = MappingNode(
        event.tag if event.tag not in (None, "!") else _MAP, [], event.start_mark, None, event.flow_style
    )
    if event.anchor is not None:
        anchors[event.anchor] = root
    streamed: YList | None = None
    value: Node
    over: tuple[int, int] | None = None  # the first item past the budget
    expanded = 0
    while type(loader.peek_event()) is not MappingEndEvent:
        key = _compose(loader, anchors, 1)
        start = loader.peek_event()
        opens = type(start)
        if (
            streamed is None
            and type(key) is ScalarNode
            and key.tag == _STR
            and key.value == "items"
            and opens is SequenceStartEvent
            and start.anchor is None
            and start.tag in (None, "!")
        ):
            loader.get_event()
            loader.descend_resolver(None, None)
            value = SequenceNode(_SEQ, [], start.start_mark, None, start.flow_style)  # stands in for the items
            streamed = _new_list(YList)
            streamed.start = (start.start_mark.line + 1, start.start_mark.column + 1)
            streamed.pos = []
            while type(loader.peek_event()) is not SequenceEndEvent:
                item = _compose(loader, anchors, 2)
                if over is not None:
                    continue
                if len(streamed) == room:
                    over = _mark(item)
                    continue
                if may_alias:
                    expanded += _expanded_size(item)
                    if expanded > MAX_EXPANDED_NODES:
                        raise YAMLLoadError(
                            f"document expands to more than {MAX_EXPANDED_NODES} nodes through aliases", *_mark(root)
                        )
                streamed.pos.append(_mark(item))
                streamed.append(_convert(item, 2))
            value.end_mark = loader.get_event().end_mark
        else:
            value = _compose(loader, anchors, 1)
        root.value.append((key, value))
    root.end_mark = loader.get_event().end_mark
    data = _converted(root, may_alias)
    if streamed is not None:
        data["items"] = streamed
    if over is not None:
        message = (
            objects_over_budget(limit)
            if data.get("kind") == "List"
            else f"more than {room:,} entries in a top-level items list (document budget); the first {room:,} are read"
        )
        raise _ListOverBudget(message, over, root, data)
    return root, data
