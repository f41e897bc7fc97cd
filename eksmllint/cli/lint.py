"""``eksmllint lint``: lint manifests, report in a format, exit by severity.

Exit codes: 0 nothing at or above ``--fail-on``; 1 findings at or above it; 2 usage, config or
unreadable-path error (see README "Exit codes").
"""

from __future__ import annotations

import sys

import click

from eksmllint.cli.options import (
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_USAGE,
    FormatTarget,
    common_options,
    fails,
    follow_symlinks_option,
    load_registry,
    make_config,
    report_targets,
    stdin_filename_option,
    stdin_paths,
    write_report,
)
from eksmllint.config import ConfigError
from eksmllint.core.finding import Severity
from eksmllint.formatters import FORMATTERS
from eksmllint.formatters.safe import one_line


@click.command("lint")
@click.argument("paths", nargs=-1)
@common_options
@click.option(
    "--format",
    "fmt",
    multiple=True,
    type=FormatTarget(FORMATTERS),
    help="Report format, to stdout or to FILE; repeat it for several reports in one run (default: text).",
)
@click.option(
    "--output",
    "output",
    type=click.Path(dir_okay=False),
    help="The FILE of the one --format that names none; the terminal still gets the text report.",
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
@stdin_filename_option
@click.option(
    "-v",
    "--verbose",
    is_flag=True,
    help="Also list, on stderr, every file the run found but did not lint, and why; and show each finding's detail.",
)
@click.option("--show-detail", is_flag=True, help="Under each finding, why it matters and what to do (also with -v).")
@click.option("-q", "--quiet", is_flag=True, help="Print the findings and nothing else (no summary, no notes).")
@click.option("--statistics", is_flag=True, help="Instead of the findings, print how many there are of each rule.")
@click.option("--show-config", is_flag=True, help="Print the configuration in effect (file and flags merged) and exit.")
@click.option(
    "--fail-if-nothing-linted",
    is_flag=True,
    help="Exit 2 when no Kubernetes object and no batch script was linted (an empty or wrong path).",
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
    stdin_filename,
    verbose,
    show_detail,
    quiet,
    statistics,
    show_config,
    fail_if_nothing_linted,
):
    """Lint manifest files or directories (``-`` reads stdin)."""
    from eksmllint.core.engine import lint_paths
    from eksmllint.formatters import RenderOptions, get_renderer, use_color
    from eksmllint.loader import gc_paused
    from eksmllint.render.progress import progress_for

    cfg = make_config(
        config, select, ignore, k8s_version, context, platform, stdin_filename=stdin_filename, fail_on=fail_on
    )
    if show_config:
        import yaml

        click.echo(f"# {cfg.source or 'no config file: defaults'}, with the command line's flags")
        click.echo(yaml.safe_dump(cfg.model_dump(mode="json", by_alias=True), sort_keys=False), nl=False)
        sys.exit(EXIT_OK)
    paths = stdin_paths(paths, stdin_filename)
    targets = report_targets(fmt, output, "text")
    registry = load_registry()
    try:
        if apply_fixes:
            from eksmllint.fix.run import fix_then_lint

            result = fix_then_lint(
                paths,
                cfg,
                registry,
                unsafe=unsafe_fixes or None,
                follow_symlinks=follow_symlinks,
                progress=progress_for,
                stdin_name=stdin_filename,
            )
        else:
            result = lint_paths(
                paths,
                cfg,
                registry,
                jobs=jobs,
                cache_dir=cache_dir,
                follow_symlinks=follow_symlinks,
                progress=progress_for,
                stdin_name=stdin_filename,
            )
    except ConfigError as err:
        raise click.UsageError(str(err)) from None
    for missing in result.missing:
        click.echo(f"eksmllint: error: path does not exist: {one_line(missing)}", err=True)
    if result.missing:
        sys.exit(EXIT_USAGE)  # a run over part of what was asked is not a result
    for skipped in result.skipped:  # an excluded --stdin-filename is said without -v: it was asked for
        if verbose or (skipped.file == stdin_filename and not quiet):
            click.echo(f"eksmllint: skipped {one_line(skipped.file)}: {one_line(skipped.reason)}", err=True)
    if result.nothing_linted and (fail_if_nothing_linted or not quiet):
        level = "error" if fail_if_nothing_linted else "warning"
        click.echo(
            f"eksmllint: {level}: nothing was linted: no Kubernetes object or batch script in "
            f"{one_line(', '.join(paths))} ({len(result.skipped)} file(s) skipped; -v lists them)",
            err=True,
        )
    # The reports are written with the collector paused, as the rules ran (engine.lint_paths): the
    # dicts and strings of thousands of findings triggered a full collection of the whole run
    # (0.75 s of a 10,000-document JSON or SARIF report) that found no garbage.
    with gc_paused():
        if write_baseline:
            from eksmllint.baseline import write_baseline as write
            from eksmllint.formatters.places import ReportPaths

            count = write(write_baseline, result.findings, ReportPaths(result.run.files))
            click.echo(f"eksmllint: wrote {count} finding(s) to baseline {one_line(write_baseline)}", err=True)
        if baseline:
            result = _apply_baseline(result, baseline)
        tty = sys.stdout.isatty()
        for report_fmt, path in targets:
            if path is not None:
                write_report(
                    path, get_renderer(report_fmt)(result, registry, RenderOptions(show_suppressed=show_suppressed))
                )
        stdout_fmt = next((report_fmt for report_fmt, path in targets if path is None), "text")
        text = stdout_fmt == "text"
        options = RenderOptions(
            color=use_color(sys.stdout),
            show_suppressed=show_suppressed,
            frames=tty and not no_frames and text and not quiet,
            quiet=quiet,
            statistics=statistics and text,
            detail=show_detail or verbose,
        )
        click.echo(get_renderer(stdout_fmt)(result, registry, options), nl=False, color=options.color)
    if result.nothing_linted and fail_if_nothing_linted:
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
