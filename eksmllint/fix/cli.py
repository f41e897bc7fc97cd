"""``eksmllint fix`` and the pieces ``eksmllint lint --fix`` reuses.

Output contract: the fixed stream (``fix -``) and ``--diff`` output go to stdout; everything else
(what was fixed, what could not be, the summary) goes to stderr, so ``helm template . |
eksmllint fix - | kubectl apply -f -`` and ``eksmllint fix --diff > fixes.patch`` both work.

Exit codes: 0 done (or nothing to fix); 1 ``--check`` found pending fixes, or a file could not
be fixed or written; 2 usage or configuration error, or a path that does not exist.

This module imports ``eksmllint.cli`` for the shared options; ``eksmllint.cli`` loads it lazily
when the ``fix`` subcommand is used.
"""

from __future__ import annotations

import difflib
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import click

from eksmllint.cli import (
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_USAGE,
    _registry,
    common_options,
    follow_symlinks_option,
    make_config,
)
from eksmllint.config import Config, ConfigError
from eksmllint.core.engine import YAML_INVALID, LintResult, lint_loaded
from eksmllint.core.finding import Applicability, Finding
from eksmllint.core.registry import Registry
from eksmllint.fix.engine import FileOutcome, FixReport, FixSource, fix_sources
from eksmllint.fix.writer import Interrupted, WriteError, atomic_write, encode, refusal, signals_interrupt
from eksmllint.loader import (
    STDIN,
    LoadProblem,
    LoadResult,
    _file_kind,
    decode,
    discover,
    load,
    parse_source,
    read_bytes,
)
from eksmllint.loader.templates import chart_source
from eksmllint.resource import SourceFile

STDIN_NAME = "<stdin>"
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

    @property
    def invalid(self) -> list[Finding]:
        """Files that are not valid YAML/JSON (EML001): not fixed, and an error of the run."""
        final = self.report.final
        return [f for f in final.active if f.code == YAML_INVALID[0]] if final else []

    @property
    def errors(self) -> bool:
        return bool(self.refused or self.problems or self.invalid or any(f.error for f in self.report.files))


def read_sources(
    paths: list[str], cfg: Config, follow_symlinks: bool = False
) -> tuple[list[FixSource], dict[str, bytes], list[LoadProblem], list[str]]:
    """Read every file under ``paths`` as bytes (kept for the BOM and the changed-on-disk check)."""
    problems: list[LoadProblem] = []
    files, missing = discover(paths, exclude=cfg.path_filter(), follow_symlinks=follow_symlinks, problems=problems)
    sources: list[FixSource] = []
    raw: dict[str, bytes] = {}
    for path in files:
        display = STDIN_NAME if path == STDIN else path
        data, problem = read_bytes(path, cfg.max_file_size)
        text, problem = decode(display, data, cfg.max_file_size) if data is not None else (None, problem)
        if text is None:
            problems.append(replace(problem, message=f"{problem.message}; not fixed"))
            continue
        kind = _file_kind(display, text)
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
) -> FixRun:
    """Read, fix in memory and (``write``) write back. Nothing is printed, except when a
    termination signal arrives while files are written: then what was written is said on stderr
    and the process exits (128 + signal number) without leaving a temporary file."""
    sources, raw, problems, missing = read_sources(paths, cfg, follow_symlinks)
    context = (
        load(
            list(cfg.context),
            exclude=cfg.path_filter(),
            max_bytes=cfg.max_file_size,
            context_only=True,
            follow_symlinks=follow_symlinks,
        )
        if cfg.context
        else None
    )
    report = fix_sources(sources, cfg, registry, unsafe=unsafe, context=context)
    run = FixRun(report, raw, problems, missing)
    invalid = {f.location.file for f in run.invalid}
    try:
        with signals_interrupt():
            for out in report.files:
                if out.path == STDIN_NAME:
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
    if why is None:
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
) -> LintResult:
    """``eksmllint lint --fix``: apply the fixes (writing files; reporting on ``echo``, default
    stderr), then lint what is now on disk. For ``-`` the fixed stream is linted (not printed)."""
    echo = echo or (lambda line: click.echo(line, err=True))
    unsafe = cfg.unsafe_fixes if unsafe is None else unsafe
    run = run_fix(paths, cfg, registry, unsafe=unsafe, write=True, follow_symlinks=follow_symlinks)
    for line in report_lines(run, unsafe=unsafe):
        echo(line)
    disk = [p for p in paths if p != STDIN]
    loaded = (
        load(disk, exclude=cfg.path_filter(), max_bytes=cfg.max_file_size, follow_symlinks=follow_symlinks)
        if disk
        else LoadResult()
    )
    stdin_text = next((out.fixed for out in run.report.files if out.path == STDIN_NAME), None)
    if stdin_text is not None:  # the fixed stream, or the original when it could not be fixed
        src = SourceFile(STDIN_NAME, stdin_text, _file_kind(STDIN_NAME, stdin_text) or "yaml")
        resources, problems = parse_source(src)
        loaded.files.append(src)
        loaded.resources.extend(resources)
        loaded.problems.extend(problems)
    context = (
        load(
            list(cfg.context),
            exclude=cfg.path_filter(),
            max_bytes=cfg.max_file_size,
            context_only=True,
            follow_symlinks=follow_symlinks,
        )
        if cfg.context
        else None
    )
    result = lint_loaded(loaded, cfg, registry, context)
    result.missing = list(loaded.missing)
    return result


