"""YAML nodes into plain data with positions: what every reader of YAML text here shares.

:mod:`eksmllint.yamlpos` composes nodes with libyaml (and :mod:`eksmllint.yamlevents`, for a
``kind: List``, from libyaml's events); this module turns them into ``dict``/``list`` subclasses
that remember where each key and item stood (:class:`YMap`, :class:`YList`), under the depth and
alias-expansion budgets, and holds the budgets of one file.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from yaml.constructor import ConstructorError, SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

MAX_DEPTH = 200
#: Budgets of one file (README "Limits"): what the loader holds for a file stays a small multiple
#: of its size. A node costs ~400 bytes while libyaml composes it, however few bytes it takes in
#: the text ("1," in a flow sequence), and a document ~6 KB once linted and reported, however
#: short ("---\nkind: A\n"). Real manifests stay far below both: the largest file of the
#: corpus has 413 nodes, the most documents in one file are a few thousand in Helm renders.
MAX_NODES = 500_000
MAX_DOCUMENTS = 10_000
MAX_EXPANDED_NODES = MAX_NODES  # after alias expansion, per document

_STR = "tag:yaml.org,2002:str"
_MERGE = "tag:yaml.org,2002:merge"
_SEQ = "tag:yaml.org,2002:seq"
_MAP = "tag:yaml.org,2002:map"
_scalar_constructor = SafeConstructor()
_SCALAR_TAGS = {
    "tag:yaml.org,2002:null",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
}
#: Constructed value of a (tag, text) for the non-string scalar tags (immutable values only).
_VALUES: dict[tuple[str, str], Any] = {}
_MISSING = object()
_CACHE_LIMIT = 200_000  # entries of a per-text cache (tags, scalar values) before it is cleared
#: The largest int whose decimal form Python will still write (4,300 digits, sys.int_info).
_MAX_INT_BITS = 14_000


class YMap(dict):
    """A mapping that knows the 1-based (line, col) of each key and of itself."""

    __slots__ = ("pos", "start")

    def __init__(self) -> None:
        super().__init__()
        self.pos: dict[Any, tuple[int, int]] = {}
        self.start: tuple[int, int] = (0, 0)


class YList(list):
    """A sequence that knows the 1-based (line, col) of each item and of itself."""

    __slots__ = ("pos", "start")

    def __init__(self) -> None:
        super().__init__()
        self.pos: list[tuple[int, int]] = []
        self.start: tuple[int, int] = (0, 0)


class YAMLLoadError(Exception):
    """A parse or safety error with a 1-based position."""

    def __init__(self, message: str, line: int = 0, col: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.col = col


_new_map = dict.__new__  # YMap/YList without a Python-level __init__ call (hot path)
_new_list = list.__new__


def _mark(node: Node) -> tuple[int, int]:
    return (node.start_mark.line + 1, node.start_mark.column + 1)


def _expanded_size(root: Node) -> int:
    """Nodes after alias expansion, memoised per node; raises on recursive aliases."""
    sizes: dict[int, int] = {}
    on_stack: set[int] = set()

    def size(node: Node, depth: int) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if depth > MAX_DEPTH:
            raise YAMLLoadError(f"nesting deeper than {MAX_DEPTH} levels", *_mark(node))
        if key in on_stack:
            raise YAMLLoadError("recursive alias: a node refers to itself", *_mark(node))
        on_stack.add(key)
        total = 1
        if isinstance(node, MappingNode):
            for k, v in node.value:
                total += size(k, depth + 1) + size(v, depth + 1)
        elif isinstance(node, SequenceNode):
            for item in node.value:
                total += size(item, depth + 1)
        on_stack.discard(key)
        sizes[key] = total
        return total

    return size(root, 0)


def _scalar(node: ScalarNode) -> Any:
    tag = node.tag
    if tag == _STR:
        return node.value
    if tag in _SCALAR_TAGS:
        key = (tag, node.value)
        value = _VALUES.get(key, _MISSING)
        if value is _MISSING:
            try:
                value = _scalar_constructor.yaml_constructors[tag](_scalar_constructor, node)
            except (ConstructorError, ValueError, IndexError, KeyError, OverflowError):
                # `!!int ""`, `!!bool maybe`, an int over 4,300 digits: keep the text (the
                # schema check then reports a typed field holding it, with its line)
                value = node.value
            if type(value) is int and value.bit_length() > _MAX_INT_BITS:
                value = node.value  # 0x/0o/0b spellings have no digit limit: same rule as above
            if len(_VALUES) > _CACHE_LIMIT:
                _VALUES.clear()
            _VALUES[key] = value
        return value
    # timestamps (kept as text: Kubernetes wants strings), binary and unknown tags: plain text
    return node.value


def _same_key(seen: dict[Any, Any], key: Any) -> bool:
    """Whether ``key``, equal to a key already in ``seen``, is the same YAML value: ``1`` and
    ``true`` (or ``1`` and ``1.0``) are equal in Python but different keys in YAML. Such a pair
    is kept as PyYAML keeps it (the later value wins), not reported as a duplicate."""
    if type(key) is str:
        return True  # a string key only ever equals a string key
    first = next(k for k in seen if k == key)
    return type(first) is type(key)


def _key(node: Node) -> Any:
    if isinstance(node, ScalarNode):
        value = _scalar(node)
        return value if isinstance(value, (str, int, float, bool)) or value is None else str(value)
    raise YAMLLoadError("a mapping key must be a scalar", *_mark(node))


def _convert(node: Node, depth: int = 0) -> Any:
    """Plain data with positions from a composed node (also used by the fixer on its own nodes).

    The hot loop of the linter: scalars inside collections are converted inline (no call per
    scalar), positions are built straight from the libyaml marks, and ``YMap``/``YList`` are
    created without running a Python ``__init__``.
    """
    if type(node) is ScalarNode:  # (`type(x) is` narrows for mypy; a local alias would not)
        return _scalar(node)
    cls = type(node)
    if depth > MAX_DEPTH:
        raise YAMLLoadError(f"nesting deeper than {MAX_DEPTH} levels", *_mark(node))
    if cls is MappingNode:
        out = _new_map(YMap)
        m = node.start_mark
        out.start = (m.line + 1, m.column + 1)
        pos: dict[Any, tuple[int, int]] = {}
        out.pos = pos
        merged: list[tuple[Any, Any, tuple[int, int]]] | None = None
        for knode, vnode in node.value:
            if type(knode) is not ScalarNode:
                raise YAMLLoadError("a mapping key must be a scalar", *_mark(knode))
            tag = knode.tag
            if tag == _STR:
                key = knode.value
            elif tag == _MERGE:
                if merged is None:
                    merged = []
                merged.extend(_merge_items(vnode, depth))
                continue
            else:
                key = _scalar(knode)
            if key in pos and _same_key(pos, key):
                line, col = _mark(knode)
                raise YAMLLoadError(f'duplicate key "{key}" (first at line {pos[key][0]})', line, col)
            if type(vnode) is ScalarNode:
                out[key] = vnode.value if vnode.tag == _STR else _scalar(vnode)
            else:
                out[key] = _convert(vnode, depth + 1)
            m = knode.start_mark
            pos[key] = (m.line + 1, m.column + 1)
        if merged:
            for key, value, kpos in merged:  # explicit keys win over merged ones, as in YAML 1.1
                if key not in pos:
                    out[key] = value
                    pos[key] = kpos
        return out
    if cls is SequenceNode:
        seq = _new_list(YList)
        m = node.start_mark
        seq.start = (m.line + 1, m.column + 1)
        positions: list[tuple[int, int]] = []
        seq.pos = positions
        for item in node.value:
            m = item.start_mark
            positions.append((m.line + 1, m.column + 1))
            if type(item) is ScalarNode:
                seq.append(item.value if item.tag == _STR else _scalar(item))
            else:
                seq.append(_convert(item, depth + 1))
        return seq
    if isinstance(node, (ScalarNode, MappingNode, SequenceNode)):  # a subclass: the generic path
        return _convert_generic(node, depth)
    raise YAMLLoadError(f"unsupported YAML node {type(node).__name__}", *_mark(node))


def _convert_generic(node: Node, depth: int) -> Any:
    if isinstance(node, ScalarNode):
        return _scalar(node)
    if isinstance(node, SequenceNode):
        seq = YList()
        seq.start = _mark(node)
        for item in node.value:
            seq.append(_convert(item, depth + 1))
            seq.pos.append(_mark(item))
        return seq
    out = YMap()
    out.start = _mark(node)
    for knode, vnode in node.value:
        key = _key(knode)
        if key in out.pos and _same_key(out.pos, key):
            raise YAMLLoadError(f'duplicate key "{key}" (first at line {out.pos[key][0]})', *_mark(knode))
        out[key] = _convert(vnode, depth + 1)
        out.pos[key] = _mark(knode)
    return out


def _merge_items(vnode: Node, depth: int = 0) -> Iterator[tuple[Any, Any, tuple[int, int]]]:
    sources = vnode.value if isinstance(vnode, SequenceNode) else [vnode]
    for src in sources:
        if not isinstance(src, MappingNode):
            raise YAMLLoadError("a merge key (<<) needs a mapping", *_mark(src))
        converted = _convert(src, depth + 1)
        for key, value in converted.items():
            yield key, value, converted.pos[key]


class _ListOverBudget(YAMLLoadError):
    """A document whose top-level ``items`` went past the document budget: it is kept with the
    items within the budget (:attr:`root`, :attr:`data`), and the file is not read further."""

    def __init__(self, message: str, at: tuple[int, int], root: Node, data: Any) -> None:
        super().__init__(message, *at)
        self.root = root
        self.data = data


def objects_of(data: Any) -> int:
    """Objects one document holds against the document budgets: a ``kind: List`` its items,
    any other document one."""
    items = data.get("items") if isinstance(data, dict) and data.get("kind") == "List" else None
    return len(items) if isinstance(items, list) else 1


def objects_over_budget(limit: int) -> str:
    """The finding when a file holds more objects than the document budget (loader and here)."""
    return (
        f"more than {limit:,} objects in one file (document budget; the items of a List count as "
        f"documents); the first {limit:,} are linted"
    )


def _converted(node: Node, may_alias: bool) -> Any:
    if may_alias and _expanded_size(node) > MAX_EXPANDED_NODES:
        raise YAMLLoadError(f"document expands to more than {MAX_EXPANDED_NODES} nodes through aliases", *_mark(node))
    return _convert(node)
