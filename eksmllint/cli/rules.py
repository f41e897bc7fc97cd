"""``eksmllint rules``: the rule list."""

from __future__ import annotations

import click

from eksmllint.cli.options import load_registry


@click.command("rules")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text", show_default=True)
def rules_cmd(fmt):
    """List every rule with its code, slug, severity and fix safety."""
    from eksmllint.docs import rules_json, rules_markdown, rules_text

    registry = load_registry()
    render = {"text": rules_text, "json": rules_json, "markdown": rules_markdown}[fmt]
    click.echo(render(registry), nl=False)
