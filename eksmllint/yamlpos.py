"""YAML with positions, read through libyaml.

PyYAML's C parser composes a node graph with marks fast; we then build plain ``dict``/``list``
subclasses that remember where each key and item stood. This is ~10x cheaper than a ruamel.yaml
round-trip, which is kept for the files the fixer rewrites.

Safe by construction: tags never construct objects (an unknown tag keeps the plain value), aliases
are sized before they are expanded (billion-laughs guard; only texts with an anchor can have
aliases), recursive aliases and duplicate keys are errors, and nesting depth is bounded.

Fast by construction (bench/README.md): libyaml calls back into Python for every node, so those
hooks are made trivial (:class:`_PosLoader`), and the conversion loop creates containers and
positions without a Python call per scalar.
"""

from __future__ import annotations

import json
import operator
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.events import StreamEndEvent
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.resolver import Resolver

try:  # the C loader is what makes linting fast; fall back so a missing libyaml is not fatal
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - depends on the PyYAML build
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

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
_resolver = Resolver()
_CACHE_LIMIT = 200_000
#: Resolved tag of a plain scalar's text. Kubernetes manifests repeat the same few thousand
#: scalars ("In", "NoSchedule", "nvidia.com/gpu", "8"), so resolving each text once instead of
#: running PyYAML's regex resolver on every node is most of what makes our compose cheaper
#: than ``CSafeLoader``'s.
_PLAIN_TAGS: dict[str, str] = {}
#: Constructed value of a (tag, text) for the non-string scalar tags (immutable values only).
_VALUES: dict[tuple[str, str], Any] = {}
_MISSING = object()
#: The largest int whose decimal form Python will still write (4,300 digits, sys.int_info).
_MAX_INT_BITS = 14_000


def _plain_tag(value: str) -> str:
    tag = _PLAIN_TAGS.get(value)
    if tag is None:
        if len(_PLAIN_TAGS) > _CACHE_LIMIT:
            _PLAIN_TAGS.clear()
        # exactly PyYAML's YAML 1.1 implicit resolution (SafeLoader's table), computed once per text
        tag = _PLAIN_TAGS[value] = _resolver.resolve(ScalarNode, value, (True, False))
    return tag


class _PosLoader(_Loader):
    """``CSafeLoader`` whose per-node resolver hooks are cheap.

    libyaml's composer calls back into Python for every node (``descend_resolver``, ``resolve``,
    ``ascend_resolver``). We have no path resolvers, so descend/ascend do nothing, and plain
    scalars are resolved through :data:`_PLAIN_TAGS`. The tags produced are the ones
    ``CSafeLoader`` would produce.
    """

    # Called around every node; with no path resolvers they have nothing to do. C callables that
    # ignore what they get cost less than Python methods that return None: 4 % of parsing.
    # (Builtins do not bind as methods: libyaml's (parent, index) and () are all they get.)
    descend_resolver = operator.is_  # type: ignore[assignment]  # -> a bool nobody reads
    ascend_resolver = tuple  # type: ignore[assignment]  # -> ()

    def resolve(self, kind: type, value: Any, implicit: tuple[bool, bool]) -> str:
        if kind is ScalarNode:
            if implicit[0]:
                tag = _PLAIN_TAGS.get(value)
                return tag if tag is not None else _plain_tag(value)
            return _STR
        return _MAP if kind is MappingNode else _SEQ


class _CountingLoader(_PosLoader):
    """:class:`_PosLoader` that counts the nodes it composes against :data:`MAX_NODES`."""

    nodes_left = MAX_NODES  # the node budget of the text being composed (called once per node)

    def descend_resolver(self, current_node: Any, current_index: Any) -> None:  # type: ignore[override]
        self.nodes_left -= 1
        if self.nodes_left < 0:
            raise _OverBudget(f"more than {MAX_NODES:,} YAML nodes in one file (node budget)")


def _loader_for(text: str) -> _PosLoader:
    """The loader for ``text``: counting nodes costs a Python call per node, so it is only done
    where the budget can be reached. libyaml composes at most one node per character of text, and
    two more (``{?,?,?}``: a key and an empty value per two characters; ``?``: three nodes), so a
    text of fewer than MAX_NODES / 2 characters stays far below the budget (tested)."""
    return _CountingLoader(text) if len(text) * 2 >= MAX_NODES else _PosLoader(text)


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


class _OverBudget(YAMLLoadError):
    """A file over the node or document budget; raised where the line is not known yet."""


_new_map = dict.__new__  # YMap/YList without a Python-level __init__ call (hot path)
_new_list = list.__new__


@dataclass(slots=True)
class RawDocument:
    data: Any
    start_line: int  # 1-based line of the document's first node
    end_line: int


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


