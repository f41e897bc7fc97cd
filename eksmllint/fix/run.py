"""What ``eksmllint fix`` and ``eksmllint lint --fix`` do: read, fix in memory, write, report.

Output contract: the fixed stream (``fix -``) and ``--diff`` output go to stdout; everything else
(what was fixed, what could not be, the summary) goes to stderr, so ``helm template . |
eksmllint fix - | kubectl apply -f -`` and ``eksmllint fix --diff > fixes.patch`` both work.

Exit codes: 0 done (or nothing to fix); 1 ``--check`` found pending fixes, or a file could not
be fixed or written; 2 usage or configuration error, or a path that does not exist.

The command itself is :mod:`eksmllint.cli.fix`.
"""

from __future__ import annotations

import difflib
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import click

from eksmllint.config import Config
from eksmllint.core.engine import YAML_INVALID, LintResult, lint_loaded, load_context
from eksmllint.core.finding import Applicability, Finding
from eksmllint.core.registry import Registry
from eksmllint.fix.engine import FileOutcome, FixReport, FixSource, fix_sources
from eksmllint.fix.writer import Interrupted, WriteError, atomic_write, encode, refusal, signals_interrupt
from eksmllint.loader import (
    STDIN,
    STDIN_NAME,
    LoadProblem,
    LoadResult,
    ProgressFactory,
    Skipped,
    decode,
    discover,
    load,
    parse_source,
    read_bytes,
)
from eksmllint.loader.files import display_name, file_kind
from eksmllint.loader.templates import chart_source
from eksmllint.resource import SourceFile

Echo = Callable[[str], None]


@dataclass
class FixRun:
    """Everything one ``fix`` invocation read, decided and did."""

    report: FixReport
    raw: dict[str, bytes]  # original bytes per display path (BOM and change detection)
    problems: list[LoadProblem]  # files that could not be read
    missing: list[str]
    written: list[str] = field(default_factory=list)
    refused: dict[str, str] = field(default_factory=dict)  # path -> why it was not written
    stdin_fixed: str | None = None  # the fixed stream, when "-" was given
    stdin_name: str = STDIN_NAME  # what stdin is called in the report (--stdin-filename)
    skipped: list[Skipped] = field(default_factory=list)  # stdin, when its name is excluded

    @property
    def invalid(self) -> list[Finding]:
        """Files that are not valid YAML/JSON (EML001): not fixed, and an error of the run."""
        final = self.report.final
        return [f for f in final.active if f.code == YAML_INVALID[0]] if final else []

    @property
    def errors(self) -> bool:
        return bool(self.refused or self.problems or self.invalid or any(f.error for f in self.report.files))


def read_sources(
    paths: list[str],
    cfg: Config,
    follow_symlinks: bool = False,
    stdin_name: str | None = None,
    skipped: list[Skipped] | None = None,
) -> tuple[list[FixSource], dict[str, bytes], list[LoadProblem], list[str]]:
    """Read every file under ``paths`` as bytes (kept for the BOM and the changed-on-disk check).
    Stdin whose ``stdin_name`` is excluded is appended to ``skipped`` and its bytes kept in the
    raw map only, to be passed on unfixed (as ruff does): a pipeline through ``fix -`` still gets
    its input."""
    problems: list[LoadProblem] = []
    skipped = [] if skipped is None else skipped
    files, missing = discover(
        paths,
        exclude=cfg.path_filter(),
        follow_symlinks=follow_symlinks,
        problems=problems,
        stdin_name=stdin_name,
        skipped=skipped,
    )
    sources: list[FixSource] = []
    raw: dict[str, bytes] = {}
    if skipped:  # only stdin is ever skipped here
        data, problem = read_bytes(STDIN, cfg.max_file_size, stdin_name)
        raw[skipped[0].file] = data or b""
    for path in files:
        display = display_name(path, stdin_name)
        data, problem = read_bytes(path, cfg.max_file_size, stdin_name)
        text = None
        if data is not None:
            text, problem = decode(display, data, cfg.max_file_size)
        if data is None or text is None:
            if problem is not None:  # read_bytes and decode always say why
                problems.append(replace(problem, message=f"{problem.message}; not fixed"))
            continue
        kind = file_kind(display, text)
        if kind is None or chart_source(display, text):  # not ours; a chart template is rendered first
            continue
        raw[display] = data
        sources.append(FixSource(display, text, kind))
    return sources, raw, problems, missing


def run_fix(
    paths: list[str],
    cfg: Config,
    registry: Registry,
    *,
    unsafe: bool | None = None,
    write: bool = True,
    follow_symlinks: bool = False,
    progress: ProgressFactory | None = None,
    stdin_name: str | None = None,
) -> FixRun:
    """Read, fix in memory and (``write``) write back. Nothing is printed, except when a
    termination signal arrives while files are written: then what was written is said on stderr
    and the process exits (128 + signal number) without leaving a temporary file.
    ``stdin_name``: the path stdin (``-``) stands for (``--stdin-filename``)."""
    skipped: list[Skipped] = []
    sources, raw, problems, missing = read_sources(paths, cfg, follow_symlinks, stdin_name, skipped)
    context = load_context(cfg, follow_symlinks=follow_symlinks, progress=progress)
    report = fix_sources(sources, cfg, registry, unsafe=unsafe, context=context)
    run = FixRun(report, raw, problems, missing, stdin_name=display_name(STDIN, stdin_name), skipped=skipped)
    if skipped:  # excluded stdin: passed on as it came
        run.stdin_fixed, _ = decode(run.stdin_name, raw[run.stdin_name], cfg.max_file_size)
    invalid = {f.location.file for f in run.invalid}
    try:
        with signals_interrupt():
            for out in report.files:
                if out.path == run.stdin_name:
                    run.stdin_fixed = None if out.path in invalid else out.fixed  # never pass invalid input on
                elif out.changed and write:
                    _write(run, out)
    except Interrupted as stop:
        written = ", ".join(run.written) or "none"
        sys.stderr.write(f"eksmllint: interrupted by signal {stop.signum}; files written: {written}\n")
        raise SystemExit(128 + stop.signum) from None
    return run


