"""``eksmllint fix``: apply fixes in place, print a diff, or check that none is pending.

Output contract: the fixed stream (``fix -``) and ``--diff`` output go to stdout; everything else
(what was fixed, what could not be, the summary) goes to stderr, so ``helm template . |
eksmllint fix - | kubectl apply -f -`` and ``eksmllint fix --diff > fixes.patch`` both work.

Exit codes: 0 done (or nothing to fix); 1 ``--check`` found pending fixes, or a file could not
be fixed or written; 2 usage or configuration error, a path that does not exist, or (``--check``)
a file that could not be read or parsed.
"""

from __future__ import annotations

import sys

import click

from eksmllint.cli.options import (
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_USAGE,
    common_options,
    follow_symlinks_option,
    load_registry,
    make_config,
    stdin_filename_option,
    stdin_paths,
)
from eksmllint.config import ConfigError
from eksmllint.fix.run import report_lines, run_fix, unified_diff
from eksmllint.fix.writer import encode
from eksmllint.formatters.safe import one_line


@click.command("fix")
@click.argument("paths", nargs=-1)
@common_options
@click.option("--diff", "show_diff", is_flag=True, help="Print a unified diff of the fixes to stdout; write nothing.")
@click.option(
    "--check",
    is_flag=True,
    help="Write nothing; exit 1 when fixes are pending, 2 when a file could not be read (for CI).",
)
@click.option(
    "--unsafe-fixes",
    "unsafe",
    is_flag=True,
    default=None,
    help="Also apply unsafe fixes (they need a judgement; review the result).",
)
@follow_symlinks_option
@stdin_filename_option
def fix_command(
    paths: tuple[str, ...],
    config: str | None,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    k8s_version: str | None,
    platform: tuple[str, ...],
    context: tuple[str, ...],
    show_diff: bool,
    check: bool,
    unsafe: bool | None,
    follow_symlinks: bool,
    stdin_filename: str | None,
) -> None:
    """Apply safe fixes in place ('-' reads stdin and writes the fixed stream to stdout).

    Everything a fix does not touch stays byte for byte: comments, key order, quoting,
    indentation, document separators. Rendered Helm output, symlinks and read-only files are
    never written (--diff still shows what would change). Exit 1 with --check when fixes are
    pending, or when a file could not be fixed or written.
    """
    from eksmllint.render.progress import progress_for

    to_read = stdin_paths(paths, stdin_filename)
    cfg = make_config(
        config,
        select,
        ignore,
        k8s_version,
        context,
        platform,
        stdin_filename=stdin_filename,
        unsafe_fixes=unsafe or None,
    )
    registry = load_registry()
    dry = show_diff or check
    try:
        run = run_fix(
            to_read,
            cfg,
            registry,
            unsafe=cfg.unsafe_fixes,
            write=not dry,
            follow_symlinks=follow_symlinks,
            progress=progress_for,
            stdin_name=stdin_filename,
        )
    except ConfigError as err:
        raise click.UsageError(str(err)) from None
    stdout = getattr(sys.stdout, "buffer", None)
    chunks: list[bytes] = []
    if show_diff:
        chunks = [unified_diff(out).encode("utf-8") for out in run.report.files if out.changed]
    elif not check and run.stdin_fixed is not None:
        chunks = [encode(run.stdin_fixed, run.raw.get(run.stdin_name, b""))]
    for chunk in chunks:
        if stdout is not None:
            stdout.write(chunk)
        else:  # a text-only stdout (embedding): the bytes are UTF-8 by construction
            sys.stdout.write(chunk.decode("utf-8"))
    sys.stdout.flush()
    for skipped in run.skipped:
        click.echo(f"eksmllint: not fixed, passed on as read: {one_line(skipped.reason)}", err=True)
    for line in report_lines(run, verb="would fix" if dry else "fixed", unsafe=cfg.unsafe_fixes):
        click.echo(line, err=True)
    if run.missing:
        sys.exit(EXIT_USAGE)
    if check and (run.problems or run.invalid):
        sys.exit(EXIT_USAGE)  # a check that could not read every file vouches for nothing
    pending = check and any(out.changed for out in run.report.files)
    sys.exit(EXIT_FINDINGS if pending or run.errors else EXIT_OK)
