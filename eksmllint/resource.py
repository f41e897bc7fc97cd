"""Source files, documents and resources: what the loader produces and rules read."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from eksmllint.core.finding import DocPath, Location, ResourceRef
from eksmllint.yamlpos import YList, YMap


@dataclass(eq=False)
class SourceFile:
    """A file (or stdin) as read. ``text`` is None when it could not be decoded."""

    path: str
    text: str | None
    kind: str = "yaml"  # yaml | json | slurm
    documents: list[Document] = field(default_factory=list)
    context_only: bool = False  # loaded with --context: feeds the graph, its findings are dropped

    _lines: list[str] | None = field(default=None, repr=False)

    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            self._lines = self.text.splitlines() if self.text else []
        return self._lines


@dataclass(eq=False)
class Document:
    file: SourceFile
    index: int
    data: Any
    start_line: int
    template: str | None = None  # Helm "# Source:" header


@dataclass(eq=False)
class Resource:
    """One Kubernetes object: a document, or an item of a ``kind: List`` (``base_path``)."""

    doc: Document
    data: YMap
    base_path: DocPath = ()

    def __post_init__(self) -> None:
        meta = self.data.get("metadata")
        meta = meta if isinstance(meta, dict) else {}
        api = self.data.get("apiVersion")
        kind = self.data.get("kind")
        self.api_version: str = api if isinstance(api, str) else ""
        self.kind: str = kind if isinstance(kind, str) else ""
        ns = meta.get("namespace")
        name = meta.get("name")
        self.namespace: str | None = ns if isinstance(ns, str) else None
        self.name: str | None = name if isinstance(name, str) else None
        self.metadata: dict = meta
        self.ref = ResourceRef(self.api_version, self.kind, self.namespace, self.name)
        self.group: str = self.api_version.split("/")[0] if "/" in self.api_version else ""

    # -- access ------------------------------------------------------------------------------
    def get(self, path: DocPath, default: Any = None) -> Any:
        return get_path(self.data, path, default)

    @property
    def annotations(self) -> dict:
        ann = self.metadata.get("annotations")
        return ann if isinstance(ann, dict) else {}

    @property
    def labels(self) -> dict:
        lab = self.metadata.get("labels")
        return lab if isinstance(lab, dict) else {}

    @property
    def key(self) -> tuple[str, str, str | None, str | None]:
        """Graph node key; namespace None means cluster-scoped or unspecified."""
        return ("res", self.kind, self.namespace, self.name)

    @property
    def owner(self) -> Resource:
        """The object findings on this one name: itself, but for a view another object defines
        (:mod:`eksmllint.platform.derived`: a Katib trial's Job names the Experiment, a TrainJob's
        JobSet the TrainJob)."""
        return self.__dict__.get("_owner", self)

    @property
    def origin(self) -> Resource:
        """The other object a merged view's data is written in (a TrainJob's runtime); itself for
        any other."""
        return self.__dict__.get("_origin", self)

    def fixable(self, paths: Iterable[DocPath]) -> bool:
        """Can a fix edit these paths of this object in its document? (Always, but for a view merged
        from two objects: :class:`eksmllint.platform.derived.MergedResource`.)"""
        return True

    # -- location ----------------------------------------------------------------------------
    def location(self, path: DocPath = ()) -> Location:
        # Memoised per path: rules point at the same places over and over (a NodePool's taint is
        # "related" to every pod it blocks). Locations are immutable, so sharing them is safe.
        key = path if isinstance(path, tuple) else tuple(path)
        memo = self.__dict__.setdefault("_locations", {})
        found = memo.get(key)
        if found is None:
            found = memo[key] = self._location(key)
        return found

    def _location(self, path: DocPath) -> Location:
        line, col = resolve_position(self.data, path)
        if line == 0:
            line, col = self.data.start if isinstance(self.data, YMap) else (self.doc.start_line, 1)
        return Location(
            file=self.doc.file.path,
            line=line,
            col=col,
            doc_index=self.doc.index,
            path=self.base_path + tuple(path),
            template=self.doc.template,
        )


_MISSING = object()


def get_path(data: Any, path: DocPath, default: Any = None) -> Any:
    """The value at ``path`` (keys of mappings, indices of lists), or ``default``."""
    cur = data
    for elem in path:
        if elem.__class__ is str:  # the common case first: rules read ~25 paths a resource
            if isinstance(cur, dict):
                cur = cur.get(elem, _MISSING)
                if cur is not _MISSING:
                    continue
            return default
        if isinstance(elem, int):
            if isinstance(cur, list) and -len(cur) <= elem < len(cur):
                cur = cur[elem]
                continue
            return default
        if isinstance(cur, dict) and elem in cur:
            cur = cur[elem]
            continue
        return default
    return cur


def resolve_position(data: Any, path: DocPath) -> tuple[int, int]:
    """1-based (line, col) of ``path``, or of its nearest existing ancestor; (0, 0) if none."""
    best = data.start if isinstance(data, (YMap, YList)) else (0, 0)
    cur = data
    for elem in path:
        if isinstance(cur, YMap) and not isinstance(elem, int) and elem in cur:
            best = cur.pos.get(elem, best)
            cur = cur[elem]
        elif isinstance(cur, YList) and isinstance(elem, int) and 0 <= elem < len(cur):
            best = cur.pos[elem]
            cur = cur[elem]
        else:
            break
    return best


def walk(data: Any, path: DocPath = ()) -> Iterator[tuple[DocPath, Any]]:
    """Every (path, value) below ``data``, depth first."""
    yield path, data
    if isinstance(data, dict):
        for k, v in data.items():
            yield from walk(v, path + (k,))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            yield from walk(v, path + (i,))
