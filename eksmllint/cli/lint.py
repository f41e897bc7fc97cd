"""``eksmllint lint``: lint manifests, report in a format, exit by severity.

Exit codes: 0 nothing at or above ``--fail-on``; 1 findings at or above it; 2 usage, config or
unreadable-path error (see README "Exit codes").
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from eksmllint.cli.options import (
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_USAGE,
    common_options,
    fails,
    follow_symlinks_option,
    load_registry,
    make_config,
)
from eksmllint.config import ConfigError
from eksmllint.core.finding import Severity
from eksmllint.formatters.safe import one_line


@click.command("lint")
@click.argument("paths", nargs=-1)
@common_options
@click.option(
    "--format",
    "fmt",
    default="text",
    show_default=True,
    help="Output format: text, json, sarif, junit, github, gitlab, html.",
)
@click.option(
    "--output",
    "output",
    type=click.Path(dir_okay=False),
    help="Write the --format report to FILE; the terminal still gets the text report.",
)
@click.option(
    "--fail-on",
    type=click.Choice(["error", "warning", "info", "never"]),
    help="Lowest severity that fails (default warning).",
)
@click.option("--max-warnings", type=click.IntRange(min=0), help="Fail when there are more warnings than this.")
@click.option("--exit-zero", is_flag=True, help="Always exit 0 unless eksmllint itself fails.")
@click.option(
    "--baseline",
    "baseline",
    type=click.Path(dir_okay=False),
    help="Report only findings not recorded in this baseline.",
)
@click.option(
    "--write-baseline",
    "write_baseline",
    type=click.Path(dir_okay=False),
    help="Record the current findings as the baseline.",
)
@click.option("--show-suppressed", is_flag=True, help="Also print suppressed findings.")
@click.option("--no-frames", is_flag=True, help="No code frames under findings (text format on a terminal).")
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=0),
    default=0,
    show_default="0 = automatic",
    help="Processes: for parsing (0: one per idle CPU from 4 on) and, on large runs, for the rules "
    "(0: one per idle CPU, by the load average); 1: no subprocesses. Every rule sees every file either way.",
)
@click.option("--cache-dir", type=click.Path(file_okay=False), help="Reuse the parse of unchanged files from DIR.")
@click.option(
    "--fix", "apply_fixes", is_flag=True, help="Apply safe fixes first (as `eksmllint fix`), then lint what is left."
)
@click.option("--unsafe-fixes", is_flag=True, help="With --fix: also apply unsafe fixes.")
@follow_symlinks_option
@click.option(
    "-v", "--verbose", is_flag=True, help="Also list, on stderr, every file the run found but did not lint, and why."
)
def lint(
    paths,
    config,
    select,
    ignore,
    k8s_version,
    platform,
    context,
    fmt,
    output,
    fail_on,
    max_warnings,
    exit_zero,
    baseline,
    write_baseline,
    show_suppressed,
    no_frames,
    jobs,
    cache_dir,
    apply_fixes,
    unsafe_fixes,
    follow_symlinks,
    verbose,
):
    """Lint manifest files or directories (``-`` reads stdin)."""
    from eksmllint.core.engine import lint_paths
    from eksmllint.formatters import FORMATTERS, RenderOptions, get_renderer, use_color
    from eksmllint.render.progress import progress_for

    if fmt not in FORMATTERS:
        raise click.UsageError(f"unknown format {fmt!r} (choose from {', '.join(sorted(FORMATTERS))})")
    if not paths:
        raise click.UsageError("give at least one path (or - for stdin)")
    if output and not os.path.isdir(os.path.dirname(output) or "."):
        raise click.UsageError(f"--output {output}: the directory {os.path.dirname(output)!r} does not exist")
    cfg = make_config(config, select, ignore, k8s_version, context, platform, fail_on=fail_on)
    registry = load_registry()
    try:
        if apply_fixes:
            from eksmllint.fix.run import fix_then_lint

            result = fix_then_lint(
                list(paths),
                cfg,
                registry,
                unsafe=unsafe_fixes or None,
                follow_symlinks=follow_symlinks,
                progress=progress_for,
            )
        else:
            result = lint_paths(
                list(paths),
                cfg,
                registry,
                jobs=jobs,
                cache_dir=cache_dir,
                follow_symlinks=follow_symlinks,
                progress=progress_for,
            )
    except ConfigError as err:
        raise click.UsageError(str(err)) from None
    for missing in result.missing:
        click.echo(f"eksmllint: error: path does not exist: {one_line(missing)}", err=True)
    if verbose:
        for skipped in result.skipped:
            click.echo(f"eksmllint: skipped {one_line(skipped.file)}: {one_line(skipped.reason)}", err=True)
    if write_baseline:
        from eksmllint.baseline import write_baseline as write
        from eksmllint.formatters.places import ReportPaths

        count = write(write_baseline, result.findings, ReportPaths(result.run.files))
        click.echo(f"eksmllint: wrote {count} finding(s) to baseline {one_line(write_baseline)}", err=True)
    if baseline:
        result = _apply_baseline(result, baseline)
    tty = sys.stdout.isatty()
    if output:
        report = get_renderer(fmt)(result, registry, RenderOptions(show_suppressed=show_suppressed))
        try:
            Path(output).write_text(report, encoding="utf-8")
        except OSError as err:
            raise click.ClickException(f"cannot write --output {output}: {err.strerror or err}") from None
        fmt = "text"
    options = RenderOptions(
        color=use_color(sys.stdout), show_suppressed=show_suppressed, frames=tty and not no_frames and fmt == "text"
    )
    click.echo(get_renderer(fmt)(result, registry, options), nl=False, color=options.color)
    if result.missing:
        sys.exit(EXIT_USAGE)
    failed = fails(result.active, cfg.fail_on)
    if max_warnings is not None:
        failed = failed or sum(1 for f in result.active if f.severity == Severity.WARNING) > max_warnings
    sys.exit(EXIT_FINDINGS if failed and not exit_zero else EXIT_OK)


def _apply_baseline(result, path: str):
    from dataclasses import replace

    from eksmllint.baseline import BaselineError, compare, load_baseline
    from eksmllint.formatters.places import ReportPaths

    try:
        baseline = load_baseline(path)
    except BaselineError as err:
        raise click.UsageError(one_line(str(err))) from None
    cmp = compare(result.findings, baseline, ReportPaths(result.run.files))
    for entry in cmp.stale:
        click.echo(
            one_line(
                f"eksmllint: stale baseline entry (fixed or gone, remove it): {entry.get('file')}: "
                f"{entry.get('code')} {entry.get('resource') or ''}".rstrip()
            ),
            err=True,
        )
    known = {id(f) for f in cmp.known}
    kept = [f if id(f) not in known else f.with_(suppressed_by=f"baseline {path}") for f in result.findings]
    return replace(result, findings=kept)
