"""YAML with positions, read through libyaml.

PyYAML's C parser composes a node graph with marks fast; we then build plain ``dict``/``list``
subclasses that remember where each key and item stood (:mod:`eksmllint.yamlnodes`; a text that
may hold a ``kind: List`` is composed item by item, :mod:`eksmllint.yamlevents`). This is ~10x
cheaper than a ruamel.yaml round-trip, which is kept for the files the fixer rewrites.

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
from yaml.events import StreamEndEvent
from yaml.nodes import MappingNode, Node, ScalarNode
from yaml.resolver import Resolver

from eksmllint.yamlevents import streamed_root
from eksmllint.yamlnodes import _CACHE_LIMIT, _MISSING
from eksmllint.yamlnodes import _MAP as _MAP
from eksmllint.yamlnodes import _SEQ as _SEQ
from eksmllint.yamlnodes import _STR as _STR
from eksmllint.yamlnodes import MAX_DEPTH as MAX_DEPTH
from eksmllint.yamlnodes import MAX_DOCUMENTS as MAX_DOCUMENTS
from eksmllint.yamlnodes import MAX_EXPANDED_NODES as MAX_EXPANDED_NODES
from eksmllint.yamlnodes import MAX_NODES as MAX_NODES
from eksmllint.yamlnodes import YAMLLoadError as YAMLLoadError
from eksmllint.yamlnodes import YList as YList
from eksmllint.yamlnodes import YMap as YMap
from eksmllint.yamlnodes import _convert as _convert
from eksmllint.yamlnodes import _convert_generic as _convert_generic
from eksmllint.yamlnodes import _converted as _converted
from eksmllint.yamlnodes import _key as _key
from eksmllint.yamlnodes import _ListOverBudget as _ListOverBudget
from eksmllint.yamlnodes import _mark as _mark
from eksmllint.yamlnodes import objects_of as objects_of
from eksmllint.yamlnodes import objects_over_budget as objects_over_budget

try:  # the C loader is what makes linting fast; fall back so a missing libyaml is not fatal
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - depends on the PyYAML build
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

_resolver = Resolver()
#: Resolved tag of a plain scalar's text. Kubernetes manifests repeat the same few thousand
#: scalars ("In", "NoSchedule", "nvidia.com/gpu", "8"), so resolving each text once instead of
#: running PyYAML's regex resolver on every node is most of what makes our compose cheaper
#: than ``CSafeLoader``'s.
_PLAIN_TAGS: dict[str, str] = {}


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


class _OverBudget(YAMLLoadError):
    """A file over the node or document budget; raised where the line is not known yet."""


@dataclass(slots=True)
class RawDocument:
    data: Any
    start_line: int  # 1-based line of the document's first node
    end_line: int


#: A text that may hold a ``kind: List`` (YAML or JSON spelling): its documents are composed by
#: :func:`eksmllint.yamlevents.streamed_root`, so that a List's items never exist as one node tree.
_MAY_BE_LIST = re.compile(r"""^[ \t{]*["']?kind["']?[ \t]*:[ \t]*["']?List\b""", re.M)


def _roots(loader: Any, text: str, may_alias: bool, docs: list[RawDocument]) -> Iterator[tuple[Node, Any]]:
    """Each document's root node and its data: composed by libyaml, or by
    :mod:`eksmllint.yamlevents` where a ``kind: List`` may be in the text (``docs``: those read so
    far, for the budget)."""
    # The regex reads every line of the text; a text without "List" anywhere cannot match it
    # ("in" is a C substring search, ~12x cheaper: 0.05 s of CPU at 10,000 documents).
    if "List" not in text or not _MAY_BE_LIST.search(text):
        while loader.check_node():
            node = loader.get_node()
            if node is not None:
                yield node, _MISSING  # converted by the caller, after the document budget
        return
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
