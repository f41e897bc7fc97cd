"""``eksmllint webhook-manifests``: the webhook's Kubernetes manifests."""

from __future__ import annotations

from pathlib import Path

import click

from eksmllint.cli.options import load_registry, split_values


@click.command("webhook-manifests")
@click.option(
    "--namespace",
    "namespace",
    default="eksmllint",
    show_default=True,
    help="Namespace to deploy the webhook into (it is excluded from admission).",
)
@click.option("--image", default=None, help="Container image (default ghcr.io/eksmllint/eksmllint:<version>).")
@click.option("--replicas", default=2, show_default=True, type=click.IntRange(min=2))
@click.option(
    "--mutate",
    multiple=True,
    help="Rules whose safe fixes the webhook applies; registers the MutatingWebhookConfiguration "
    "(without it only the validating webhook is registered).",
)
@click.option("--output-dir", type=click.Path(file_okay=False), help="Write one file per component instead of stdout.")
def webhook_manifests_command(namespace, image, replicas, mutate, output_dir):
    """Print the webhook's Kubernetes manifests (RBAC, Deployment, webhooks, cert-manager)."""
    from eksmllint.server import manifests

    if not manifests.valid_namespace(namespace):
        raise click.UsageError(f"--namespace {namespace!r} is not a valid namespace name (RFC 1123 label)")
    mutate = split_values(mutate) or ()
    unknown = [m for m in mutate if not load_registry().select(m)]
    if unknown:
        raise click.UsageError(f"--mutate: no such rule {unknown[0]!r}")
    image = image or manifests.DEFAULT_IMAGE
    if not output_dir:
        click.echo(manifests.render(namespace, image, replicas, mutate), nl=False)
        return
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name, docs in manifests.manifest_files(namespace, image, replicas, mutate).items():
        (out / name).write_text(manifests.dump(docs), encoding="utf-8")
        click.echo(f"wrote {out / name}", err=True)
