"""What the commands share: exit codes, the common options, the configuration and the rule registry."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import click

from eksmllint.config import Config, ConfigError, check_context_inside, resolve_config, with_overrides
from eksmllint.core.finding import Finding, Severity

if TYPE_CHECKING:
    from eksmllint.core.registry import Registry

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


def split_values(values: Iterable[str]) -> tuple[str, ...] | None:
    """Repeated and comma-separated option values as one tuple (None when there are none)."""
    out = tuple(v.strip() for item in values for v in item.split(",") if v.strip())
    return out or None


def load_config(config: str | None, **overrides: Any) -> Config:
    try:
        cfg = resolve_config(config)
        ctx = click.get_current_context(silent=True)
        if overrides.get("context") is None and not (ctx and ctx.meta.get(ALLOW_OUTSIDE_CONTEXT)):
            check_context_inside(cfg)  # a repository's config reads inside the repository
        return with_overrides(cfg, **overrides)
    except ConfigError as err:
        raise click.UsageError(str(err)) from None


def load_registry() -> Registry:
    """The built-in rules and the installed rule packs; a broken pack is a usage error."""
    from eksmllint.core.registry import RegistryError, default_registry

    try:
        return default_registry()
    except RegistryError as err:
        raise click.ClickException(f"rule pack error: {err}") from None


def fails(findings: Iterable[Finding], fail_on: str) -> bool:
    if fail_on == "never":
        return False
    threshold = Severity.parse(fail_on)
    return any(f.severity >= threshold for f in findings)


#: One definition for every command that builds a Config (lint, fix, graph, serve, explain).
platform_option = click.option(
    "--platform",
    "platform",
    multiple=True,
    metavar="NAME=VERSION",
    help="Release of a platform component rules assume, e.g. karpenter=1.8 (repeatable; see the config's platform:).",
)

ALLOW_OUTSIDE_CONTEXT = "eksmllint.allow_outside_context"


def _allow_outside(ctx: click.Context, _param: click.Parameter, value: bool) -> bool:
    ctx.meta[ALLOW_OUTSIDE_CONTEXT] = value
    return value


#: Kept in the click context (read by :func:`load_config`), not passed to the commands.
allow_outside_context_option = click.option(
    "--allow-outside-context",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_allow_outside,
    help="Let the config file's context: paths lead outside its repository.",
)

_common = [
    click.option(
        "--config",
        "config",
        type=click.Path(dir_okay=False),
        help="Config file (default: closest .eksmllint.yaml or pyproject.toml).",
    ),
    click.option(
        "--select", multiple=True, help="Rules to run (codes, slugs, families, prefixes); replaces the config's."
    ),
    click.option("--ignore", multiple=True, help="Rules to skip."),
    click.option("--kubernetes-version", "k8s_version", help="Target Kubernetes version (default 1.33)."),
    platform_option,
    click.option(
        "--context",
        "context",
        multiple=True,
        type=click.Path(),
        help="Extra paths loaded only as context for cross-file rules.",
    ),
    allow_outside_context_option,
]


def common_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    for opt in reversed(_common):
        fn = opt(fn)
    return fn


follow_symlinks_option = click.option(
    "--follow-symlinks",
    is_flag=True,
    help="Also read symlinks inside the given directories that lead outside them (not followed by default).",
)


def make_config(
    config: str | None,
    select: Iterable[str],
    ignore: Iterable[str],
    k8s_version: str | None,
    context: Iterable[str],
    platform: Iterable[str] = (),
    **extra: Any,
) -> Config:
    return load_config(
        config,
        select=split_values(select),
        ignore=split_values(ignore),
        kubernetes_version=k8s_version,
        context=tuple(context) or None,
        platform=tuple(platform) or None,
        **extra,
    )
