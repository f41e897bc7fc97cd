"""The ``eksmllint`` command line (click): one module per command, the shared options in
:mod:`eksmllint.cli.options`.

Exit codes: 0 nothing at or above ``--fail-on``; 1 findings at or above it; 2 usage, config or
unreadable-path error (see README "Exit codes").
"""

from __future__ import annotations

import sys
from typing import ClassVar

import click

from eksmllint import __version__
from eksmllint.cli.options import EXIT_OK, EXIT_USAGE


class LazyGroup(click.Group):
    """Each command's module is imported only when the command is used, so `eksmllint lint` does
    not pay for the webhook server (uvicorn) or the graph renderer at start-up."""

    LAZY: ClassVar[dict[str, str]] = {
        "audit": "eksmllint.cli.audit:audit_command",
        "explain": "eksmllint.cli.explain:explain",
        "fix": "eksmllint.cli.fix:fix_command",
        "graph": "eksmllint.cli.graph:graph_command",
        "lint": "eksmllint.cli.lint:lint",
        "rules": "eksmllint.cli.rules:rules_cmd",
        "serve": "eksmllint.cli.serve:serve_command",
        "webhook-manifests": "eksmllint.cli.webhook_manifests:webhook_manifests_command",
    }

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(self.LAZY))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.LAZY and name not in self.commands:
            import importlib

            module, _, attr = self.LAZY[name].partition(":")
            self.add_command(getattr(importlib.import_module(module), attr), name)
        return super().get_command(ctx, name)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="eksmllint")
def cli() -> None:
    """Lint ML training manifests for Kubernetes / Amazon EKS."""


def main() -> None:
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.UsageError as exc:
        exc.show()
        sys.exit(EXIT_USAGE)
    except click.ClickException as exc:
        exc.show()
        sys.exit(EXIT_USAGE)
    except click.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(EXIT_USAGE)
    except BrokenPipeError:
        sys.exit(EXIT_OK)
    finally:
        # Interpreter shutdown runs full garbage collections over everything still alive (the
        # whole run): ~0.9 s at 1,000 documents. Frozen objects are skipped. Only here, in the
        # console entry point: in-process callers (CliRunner, the server) keep normal collection.
        import gc

        gc.freeze()
