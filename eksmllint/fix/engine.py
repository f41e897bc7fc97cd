"""The fix loop: lint, apply the fixes that do not conflict, re-lint, until nothing is left.

All files of a run are linted together in every pass (cross-file rules such as "the NodePool this
Job lands on consolidates" need the other files), but each file is edited on its own. Per file
the loop stops when no applicable fix is left; when its text repeats (two rules undo each other)
or when the pass cap is reached, the file's ORIGINAL text is kept and the problem is reported,
because a half-converged fix is not something to write to disk. Fixing a fixed file is a no-op.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from eksmllint.config import Config
from eksmllint.core.engine import Linter, LintResult
from eksmllint.core.finding import Applicability, Finding, ReplaceText
from eksmllint.core.registry import Registry, default_registry
from eksmllint.fix.apply import apply_findings, select_fixes
from eksmllint.fix.loop import MAX_PASSES, fix_until_settled
from eksmllint.fix.spans import FixError, parse_stream
from eksmllint.fix.text import ScriptText
from eksmllint.loader import LoadProblem, LoadResult, parse_source
from eksmllint.resource import Resource, SourceFile


@dataclass
class FixSource:
    """A file to fix, as read: ``path`` is its display name (``<stdin>`` for ``-``)."""

    path: str
    text: str | None
    kind: str = "yaml"  # yaml | json | slurm (as eksmllint.loader decides)


@dataclass
class FileOutcome:
    """What the loop did to one file."""

    path: str
    kind: str
    original: str | None
    fixed: str | None
    applied: list[Finding] = field(default_factory=list)  # findings whose fix was applied
    failed: list[tuple[Finding, str]] = field(default_factory=list)  # fixes refused, with why
    remaining: list[Finding] = field(default_factory=list)  # fixable findings left at the end
    error: str | None = None  # the file could not be fixed as a whole (original kept)
    note: str | None = None  # why the file was not considered (not YAML, invalid YAML)
    helm: bool = False  # rendered by Helm ("# Source:" headers)
    passes: int = 0

    @property
    def changed(self) -> bool:
        return self.fixed is not None and self.original is not None and self.fixed != self.original


@dataclass
class FixReport:
    files: list[FileOutcome]
    final: LintResult | None = None  # the lint of the fixed texts (before anything is written)

    @property
    def changed(self) -> list[FileOutcome]:
        return [f for f in self.files if f.changed]

    def outcome(self, path: str) -> FileOutcome | None:
        return next((f for f in self.files if f.path == path), None)


def applicable(finding: Finding, unsafe: bool) -> bool:
    fix = finding.fix
    if fix is None or not fix.ops:
        return False
    return fix.applicability == Applicability.SAFE or (unsafe and fix.applicability == Applicability.UNSAFE)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _fix_key(f: Finding) -> tuple:
    return (f.code, f.location.doc_index, f.location.path, f.fix.title if f.fix else "", f.message)


@dataclass
class _State:
    out: FileOutcome
    text: str | None
    fixable: bool
    seen: set[str] = field(default_factory=set)
    frozen: bool = False
    refused: set[tuple] = field(default_factory=set)


class _Parsed:
    """Parse results per (path, text): unchanged files are not re-parsed in later passes."""

    def __init__(self) -> None:
        self._cache: dict[tuple[str, str | None], tuple[SourceFile, list[Resource], list[LoadProblem]]] = {}

    def get(self, path: str, text: str | None, kind: str) -> tuple[SourceFile, list[Resource], list[LoadProblem]]:
        key = (path, text)
        if key not in self._cache:
            src = SourceFile(path, text, kind)
            resources, problems = parse_source(src)
            self._cache = {k: v for k, v in self._cache.items() if k[0] != path}
            self._cache[key] = (src, resources, problems)
        return self._cache[key]


def _lint(
    states: list[_State], extra: list[LoadProblem], parsed: _Parsed, linter: Linter, context: LoadResult | None
) -> LintResult:
    loaded = LoadResult(problems=list(extra))
    for s in states:
        src, resources, problems = parsed.get(s.out.path, s.text, s.out.kind)
        loaded.files.append(src)
        loaded.resources.extend(resources)
        loaded.problems.extend(problems)
    return linter.lint_loaded(loaded, context)


def _prepare(src: FixSource, parsed: _Parsed) -> _State:
    out = FileOutcome(src.path, src.kind, src.text, src.text)
    state = _State(out, src.text, fixable=False)
    if src.text is None:
        out.note = "not read"
        return state
    if src.kind == "slurm":  # no document tree: only text-edit fixes apply (EML805)
        state.fixable = True
        state.seen.add(_digest(src.text))
        return state
    file, _, problems = parsed.get(src.path, src.text, src.kind)
    out.helm = any(d.template for d in file.documents)
    if problems:
        p = problems[0]
        out.note = f"not fixed: the file is not valid YAML/JSON ({p.message}, line {p.line})"
        return state
    try:
        parse_stream(src.text)
    except FixError as err:
        out.note = f"not fixed: {err}"
        return state
    state.fixable = True
    state.seen.add(_digest(src.text))
    return state


def fix_sources(
    sources: list[FixSource],
    cfg: Config | None = None,
    registry: Registry | None = None,
    *,
    unsafe: bool | None = None,
    context: LoadResult | None = None,
    problems: list[LoadProblem] | None = None,
    max_passes: int = MAX_PASSES,
) -> FixReport:
    """Fix ``sources`` in memory (nothing is written). ``unsafe`` defaults to ``cfg.unsafe_fixes``."""
    cfg = cfg or Config()
    registry = registry or default_registry()
    unsafe = cfg.unsafe_fixes if unsafe is None else unsafe
    parsed = _Parsed()
    states = [_prepare(s, parsed) for s in sources]
    by_path = {s.out.path: s for s in states}
    linter = Linter(cfg, registry)
    extra = list(problems or ())

    def lint() -> LintResult:
        return _lint(states, extra, parsed, linter, context)

    def pending(result: LintResult) -> dict[str, list[Finding]]:
        todo: dict[str, list[Finding]] = {}
        for f in result.active:
            s = by_path.get(f.location.file)
            if s is None or not s.fixable or s.frozen or not applicable(f, unsafe) or _fix_key(f) in s.refused:
                continue
            todo.setdefault(f.location.file, []).append(f)
        return todo

    def apply(todo: dict[str, list[Finding]], pass_no: int) -> bool:
        for path, findings in todo.items():
            _fix_pass(by_path[path], findings, pass_no)
        return True  # refused fixes are not pending any more; deferred ones get the next pass

    def give_up(todo: dict[str, list[Finding]]) -> None:
        for path in todo:
            _give_up(by_path[path], f"fixes did not settle after {max_passes} passes; file left unchanged")

    result = fix_until_settled(lint, pending, apply, give_up, max_passes)
    for s in states:
        s.out.fixed = s.text
        s.out.remaining = [f for f in result.active if f.location.file == s.out.path and f.fix and f.fix.ops]
    return FixReport([s.out for s in states], result)


def _fix_pass(s: _State, findings: list[Finding], pass_no: int) -> None:
    assert s.text is not None  # only files that were read are fixable (_prepare)
    if s.out.kind == "slurm":
        text, applied, failed = _apply_text_fix(s.text, findings)
    else:
        chosen, _deferred = select_fixes(findings)
        text, applied, failed = apply_findings(s.text, chosen, json_file=s.out.kind == "json")
    for f, why in failed:
        s.refused.add(_fix_key(f))
        s.out.failed.append((f, why))
    s.out.passes = pass_no
    if text == s.text:
        return  # every chosen fix was refused; the deferred ones get their turn next pass
    digest = _digest(text)
    if digest in s.seen:
        codes = sorted({f.code for f in s.out.applied + applied})
        _give_up(s, f"fixes undo each other ({', '.join(codes)}); file left unchanged")
        return
    s.seen.add(digest)
    s.text = text
    s.out.applied.extend(applied)


def _apply_text_fix(text: str, findings: list[Finding]) -> tuple[str, list[Finding], list[tuple[Finding, str]]]:
    """Text-edit fixes on lines no other chosen fix touches, in file order. An edit never adds or
    removes a line, so fixes on disjoint lines keep each other's positions; a fix that shares a
    line with an earlier one waits for the next pass, which re-lints and recomputes it."""
    applied: list[Finding] = []
    failed: list[tuple[Finding, str]] = []
    touched: set[int] = set()
    script = ScriptText(text)
    for f in sorted((f for f in findings if f.fix is not None), key=Finding.sort_key):
        fix = f.fix
        assert fix is not None  # filtered above
        if not fix.edits_text:
            failed.append((f, "a script can only be fixed with text edits"))
            continue
        lines = {op.line for op in fix.ops if isinstance(op, ReplaceText)}  # all of them (edits_text)
        if lines & touched:
            continue  # deferred
        try:
            script.apply(fix)
        except FixError as err:
            failed.append((f, str(err)))
            continue
        touched |= lines
        applied.append(f)
    return (script.text if applied else text), applied, failed


def _give_up(s: _State, why: str) -> None:
    s.text = s.out.original
    s.out.applied = []
    s.out.error = why
    s.frozen = True


def fix_text(
    text: str,
    cfg: Config | None = None,
    *,
    name: str = "<text>",
    unsafe: bool | None = None,
    registry: Registry | None = None,
    max_passes: int = MAX_PASSES,
) -> FileOutcome:
    """Fix one manifest held in memory (tests, editors, the webhook's dry run)."""
    from eksmllint.loader.files import file_kind

    kind = file_kind(name, text) or "yaml"
    report = fix_sources([FixSource(name, text, kind)], cfg, registry, unsafe=unsafe, max_passes=max_passes)
    return report.files[0]
