"""Where each node of a YAML stream stands in its text, so a fix can splice just that span.

A ruamel.yaml round-trip dump of a whole document is not byte-identical in general (it re-flows
comments, indentation and quoting), so the fixer never dumps a document: it composes the stream
with PyYAML (whose nodes carry start and end marks as character offsets), finds the node a fix
op names, and replaces or inserts text at those offsets. Everything else keeps its bytes.

Two facts PyYAML's marks do not give directly are recovered from the token stream: where the
``-`` of a block sequence item is, and where the ``:`` after a mapping key is.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from eksmllint.core.finding import DocPath
from eksmllint.yamlpos import YAMLLoadError, _key

try:  # the C loader reports marks as character offsets too (checked in tests/unit/fix/test_fix.py)
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - depends on the PyYAML build
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

_MERGE = "tag:yaml.org,2002:merge"
_KEEP = re.compile(r"[|>][0-9]?\+")
_NO_KEY = object()


class FixError(Exception):
    """A fix op that cannot be applied to this text (reported, never raised to the user)."""


@dataclass
class Stream:
    """A parsed YAML stream: document root nodes (empty documents skipped, as the loader does)."""

    text: str
    docs: list[Node]
    entries: list[int]  # offsets of block sequence entry indicators ("-")
    values: list[int]  # offsets of mapping value indicators (":")
    shared: set[int] = field(default_factory=set)  # id() of nodes reachable twice (aliases)

    @property
    def newline(self) -> str:
        return "\r\n" if "\r\n" in self.text else "\n"

    # -- positions ----------------------------------------------------------------------------
    def line_start(self, pos: int) -> int:
        return self.text.rfind("\n", 0, pos) + 1

    def line_end(self, pos: int) -> int:
        """Offset of the newline ending the line of ``pos`` (``len(text)`` on an unterminated last line)."""
        end = self.text.find("\n", pos)
        return len(self.text) if end < 0 else end

    def column(self, pos: int) -> int:
        return pos - self.line_start(pos)

    def dash_before(self, pos: int) -> int:
        """The ``-`` introducing the block sequence item that starts at ``pos``."""
        i = bisect.bisect_left(self.entries, pos + 1) - 1
        if i < 0:
            raise FixError("no sequence entry indicator before the item")
        return self.entries[i]

    def colon_after(self, pos: int) -> int:
        """Offset just past the ``:`` that follows a mapping key ending at ``pos``."""
        i = bisect.bisect_left(self.values, pos)
        if i >= len(self.values):
            raise FixError("no ':' after the mapping key")
        return self.values[i] + 1

    # -- node extents -------------------------------------------------------------------------
    def content_end(self, node: Node) -> int:
        """Offset just past the node's last character of content (not trailing comments/blank lines).

        Block collections' end marks point at the next token, past comments and blank lines, so
        their content end is their last child's; block scalars' end marks include trailing breaks.
        """
        if isinstance(node, ScalarNode):
            if node.style in ("|", ">"):
                raw = self.text[node.start_mark.index : node.end_mark.index]
                stripped = node.start_mark.index + len(raw.rstrip())
                if _KEEP.search(raw.split("\n", 1)[0].split("#", 1)[0]):
                    # "|+" keeps its trailing blank lines: they are content, up to the last break
                    return max(stripped, node.end_mark.index - 1)
                return stripped
            return node.end_mark.index
        if is_flow(node) or not node.value:
            return node.end_mark.index
        if isinstance(node, MappingNode):
            key, value = node.value[-1]
            return max(self.content_end(value), self.colon_after(key.end_mark.index))
        last = node.value[-1]
        return max(self.content_end(last), self.dash_before(last.start_mark.index) + 1)


def is_flow(node: Node) -> bool:
    return isinstance(node, (MappingNode, SequenceNode)) and node.flow_style is True


def is_null(node: Node) -> bool:
    return isinstance(node, ScalarNode) and node.tag == "tag:yaml.org,2002:null"


def parse_stream(text: str) -> Stream:
    """Compose and scan ``text``; a YAML error becomes a :class:`FixError`."""
    try:
        docs = [n for n in yaml.compose_all(text, Loader=_Loader) if n is not None]
        entries: list[int] = []
        values: list[int] = []
        for tok in yaml.scan(text, Loader=_Loader):
            if isinstance(tok, yaml.BlockEntryToken):
                entries.append(tok.start_mark.index)
            elif isinstance(tok, yaml.ValueToken):
                values.append(tok.start_mark.index)
    except yaml.YAMLError as err:
        raise FixError(f"not valid YAML: {str(err).splitlines()[0] if str(err) else err}") from None
    except RecursionError:
        raise FixError("YAML nested too deeply") from None
    stream = Stream(text, docs, entries, values)
    stream.shared = _shared_nodes(docs)
    return stream


def _shared_nodes(docs: list[Node]) -> set[int]:
    """Nodes reachable more than once: an alias and its anchor are one node in PyYAML's graph.

    Editing one would edit every alias (and recursive aliases would loop), so paths through them
    are refused. Descendants of a shared node are shared too.
    """
    seen: set[int] = set()
    shared: set[int] = set()
    stack: list[tuple[Node, bool]] = [(d, False) for d in docs]
    visited_shared: set[int] = set()
    while stack:
        node, inherited = stack.pop()
        key = id(node)
        if inherited or key in seen:
            if key in visited_shared:
                continue
            shared.add(key)
            visited_shared.add(key)
            inherited = True
        seen.add(key)
        for child in _children(node):
            stack.append((child, inherited))
    return shared


def _children(node: Node) -> Iterator[Node]:
    if isinstance(node, MappingNode):
        for k, v in node.value:
            yield k
            yield v
    elif isinstance(node, SequenceNode):
        yield from node.value


def key_value(node: Node) -> Any:
    """The loaded value of a mapping key node, as the loader builds it (so paths match)."""
    try:
        return _key(node)
    except YAMLLoadError:
        return _NO_KEY


def same_key(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


@dataclass
class Step:
    """One existing node on a path, with how its parent holds it."""

    node: Node
    parent: Node | None = None
    key: Node | None = None  # the key node when the parent is a mapping
    index: int = -1  # pair index (mapping) or item index (sequence) in the parent

    @property
    def key_node(self) -> Node:
        """The key node of a mapping value (a value of a mapping always has one)."""
        if self.key is None:
            raise FixError("a mapping value without its key")
        return self.key


def locate(stream: Stream, doc_index: int, path: DocPath) -> tuple[list[Step], DocPath]:
    """The existing nodes along ``path`` (root first) and the part of the path that is missing."""
    if not 0 <= doc_index < len(stream.docs):
        raise FixError(f"document {doc_index} does not exist")
    steps = [Step(stream.docs[doc_index])]
    for i, elem in enumerate(path):
        node = steps[-1].node
        if id(node) in stream.shared:
            raise FixError("the path goes through a YAML alias (editing it would change every alias)")
        if isinstance(node, MappingNode):
            found = None
            for j, (k, v) in enumerate(node.value):
                if same_key(key_value(k), elem):
                    found = Step(v, node, k, j)
                    break
            if found is None:
                if any(k.tag == _MERGE for k, _ in node.value):
                    raise FixError("the path goes through a YAML merge key (<<)")
                return steps, tuple(path[i:])
            steps.append(found)
        elif isinstance(node, SequenceNode):
            if not isinstance(elem, int) or isinstance(elem, bool):
                raise FixError(f"path element {elem!r} names a key but the node is a list")
            if elem < 0 or elem >= len(node.value):
                return steps, tuple(path[i:])
            steps.append(Step(node.value[elem], node, None, elem))
        else:
            return steps, tuple(path[i:])
    if id(steps[-1].node) in stream.shared:
        raise FixError("the target is a YAML alias or anchored node shared by aliases")
    return steps, ()


def walk(node: Node) -> Iterator[Node]:
    yield node
    for child in _children(node):
        yield from walk(child)
