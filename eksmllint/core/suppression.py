"""The catalogue's three suppression forms, applied centrally after the rules ran.

1. resource annotation ``eksmllint.io/ignore: "EML301,shm-unbounded # reason"``;
2. inline comment ``# eksmllint: disable=EML301`` on the offending line or the line above;
3. config ``per-path-ignores`` (glob -> rule selectors).

Every annotation and inline directive records its hits; one that matched nothing is reported as
``EML006 unused-suppression`` so stale ones get cleaned up. Mandatory rules cannot be suppressed.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from eksmllint.core.finding import Finding, Location, Severity
from eksmllint.core.registry import Registry
from eksmllint.resource import Resource, SourceFile

ANNOTATION = "eksmllint.io/ignore"
_INLINE = re.compile(r"#\s*eksmllint:\s*disable=([A-Za-z0-9,\- ]+)")
UNUSED_CODE, UNUSED_SLUG = "EML006", "unused-suppression"


@dataclass(eq=False)
class Suppression:
    description: str
    codes: frozenset[str]
    location: Location
    unknown: tuple[str, ...] = ()
    refused: tuple[str, ...] = ()  # whole-catalogue selectors where only single rules may be named
    hits: int = 0
    reportable: bool = True  # config ignores are not reported as unused (a subset run may miss them)


@dataclass
class _Scope:
    #: (file, document) -> resource base path -> annotations: a finding reads its own document's
    #: (one scan of every annotated resource per finding was findings x annotations).
    resource_supps: dict[tuple[str, int], dict[tuple, list[Suppression]]] = field(default_factory=dict)
    line_supps: dict[tuple[str, int], list[Suppression]] = field(default_factory=dict)
    path_supps: list[tuple[str, Suppression]] = field(default_factory=list)


def _codes(
    registry: Registry, text: str, single: bool = False
) -> tuple[frozenset[str], tuple[str, ...], tuple[str, ...]]:
    """(codes, unknown selectors, refused selectors); with ``single`` only a code or slug counts
    (``ALL``, families and prefixes are refused)."""
    codes: set[str] = set()
    unknown = []
    refused = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        if single and registry.get(item) is None and registry.select(item):
            refused.append(item)
            continue
        rules = registry.select(item)
        if rules:
            codes.update(r.code for r in rules)
        else:
            unknown.append(item)
    return frozenset(codes), tuple(unknown), tuple(refused)


def collect(
    registry: Registry,
    resources: Iterable[Resource],
    files: Iterable[SourceFile],
    per_path: dict[str, list[str]],
    single_rule_annotations: bool = False,
) -> _Scope:
    """``single_rule_annotations``: the annotation may only name single rules (the webhook under
    ``--no-exempt-annotation``: a whole-catalogue selector would be the exemption it takes away)."""
    scope = _Scope()
    for res in resources:
        raw = res.annotations.get(ANNOTATION)
        if not isinstance(raw, str):
            continue
        written = raw.split("#", 1)[0]
        codes, unknown, refused = _codes(registry, written, single_rule_annotations)
        loc = res.location(("metadata", "annotations", ANNOTATION))
        supp = Suppression(f"annotation {ANNOTATION}", codes, loc, unknown, refused)
        in_doc = scope.resource_supps.setdefault((res.doc.file.path, res.doc.index), {})
        in_doc.setdefault(res.base_path, []).append(supp)
    for src in files:
        if src.text is None or "eksmllint:" not in src.text:
            continue
        for no, line in enumerate(src.lines, 1):
            m = _INLINE.search(line)
            if not m:
                continue
            codes, unknown, _ = _codes(registry, m.group(1))
            supp = Suppression("inline comment", codes, Location(src.path, no, m.start() + 1), unknown)
            scope.line_supps.setdefault((src.path, no), []).append(supp)
            own_line = line.lstrip().startswith("#")
            if own_line:  # a comment on its own line covers the next line
                scope.line_supps.setdefault((src.path, no + 1), []).append(supp)
    for glob, selectors in per_path.items():
        codes, unknown, _ = _codes(registry, ",".join(selectors))
        scope.path_supps.append(
            (
                glob,
                Suppression(
                    f"config per-path-ignores {glob!r}", codes, Location("<config>"), unknown, reportable=False
                ),
            )
        )
    return scope


def apply(findings: list[Finding], scope: _Scope, mandatory: frozenset[str]) -> list[Finding]:
    out = []
    for f in findings:
        supp = None if f.code in mandatory else _match(f, scope)
        if supp is not None:
            supp.hits += 1
            f = f.with_(suppressed_by=supp.description)
        out.append(f)
    return out


def _match(f: Finding, scope: _Scope) -> Suppression | None:
    loc = f.location
    for base, supps in scope.resource_supps.get((loc.file, loc.doc_index), {}).items():
        if loc.path[: len(base)] == base and f.resource is not None:
            for s in supps:
                if f.code in s.codes:
                    return s
    for s in scope.line_supps.get((loc.file, loc.line), ()):
        if f.code in s.codes:
            return s
    norm = loc.file.replace("\\", "/")
    for glob, s in scope.path_supps:
        if f.code in s.codes and (fnmatch.fnmatch(norm, glob) or fnmatch.fnmatch(norm, f"*/{glob}")):
            return s
    return None


def unused(scope: _Scope) -> list[Finding]:
    """EML006 findings for suppressions that matched nothing or name unknown rules."""
    seen: set[int] = set()
    out = []
    all_supps = [s for in_doc in scope.resource_supps.values() for v in in_doc.values() for s in v]
    all_supps += [s for v in scope.line_supps.values() for s in v]
    for s in all_supps:
        if id(s) in seen or not s.reportable:
            continue
        seen.add(id(s))
        if s.refused:
            out.append(_finding(s, f"{s.description} may only name single rules here: {', '.join(s.refused)} ignored"))
        if s.unknown:
            out.append(_finding(s, f"{s.description} names unknown rule(s): {', '.join(s.unknown)}"))
        elif s.hits == 0 and not s.refused:
            names = ", ".join(sorted(s.codes)) or "nothing"
            out.append(_finding(s, f"{s.description} suppresses {names} but nothing matched: remove it"))
    return out


def _finding(s: Suppression, message: str) -> Finding:
    return Finding(UNUSED_CODE, UNUSED_SLUG, Severity.INFO, message, s.location)
