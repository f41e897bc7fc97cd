"""YAML with positions, read through libyaml.

PyYAML's C parser composes a node graph with marks fast; we then build plain ``dict``/``list``
subclasses that remember where each key and item stood. This is ~10x cheaper than a ruamel.yaml
round-trip, which is kept for the files the fixer rewrites.

Safe by construction: tags never construct objects (an unknown tag keeps the plain value), aliases
are sized before they are expanded (billion-laughs guard), recursive aliases and duplicate keys are
errors, and nesting depth is bounded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

import yaml
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

try:  # the C loader is what makes linting fast; fall back so a missing libyaml is not fatal
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - depends on the PyYAML build
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

MAX_DEPTH = 200
MAX_EXPANDED_NODES = 500_000

_STR = "tag:yaml.org,2002:str"
_MERGE = "tag:yaml.org,2002:merge"
_scalar_constructor = SafeConstructor()
_SCALAR_TAGS = {
    "tag:yaml.org,2002:null",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
}


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
    if node.tag in _SCALAR_TAGS:
        try:
            return _scalar_constructor.yaml_constructors[node.tag](_scalar_constructor, node)
        except (ConstructorError, ValueError):
            return node.value
    # str, timestamps (kept as text: Kubernetes wants strings), binary and unknown tags: plain text
    return node.value


def _key(node: Node) -> Any:
    if isinstance(node, ScalarNode):
        value = _scalar(node)
        return value if isinstance(value, (str, int, float, bool)) or value is None else str(value)
    raise YAMLLoadError("a mapping key must be a scalar", *_mark(node))


def _convert(node: Node) -> Any:
    if isinstance(node, ScalarNode):
        return _scalar(node)
    if isinstance(node, SequenceNode):
        out = YList()
        out.start = _mark(node)
        for item in node.value:
            out.append(_convert(item))
            out.pos.append(_mark(item))
        return out
    if isinstance(node, MappingNode):
        out = YMap()
        out.start = _mark(node)
        merged: list[tuple[Any, Any, tuple[int, int]]] = []
        for knode, vnode in node.value:
            if knode.tag == _MERGE:
                merged.extend(_merge_items(vnode))
                continue
            key = _key(knode)
            if key in out:
                line, col = _mark(knode)
                raise YAMLLoadError(f'duplicate key "{key}" (first at line {out.pos[key][0]})', line, col)
            out[key] = _convert(vnode)
            out.pos[key] = _mark(knode)
        for key, value, pos in merged:  # explicit keys win over merged ones, as in YAML 1.1
            if key not in out:
                out[key] = value
                out.pos[key] = pos
        return out
    raise YAMLLoadError(f"unsupported YAML node {type(node).__name__}", *_mark(node))


def _merge_items(vnode: Node) -> Iterator[tuple[Any, Any, tuple[int, int]]]:
    sources = vnode.value if isinstance(vnode, SequenceNode) else [vnode]
    for src in sources:
        if not isinstance(src, MappingNode):
            raise YAMLLoadError("a merge key (<<) needs a mapping", *_mark(src))
        converted = _convert(src)
        for key, value in converted.items():
            yield key, value, converted.pos[key]


def load_yaml_stream(text: str) -> tuple[list[RawDocument], YAMLLoadError | None]:
    """Parse every document of ``text``. Documents before an error are kept."""
    docs: list[RawDocument] = []
    try:
        for node in yaml.compose_all(text, Loader=_Loader):
            if node is None:
                continue
            if _expanded_size(node) > MAX_EXPANDED_NODES:
                raise YAMLLoadError(
                    f"document expands to more than {MAX_EXPANDED_NODES} nodes through aliases",
                    *_mark(node),
                )
            data = _convert(node)
            docs.append(RawDocument(data, node.start_mark.line + 1, node.end_mark.line + 1))
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
    return docs, None


def to_plain(value: Any) -> Any:
    """Drop position information (plain dict/list), e.g. for JSON output or pydantic."""
    if isinstance(value, dict):
        return {k: to_plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_plain(v) for v in value]
    return value