#: A text that may hold a ``kind: List`` (YAML or JSON spelling): its documents are composed by
#: :func:`eksmllint.yamlevents.streamed_root`, so that a List's items never exist as one node tree.
_MAY_BE_LIST = re.compile(r"""^[ \t{]*["']?kind["']?[ \t]*:[ \t]*["']?List\b""", re.M)


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


def _roots(loader: Any, text: str, may_alias: bool, docs: list[RawDocument]) -> Iterator[tuple[Node, Any]]:
    """Each document's root node and its data: composed by libyaml, or by
    :mod:`eksmllint.yamlevents` where a ``kind: List`` may be in the text (``docs``: those read so
    far, for the budget)."""
    if not _MAY_BE_LIST.search(text):
        while loader.check_node():
            node = loader.get_node()
            if node is not None:
                yield node, _MISSING  # converted by the caller, after the document budget
        return
    from eksmllint.yamlevents import streamed_root  # (it builds on this module's conversion)

    loader.get_event()  # the stream start
    objects = 0  # in the documents read so far
    while type(loader.peek_event()) is not StreamEndEvent:
        loader.get_event()  # the document start
        root, data = streamed_root(loader, may_alias, MAX_DOCUMENTS - objects, MAX_DOCUMENTS)
        objects += objects_of(data)
        yield root, data
        loader.get_event()  # the document end


def load_yaml_stream(text: str) -> tuple[list[RawDocument], YAMLLoadError | None]:
    """Parse every document of ``text``. Documents before an error are kept."""
    docs: list[RawDocument] = []
    # Aliases need anchors, and an anchor is spelled with "&": without one in the text nothing
    # can expand, so the (full-tree) expansion guard is only run when there is one.
    may_alias = "&" in text
    loader = _loader_for(text)
    try:
        for node, data in _roots(loader, text, may_alias, docs):
            if len(docs) == MAX_DOCUMENTS:
                raise YAMLLoadError(
                    f"more than {MAX_DOCUMENTS:,} documents in one file (document budget); "
                    f"the first {MAX_DOCUMENTS:,} are linted",
                    *_mark(node),
                )
            if data is _MISSING:
                data = _converted(node, may_alias)
            docs.append(RawDocument(data, node.start_mark.line + 1, node.end_mark.line + 1))
    except _ListOverBudget as err:  # the List within the budget is read, the file stops there
        docs.append(RawDocument(err.data, err.root.start_mark.line + 1, err.root.end_mark.line + 1))
        return docs, YAMLLoadError(err.message, err.line, err.col)
    except _OverBudget as err:  # raised inside libyaml's composer: the document it was reading
        line = docs[-1].end_line + 1 if docs else 1
        return docs, YAMLLoadError(f"{err.message}; the document from line {line} on is not linted", line, 1)
    except YAMLLoadError as err:
        return docs, err
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (0, 0)
        problem = err.problem or err.context or "invalid YAML"
        if err.context and err.problem:
            problem = f"{err.problem} ({err.context})"
        return docs, YAMLLoadError(problem, line, col)
    except yaml.YAMLError as err:
        return docs, YAMLLoadError(str(err).splitlines()[0] if str(err) else "invalid YAML")
    except RecursionError:
        return docs, YAMLLoadError(f"nesting deeper than {MAX_DEPTH} levels")
    finally:
        loader.dispose()
    return docs, None


def load_data(text: str) -> Any:
    """The data of a single-document YAML text (rule files, the catalogue): same tags and safety
    as :func:`load_yaml_stream` and about twice as fast as PyYAML's own constructor. Raises
    :class:`YAMLLoadError`; an empty text is ``None``."""
    docs, error = load_yaml_stream(text)
    if error is not None:
        raise error
    if len(docs) > 1:
        raise YAMLLoadError("expected one YAML document, found several", docs[1].start_line, 1)
    return docs[0].data if docs else None


class DuplicateJSONKey(Exception):
    """Raised by :func:`unique_json_pairs`: JSON allows a key twice, Kubernetes and DeepSpeed
    do not (the later value would silently win)."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def unique_json_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads(..., object_pairs_hook=unique_json_pairs)``: a dict, or DuplicateJSONKey."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateJSONKey(key)
        out[key] = value
    return out


def duplicate_json_key_line(text: str, key: str) -> int | None:
    """1-based line of the second ``"key":`` in a JSON text (None if it is spelled with escapes)."""
    hits = [m.start() for m in re.finditer(re.escape(json.dumps(key)) + r"\s*:", text)]
    return text.count("\n", 0, hits[1]) + 1 if len(hits) > 1 else None


def to_plain(value: Any) -> Any:
    """Drop position information (plain dict/list), e.g. for JSON output or pydantic."""
    if isinstance(value, dict):
        return {k: to_plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_plain(v) for v in value]
    return value
