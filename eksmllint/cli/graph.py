"""``eksmllint graph``: the resource graph of the manifests, as DOT, Mermaid, JSON or HTML.

The rules run first (with the usual config, ``--select`` and ``--ignore``) so that nodes are
coloured by their worst finding. Exit codes: 0 graph written (findings do not fail it: this is a
picture, not a gate); 2 usage error, unknown ``--focus``, or a path that does not exist.
"""

from __future__ import annotations

import sys

import click

from eksmllint.cli.options import (
    EXIT_OK,
    EXIT_USAGE,
    FormatTarget,
    common_options,
    load_registry,
    make_config,
    report_targets,
    stdin_filename_option,
    stdin_paths,
    write_report,
)
from eksmllint.config import ConfigError
from eksmllint.formatters.safe import one_line

FORMATS = ("dot", "mermaid", "json", "html")


@click.command("graph")
@click.argument("paths", nargs=-1)
@common_options
@click.option(
    "--format",
    "fmt",
    multiple=True,
    type=FormatTarget(FORMATS),
    help="dot (Graphviz, the default), mermaid (Markdown), json (nodes and edges), html (a page with the "
    "drawing); to stdout or to FILE, repeatable.",
)
@click.option(
    "--focus",
    "focus_on",
    metavar="KIND/NAME",
    help="Only this resource's neighbourhood (KIND/NAME or KIND/NAMESPACE/NAME), e.g. PyTorchJob/llama3-pretrain.",
)
@click.option(
    "--output", "output", type=click.Path(dir_okay=False), help="The FILE of the one --format that names none."
)
@click.option(
    "--instance-types", is_flag=True, help="Also draw the instance types each device-plugin DaemonSet covers."
)
@stdin_filename_option
def graph_command(
    paths, config, select, ignore, k8s_version, platform, context, fmt, focus_on, output, instance_types, stdin_filename
):
    """Export the resource graph: workloads, pod templates, NodePools, EC2NodeClasses, queues,
    volumes and config, with typed edges; nodes with findings are coloured by worst severity."""
    from eksmllint.core.engine import lint_paths
    from eksmllint.render.graph_export import FocusError, export_graph, focus
    from eksmllint.render.graph_text import to_dot, to_json, to_mermaid
    from eksmllint.render.progress import progress_for

    to_read = stdin_paths(paths, stdin_filename)
    targets = report_targets(fmt, output, "dot")
    cfg = make_config(config, select, ignore, k8s_version, context, platform, stdin_filename=stdin_filename)
    registry = load_registry()
    try:
        result = lint_paths(to_read, cfg, registry, progress=progress_for, stdin_name=stdin_filename)
    except ConfigError as err:
        raise click.UsageError(str(err)) from None
    for missing in result.missing:
        click.echo(f"eksmllint: error: path does not exist: {one_line(missing)}", err=True)
    graph = export_graph(result, include_instance_types=instance_types)
    if focus_on:
        try:
            graph = focus(graph, focus_on)
        except FocusError as err:
            raise click.UsageError(str(err)) from None
    if result.missing:
        sys.exit(EXIT_USAGE)
    for graph_fmt, path in targets:
        if graph_fmt == "html":
            from eksmllint.render.html import render_graph_page

            text = render_graph_page(graph, result, registry)
        else:
            text = {"dot": to_dot, "mermaid": to_mermaid, "json": to_json}[graph_fmt](graph)
        if path is not None:
            write_report(path, text)
        else:
            click.echo(text, nl=False)
    sys.exit(EXIT_OK)
