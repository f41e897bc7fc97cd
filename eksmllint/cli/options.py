"""What the commands share: exit codes, the common options, the configuration and the rule registry."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
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


def load_config(config: str | None, discover_from: str | None = None, **overrides: Any) -> Config:
    """The run's configuration: ``config``, else the closest one above ``discover_from`` (the
    folder of ``--stdin-filename``) or the working directory; the flags override it."""
    try:
        cfg = resolve_config(config, Path(discover_from) if discover_from else None)
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


#: ruff's ``--stdin-filename``: what ``-`` stands for (lint, fix, graph).
stdin_filename_option = click.option(
    "--stdin-filename",
    "stdin_filename",
    metavar="PATH",
    help="The path stdin (-) stands for: config discovery, exclude, per-path-ignores, messages, report "
    "paths and baseline fingerprints use it. Without other paths, reads stdin.",
)


def stdin_paths(paths: tuple[str, ...], stdin_filename: str | None) -> list[str]:
    """The paths to read: ``-`` alone when only ``--stdin-filename`` was given (ruff reads stdin
    then); a name for stdin while stdin is not read is a usage error, not a silent no-op."""
    if stdin_filename is None:
        if not paths:
            raise click.UsageError("give at least one path (or - for stdin)")
        return list(paths)
    if not stdin_filename.strip() or stdin_filename == "-":
        raise click.UsageError("--stdin-filename needs a file path")
    if not paths:
        return ["-"]
    if "-" not in paths:
        raise click.UsageError("--stdin-filename names what '-' reads, but '-' is not among the paths")
    return list(paths)


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
    stdin_filename: str | None = None,
    **extra: Any,
) -> Config:
    return load_config(
        config,
        os.path.dirname(os.path.abspath(stdin_filename)) if stdin_filename else None,
        select=split_values(select),
        ignore=split_values(ignore),
        kubernetes_version=k8s_version,
        context=tuple(context) or None,
        platform=tuple(platform) or None,
        **extra,
    )


class FormatTarget(click.ParamType):
    """``FORMAT`` or ``FORMAT:FILE`` (kube-linter's and Checkov's format/output pairs in one value),
    the choices listed in ``--help``; shared by ``lint`` and ``graph`` so they read it alike."""

    name = "format"

    def __init__(self, choices: Iterable[str]) -> None:
        self.choices = tuple(choices)

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return f"[{'|'.join(self.choices)}][:FILE]"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> tuple[str, str | None]:
        if isinstance(value, tuple):
            return value
        fmt, sep, path = str(value).partition(":")
        if fmt not in self.choices:
            self.fail(
                f"unknown format {fmt!r} (choose from {', '.join(self.choices)}; FORMAT or FORMAT:FILE)", param, ctx
            )
        if sep and not path:
            self.fail(f"{value!r}: no file after the colon", param, ctx)
        return fmt, path or None


def report_targets(
    formats: Iterable[tuple[str, str | None]], output: str | None, default: str
) -> list[tuple[str, str | None]]:
    """The reports of one run as (format, file or None for stdout): each ``--format FORMAT[:FILE]``,
    ``--output FILE`` being the file of the one ``--format`` that names none. At most one report
    goes to stdout; every file's folder must exist (usage errors otherwise)."""
    import os

    targets = list(formats) or [(default, None)]
    if output is not None:
        open_ = [i for i, (_, path) in enumerate(targets) if path is None]
        if len(open_) != 1:
            raise click.UsageError(
                f"--output {output}: give it with exactly one --format that names no file "
                f"(or write --format FORMAT:FILE for each report)"
            )
        targets[open_[0]] = (targets[open_[0]][0], output)
    to_stdout = [fmt for fmt, path in targets if path is None]
    if len(to_stdout) > 1:
        raise click.UsageError(
            f"--format {' and '.join(to_stdout)}: only one report can go to stdout; write the others to files "
            "(--format FORMAT:FILE)"
        )
    paths = [path for _, path in targets if path is not None]
    for path in paths:
        if not os.path.isdir(os.path.dirname(path) or "."):
            raise click.UsageError(f"{path}: the directory {os.path.dirname(path)!r} does not exist")
    if len(set(paths)) != len(paths):
        raise click.UsageError("two reports name the same file")
    return targets


def write_report(path: str, text: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as err:
        raise click.ClickException(f"cannot write {path}: {err.strerror or err}") from None
