"""``eksmllint audit``: lint the objects of a live cluster (see :mod:`eksmllint.audit`).

Exit codes as ``lint``: 0 nothing at or above ``--fail-on``; 1 findings at or above it; 2 usage,
config or cluster error (no credentials, unreachable, a kind that may not be listed).
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import click

from eksmllint.cli.options import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, common_options, fails, load_registry, make_config
from eksmllint.formatters.safe import one_line


@contextlib.contextmanager
def _outside_any_checkout() -> Iterator[None]:
    """Reports write paths relative to the git checkout around the working directory; an audit's
    "files" are objects (``PyTorchJob/ml/llm.yaml``), so render from an empty directory where
    they stay as they are."""
    here = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="eksmllint-audit-") as empty:
        os.chdir(empty)
        try:
            yield
        finally:
            os.chdir(here)


@click.command("audit")
@click.option(
    "--kubeconfig", type=click.Path(dir_okay=False), help="Kubeconfig (default: in-cluster, else ~/.kube/config)."
)
@click.option("--kube-context", "kube_context", help="Context of the kubeconfig to use.")
@click.option("-n", "--namespace", help="Judge only this namespace's objects (cluster-wide ones are then context).")
@click.option("-l", "--selector", help="Judge only objects with these labels (a label selector, e.g. team=llm).")
@common_options
@click.option(
    "--format",
    "fmt",
    default="text",
    show_default=True,
    help="Output format: text, json, sarif, junit, github, gitlab, html.",
)
@click.option("--output", type=click.Path(dir_okay=False), help="Write the --format report to FILE.")
@click.option(
    "--export",
    "export_dir",
    type=click.Path(file_okay=False),
    help="Also write the objects read, one YAML file each (DIR/objects/Kind/namespace/name.yaml, context in DIR/context/).",
)
@click.option("--fail-on", type=click.Choice(["error", "warning", "info", "never"]), help="Lowest severity that fails.")
@click.option("--exit-zero", is_flag=True, help="Always exit 0 unless eksmllint itself fails.")
def audit_command(
    kubeconfig,
    kube_context,
    namespace,
    selector,
    config,
    select,
    ignore,
    k8s_version,
    platform,
    context,
    fmt,
    output,
    export_dir,
    fail_on,
    exit_zero,
):
    """Lint what a live cluster holds: its training workloads, NodePools, queues... (read-only)."""
    from eksmllint.audit import ClusterError, ClusterReader, read_cluster, write_export
    from eksmllint.config import ConfigError
    from eksmllint.core.engine import lint_loaded, load_context
    from eksmllint.formatters import FORMATTERS, RenderOptions, get_renderer, use_color
    from eksmllint.render.progress import ProgressBar, wanted

    if fmt not in FORMATTERS:
        raise click.UsageError(f"unknown format {fmt!r} (choose from {', '.join(sorted(FORMATTERS))})")
    output = os.path.abspath(output) if output else None
    if output and not os.path.isdir(os.path.dirname(output)):
        raise click.UsageError(f"--output {output}: the directory {os.path.dirname(output)!r} does not exist")
    cfg = make_config(config, select, ignore, k8s_version, context, platform, fail_on=fail_on)
    registry = load_registry()
    bar = ProgressBar(label="objects")

    def progress(done: int, total: int) -> None:
        if wanted(total=total):
            bar(done, total)

    try:
        reader = ClusterReader(kubeconfig, kube_context)
        snap = read_cluster(reader, namespace, selector, progress)
    except ClusterError as err:
        raise click.ClickException(one_line(str(err))) from None
    finally:
        bar(1, 1)  # clears the bar, if one was drawn
    for note in snap.notes:
        click.echo(f"eksmllint: {one_line(note)}", err=True)
    for error in snap.errors:
        click.echo(f"eksmllint: error: {one_line(error)}", err=True)
    if snap.owned:
        click.echo(
            f"eksmllint: {snap.owned} object(s) made by a judged controller left out (their owner is judged)", err=True
        )
    if export_dir:
        count = write_export(snap, export_dir)
        click.echo(f"eksmllint: exported {count} object(s) to {one_line(export_dir)}", err=True)
    try:
        # --context / the config's context: paths (NodePools kept in git, say) join the cluster's
        result = lint_loaded(snap.load_result(), cfg, registry, load_context(cfg))
    except ConfigError as err:
        raise click.UsageError(str(err)) from None
    with _outside_any_checkout():
        if output:
            report = get_renderer(fmt)(result, registry, RenderOptions())
            try:
                Path(output).write_text(report, encoding="utf-8")
            except OSError as err:
                raise click.ClickException(f"cannot write --output {output}: {err.strerror or err}") from None
            fmt = "text"
        options = RenderOptions(color=use_color(sys.stdout))
        click.echo(get_renderer(fmt)(result, registry, options), nl=False, color=options.color)
    if snap.errors:
        sys.exit(EXIT_USAGE)
    failed = fails(result.active, cfg.fail_on)
    sys.exit(EXIT_FINDINGS if failed and not exit_zero else EXIT_OK)