def _write(run: FixRun, out: FileOutcome) -> None:
    """Write one fixed file, or record why it was not written (the run goes on either way)."""
    why = refusal(out.path, out)
    if why is None and out.fixed is not None:  # a changed file has a fixed text
        try:
            atomic_write(out.path, encode(out.fixed, run.raw[out.path]), expected=run.raw[out.path])
        except WriteError as err:
            why = str(err)
    if why is None:
        run.written.append(out.path)
    else:
        run.refused[out.path] = why


# -- reporting ----------------------------------------------------------------------------------
def _codes(findings) -> str:
    counts = Counter(f.code for f in findings)
    return ", ".join(f"{c} x{n}" if n > 1 else c for c, n in sorted(counts.items()))


def unified_diff(out: FileOutcome) -> str:
    a = (out.original or "").splitlines(keepends=True)
    b = (out.fixed or "").splitlines(keepends=True)
    lines = list(difflib.unified_diff(a, b, f"a/{out.path.lstrip('/')}", f"b/{out.path.lstrip('/')}"))
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def report_lines(run: FixRun, *, verb: str = "fixed", unsafe: bool = False) -> list[str]:
    """Human-readable lines about a run (for stderr): per file, then a summary."""
    lines: list[str] = []
    for p in run.problems:
        lines.append(f"eksmllint: error: {p.file}: {p.message}")
    for f in run.invalid:
        lines.append(
            f"eksmllint: error: {f.location.file}:{f.location.line}:{f.location.col}: {f.code} {f.message}; not fixed"
        )
    for m in run.missing:
        lines.append(f"eksmllint: error: path does not exist: {m}")
    fixed_findings = 0
    fixed_files = 0
    for out in run.report.files:
        if out.error:
            lines.append(f"eksmllint: error: {out.path}: {out.error}")
        for f, why in out.failed:
            lines.append(f"eksmllint: warning: {out.path}:{f.location.line}: {f.code} fix not applied: {why}")
        if out.changed:
            if out.path in run.refused:
                lines.append(f"eksmllint: error: {out.path} {run.refused[out.path]}")
                continue
            fixed_findings += len(out.applied)
            fixed_files += 1
            lines.append(f"{verb} {out.path}: {_codes(out.applied)}")
    if fixed_findings:
        lines.append(
            f"{verb.capitalize()} {fixed_findings} finding{'s' * (fixed_findings != 1)} in "
            f"{fixed_files} file{'s' * (fixed_files != 1)}."
        )
    else:
        lines.append("No fixes to apply.")
    if not unsafe:
        hidden = sum(
            1
            for out in run.report.files
            for f in out.remaining
            if f.fix and f.fix.applicability == Applicability.UNSAFE
        )
        if hidden:
            lines.append(f"{hidden} more fix{'es' * (hidden != 1)} available with --unsafe-fixes.")
    from eksmllint.formatters.safe import one_line

    return [one_line(line) for line in lines]  # file names are data: one log line each


# -- lint --fix ---------------------------------------------------------------------------------
def fix_then_lint(
    paths: list[str],
    cfg: Config,
    registry: Registry,
    *,
    unsafe: bool | None = None,
    echo: Echo | None = None,
    follow_symlinks: bool = False,
    progress: ProgressFactory | None = None,
    stdin_name: str | None = None,
) -> LintResult:
    """``eksmllint lint --fix``: apply the fixes (writing files; reporting on ``echo``, default
    stderr), then lint what is now on disk. For ``-`` the fixed stream is linted (not printed),
    under ``stdin_name`` when given."""
    echo = echo or (lambda line: click.echo(line, err=True))
    unsafe = cfg.unsafe_fixes if unsafe is None else unsafe
    run = run_fix(
        paths,
        cfg,
        registry,
        unsafe=unsafe,
        write=True,
        follow_symlinks=follow_symlinks,
        progress=progress,
        stdin_name=stdin_name,
    )
    for line in report_lines(run, unsafe=unsafe):
        echo(line)
    disk = [p for p in paths if p != STDIN]
    loaded = (
        load(
            disk,
            exclude=cfg.path_filter(),
            max_bytes=cfg.max_file_size,
            follow_symlinks=follow_symlinks,
            progress=progress,
        )
        if disk
        else LoadResult()
    )
    loaded.skipped.extend(run.skipped)
    stdin_text = next((out.fixed for out in run.report.files if out.path == run.stdin_name), None)
    if stdin_text is not None:  # the fixed stream, or the original when it could not be fixed
        src = SourceFile(run.stdin_name, stdin_text, file_kind(run.stdin_name, stdin_text) or "yaml")
        resources, problems = parse_source(src)
        loaded.files.append(src)
        loaded.resources.extend(resources)
        loaded.problems.extend(problems)
    context = load_context(cfg, follow_symlinks=follow_symlinks, progress=progress)
    result = lint_loaded(loaded, cfg, registry, context)
    result.missing = list(loaded.missing)
    return result
