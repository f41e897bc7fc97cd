"""``eksmllint explain``: one rule's documentation."""

from __future__ import annotations

import click

from eksmllint.cli.options import load_registry, make_config, platform_option


@click.command("explain")
@click.argument("rule")
@click.option(
    "--config", "config", type=click.Path(dir_okay=False), help="Config file whose platform: releases to assume."
)
@platform_option
def explain(rule, config, platform):
    """Explain a rule (code or slug): rationale, a bad and a good example, the fix."""
    from eksmllint.docs import explain_text

    registry = load_registry()
    # `explain 301` and `explain eml301` are EML301, as the codes read aloud.
    found = registry.get(f"EML{rule.zfill(3)}" if rule.isdigit() else rule)
    if found is None:
        import difflib

        close = difflib.get_close_matches(rule.lower(), [r.slug for r in registry], n=2)
        hint = f"did you mean {' or '.join(close)}? " if close else ""
        raise click.UsageError(f"no such rule {rule!r}; {hint}see `eksmllint rules`")
    cfg = make_config(config, (), (), None, (), platform)
    click.echo(explain_text(found, cfg.platform), nl=False)
