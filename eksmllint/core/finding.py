"""Findings, locations and fixes: the typed values every rule produces.

Rules never compute line numbers. They name a resource and a *path* inside its document; the engine
resolves the path to a line and column (falling back to the nearest existing ancestor, as cfn-lint
does), which is what lets the same rule run in the admission webhook where there is no file.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from itertools import groupby
from typing import Any

PathElem = str | int
DocPath = tuple[PathElem, ...]


class Severity(enum.IntEnum):
    """Ordered so that thresholds compare naturally (``sev >= Severity.WARNING``)."""

    INFO = 1
    WARNING = 2
    ERROR = 3

    @classmethod
    def parse(cls, text: str) -> Severity:
        try:
            return cls[text.strip().upper()]
        except KeyError:
            raise ValueError(f"unknown severity {text!r} (use error, warning or info)") from None

    def __str__(self) -> str:  # "warning", as printed and as written in config
        return self.name.lower()


class Applicability(str, enum.Enum):
    """Fix safety, as in the catalogue's fix column (ruff's applicability)."""

    SAFE = "safe"
    UNSAFE = "unsafe"


@dataclass(frozen=True, slots=True)
class ResourceRef:
    """Identity of a Kubernetes object: what users recognise in messages and what baselines key on."""

    api_version: str
    kind: str
    namespace: str | None
    name: str | None

    def display(self) -> str:
        ident = self.name or "<unnamed>"
        if self.namespace:
            ident = f"{self.namespace}/{ident}"
        return f"{self.kind or '<no kind>'} {ident}"


@dataclass(frozen=True, slots=True)
class Location:
    """Where a finding points. ``line``/``col`` are 1-based; 0 means 'whole file'."""

    file: str
    line: int = 0
    col: int = 0
    doc_index: int = 0
    path: DocPath = ()
    template: str | None = None  # Helm "# Source:" template the document was rendered from


# --- Fixes ------------------------------------------------------------------------------------
# A fix is data: a list of operations on paths of one document. The fixer (files: edits spliced
# into the original text) and the mutating webhook (RFC 6902 JSON Patch) lower the same operations.
# Files that are not YAML documents (Slurm batch scripts) are fixed with text edits instead.


@dataclass(frozen=True, slots=True)
class SetValue:
    """Set ``path`` to ``value``, creating missing parent mappings."""

    path: DocPath
    value: Any


@dataclass(frozen=True, slots=True)
class AppendItem:
    """Append ``value`` to the list at ``path``, creating the list (and parents) if missing."""

    path: DocPath
    value: Any


@dataclass(frozen=True, slots=True)
class RemovePath:
    """Remove the mapping key or list item at ``path``."""

    path: DocPath


@dataclass(frozen=True, slots=True)
class ReplaceText:
    """Replace ``old``, which starts at 1-based ``line`` and ``col`` of the file, with ``new``
    (``new`` holds no line break). For files that are not YAML documents; the edits of a fix apply
    in order, each to the text the previous ones left."""

    line: int
    col: int
    old: str
    new: str


#: An edit of a YAML/JSON document, addressed by its path.
DocOp = SetValue | AppendItem | RemovePath
FixOp = DocOp | ReplaceText


@dataclass(frozen=True, slots=True)
class Fix:
    """What a finding's fix does: document-path operations, or (for scripts) only text edits."""

    title: str
    ops: tuple[FixOp, ...]
    applicability: Applicability = Applicability.SAFE

    @property
    def edits_text(self) -> bool:
        return bool(self.ops) and all(isinstance(op, ReplaceText) for op in self.ops)


@dataclass(frozen=True, slots=True)
class Finding:
    code: str
    slug: str
    severity: Severity
    message: str  # one line: what is wrong (at most ~120 characters; docs/writing-rules.md)
    location: Location
    resource: ResourceRef | None = None
    fix: Fix | None = field(default=None, compare=False)
    related: tuple[Location, ...] = field(default=(), compare=False)
    suppressed_by: str | None = None  # description of the suppression that matched
    base_path: DocPath = field(default=(), compare=False)  # resource's path in its document (kind: List)
    #: What the reported workload was classified as, and why (eksmllint.analysis.workload_class).
    workload_class: str | None = field(default=None, compare=False)
    workload_evidence: tuple[str, ...] = field(default=(), compare=False)
    #: Why it matters and what to do, and the premises it rests on (platform releases assumed):
    #: shown with ``--show-detail``, in JSON and in HTML, never in the one-line reports.
    detail: str | None = None

    def sort_key(self) -> tuple:
        loc = self.location
        return (loc.file, loc.line, loc.col, self.code, self.message)

    def with_(self, **changes: Any) -> Finding:
        return replace(self, **changes)


def finding_order(f: Finding) -> tuple:
    """The order findings are reported in: :meth:`Finding.sort_key`, then the path and the rest,
    so that findings the key ties (an admitted object has no lines: every position is 1:1) do not
    come out in the set's hash order, which differs from one process to the next; nor do findings
    on two objects at one place (two TrainJobs run from one runtime)."""
    ref = f.resource
    names = (ref.kind, ref.namespace or "", ref.name or "") if ref is not None else ("", "", "")
    return (
        *f.sort_key(),
        format_path(f.location.path),
        f.slug,
        int(f.severity),
        f.suppressed_by or "",
        f.detail or "",
        *names,
    )


def in_order(findings: Iterable[Finding]) -> list[Finding]:
    """The distinct ``findings`` (two rules may report one thing twice), sorted by
    :func:`finding_order`, which only findings that tie on their :meth:`~Finding.sort_key` need in
    full (formatting every path costs more than the sort). Equal findings tie on it too, so only
    ties are hashed to drop duplicates (hashing every finding cost as much as the sort)."""
    out: list[Finding] = []
    for _, group in groupby(sorted(findings, key=Finding.sort_key), key=Finding.sort_key):
        tied = list(group)
        out.extend(tied if len(tied) == 1 else sorted(set(tied), key=finding_order))
    return out


def format_path(path: Iterable[Any]) -> str:
    """``spec.containers[0].resources.limits[nvidia.com/gpu]``: dotted, with list indices and
    keys that contain dots or slashes in brackets (what users can find in their manifest)."""
    out = ""
    for elem in path:
        if isinstance(elem, int) and not isinstance(elem, bool):
            out += f"[{elem}]"
        else:
            text = str(elem)
            if not text or any(ch in text for ch in "./[]"):
                out += f"[{text}]"
            else:
                out += f".{text}" if out else text
    return out or "<object>"