# -- the command --------------------------------------------------------------------------------
@click.command("fix")
@click.argument("paths", nargs=-1)
@common_options
@click.option("--diff", "show_diff", is_flag=True, help="Print a unified diff of the fixes to stdout; write nothing.")
@click.option("--check", is_flag=True, help="Write nothing; exit 1 when fixes are pending (for CI).")
@click.option(
    "--unsafe-fixes",
    "unsafe",
    is_flag=True,
    default=None,
    help="Also apply unsafe fixes (they need a judgement; review the result).",
)
@follow_symlinks_option
def fix_command(
    paths, config, select, ignore, k8s_version, platform, context, show_diff, check, unsafe, follow_symlinks
):
    """Apply safe fixes in place ('-' reads stdin and writes the fixed stream to stdout).

    Everything a fix does not touch stays byte for byte: comments, key order, quoting,
    indentation, document separators. Rendered Helm output, symlinks and read-only files are
    never written (--diff still shows what would change). Exit 1 with --check when fixes are
    pending, or when a file could not be fixed or written.
    """
    if not paths:
        raise click.UsageError("give at least one path (or - for stdin)")
    cfg = make_config(config, select, ignore, k8s_version, context, platform, unsafe_fixes=unsafe or None)
    registry = _registry()
    dry = show_diff or check
    try:
        run = run_fix(
            list(paths), cfg, registry, unsafe=cfg.unsafe_fixes, write=not dry, follow_symlinks=follow_symlinks
        )
    except ConfigError as err:
        raise click.UsageError(str(err)) from None
    stdout = getattr(sys.stdout, "buffer", None)
    chunks: list[bytes] = []
    if show_diff:
        chunks = [unified_diff(out).encode("utf-8") for out in run.report.files if out.changed]
    elif not check and run.stdin_fixed is not None:
        chunks = [encode(run.stdin_fixed, run.raw.get(STDIN_NAME, b""))]
    for chunk in chunks:
        if stdout is not None:
            stdout.write(chunk)
        else:  # a text-only stdout (embedding): the bytes are UTF-8 by construction
            sys.stdout.write(chunk.decode("utf-8"))
    sys.stdout.flush()
    for line in report_lines(run, verb="would fix" if dry else "fixed", unsafe=cfg.unsafe_fixes):
        click.echo(line, err=True)
    if run.missing:
        sys.exit(EXIT_USAGE)
    pending = check and any(out.changed for out in run.report.files)
    sys.exit(EXIT_FINDINGS if pending or run.errors else EXIT_OK)
