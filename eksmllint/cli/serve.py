"""``eksmllint serve``: the validating and mutating admission webhook."""

from __future__ import annotations

import ipaddress
import logging
import sys
from pathlib import Path

import click

from eksmllint.cli.options import (
    allow_outside_context_option,
    load_registry,
    make_config,
    platform_option,
    split_values,
)
from eksmllint.core.finding import Severity


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@click.command("serve")
@click.option("--host", default=None, help="Address to listen on (default 0.0.0.0; 127.0.0.1 with --insecure-http).")
@click.option("--port", default=8443, show_default=True, type=click.IntRange(0, 65535))
@click.option("--tls-cert", type=click.Path(dir_okay=False), help="PEM certificate (chain); re-read when it changes.")
@click.option("--tls-key", type=click.Path(dir_okay=False), help="PEM private key; re-read when it changes.")
@click.option(
    "--tls-reload-interval",
    default=10.0,
    show_default=True,
    type=click.FloatRange(min=0.05),
    help="Seconds between checks of the certificate files.",
)
@click.option("--insecure-http", is_flag=True, help="Plain HTTP on a loopback address, for local use only.")
@click.option(
    "--config", "config", type=click.Path(dir_okay=False), help="Config file (default: closest .eksmllint.yaml)."
)
@click.option("--select", multiple=True, help="Rules to run; replaces the config's.")
@click.option("--ignore", multiple=True, help="Rules to skip.")
@click.option("--kubernetes-version", "k8s_version", help="Target Kubernetes version.")
@platform_option
@allow_outside_context_option
@click.option(
    "--deny-on",
    type=click.Choice(["error", "warning", "info"]),
    default="error",
    show_default=True,
    help="Lowest severity that denies; lower findings become warnings.",
)
@click.option(
    "--mutate", multiple=True, help="Rules whose safe fixes /mutate applies (codes, slugs, families; default none)."
)
@click.option(
    "--failure-mode",
    type=click.Choice(["open", "closed"]),
    default="open",
    show_default=True,
    help="Answer to a rule crash: admit with the crash as a warning (open) or deny (closed).",
)
@click.option(
    "--on-timeout",
    type=click.Choice(["deny", "admit"]),
    default="deny",
    show_default=True,
    help="Answer for an object whose judgement did not finish (time budget, full queue): deny, or "
    "admit with a warning saying it was not judged.",
)
@click.option(
    "--audit",
    is_flag=True,
    help="Warn-only roll-out: never deny or patch; would-be denials become warnings and are "
    'counted (eksmllint_webhook_requests_total{result="would_deny"}).',
)
@click.option(
    "--exempt-annotation/--no-exempt-annotation",
    default=True,
    show_default=True,
    help="Honour the eksmllint.io/exempt annotation (off: every object is judged).",
)
@click.option(
    "--ratchet/--no-ratchet",
    default=True,
    show_default=True,
    help="On UPDATE, findings the stored object already had warn instead of deny.",
)
@click.option(
    "--judge-owned",
    is_flag=True,
    help="Also judge objects a controller creates from a judged owner (a PyTorchJob's Pods); "
    "by default they pass when that controller sent them (--owner-controller), their owner was judged.",
)
@click.option(
    "--owner-controller",
    "owner_controllers",
    multiple=True,
    metavar="USERNAME",
    help="Username (request.userInfo) of a controller whose objects with a judged owner pass unjudged; "
    "replaces the default installs' controllers (repeatable).",
)
@click.option(
    "--time-budget",
    default=3.0,
    show_default=True,
    type=click.FloatRange(min=0.01, max=29),
    help="Seconds per request; keep it below the webhook's timeoutSeconds.",
)
@click.option(
    "--max-body-bytes",
    default=None,
    type=click.IntRange(min=1024),
    help="Request body cap (default 7 MiB: two 3 MiB objects of an UPDATE plus the envelope).",
)
@click.option(
    "--context-dir",
    multiple=True,
    type=click.Path(file_okay=False),
    help="Directory of context manifests (NodePools, Queues...), e.g. a mounted ConfigMap; reloaded on change.",
)
@click.option(
    "--context-interval",
    default=5.0,
    show_default=True,
    type=click.FloatRange(min=0.05),
    help="Seconds between context change checks.",
)
@click.option(
    "--cluster-context", is_flag=True, help="Also watch the live cluster (needs eksmllint[cluster] and RBAC)."
)
@click.option(
    "--kubeconfig", type=click.Path(dir_okay=False), help="Kubeconfig for --cluster-context outside a cluster."
)
@click.option(
    "--cache-size",
    default=1024,
    show_default=True,
    type=click.IntRange(min=0),
    help="Decisions remembered for repeated identical objects (0 disables).",
)
@click.option("--lint-threads", default=2, show_default=True, type=click.IntRange(1, 64))
@click.option(
    "--shutdown-delay",
    default=0.0,
    show_default=True,
    type=click.FloatRange(min=0, max=60),
    help="Seconds to keep serving, not ready, after SIGTERM (endpoint removal propagates).",
)
@click.option(
    "--graceful-timeout",
    default=20.0,
    show_default=True,
    type=click.FloatRange(min=0),
    help="Seconds to let in-flight requests finish on shutdown.",
)
@click.option(
    "--header-timeout",
    default=10.0,
    show_default=True,
    type=click.FloatRange(min=0.05, max=60),
    help="Seconds a connection may take to send a request's headers before it is dropped.",
)
@click.option(
    "--idle-timeout",
    default=30,
    show_default=True,
    type=click.IntRange(1, 600),
    help="Seconds an idle keep-alive connection is kept open.",
)
@click.option(
    "--max-connections",
    default=4096,
    show_default=True,
    type=click.IntRange(min=1),
    help="Open connections beyond which the longest-idle ones are dropped (also capped below the open-files limit).",
)
@click.option(
    "--max-in-flight",
    default=64,
    show_default=True,
    type=click.IntRange(min=1),
    help="Admission requests answered at once (counted once their body arrived); more get 503 with Retry-After.",
)
@click.option(
    "--body-timeout",
    default=2.0,
    show_default=True,
    type=click.FloatRange(min=0.05, max=29),
    help="Seconds a request body may take to arrive after its headers (408 after).",
)
@click.option(
    "--max-body-readers",
    default=64,
    show_default=True,
    type=click.IntRange(min=1),
    help="Request bodies received at once; a new one evicts the longest-arriving (408).",
)
@click.option(
    "--log-level", type=click.Choice(["debug", "info", "warning", "error"]), default="info", show_default=True
)
def serve_command(
    host,
    port,
    tls_cert,
    tls_key,
    tls_reload_interval,
    insecure_http,
    config,
    select,
    ignore,
    k8s_version,
    platform,
    deny_on,
    mutate,
    failure_mode,
    on_timeout,
    audit,
    exempt_annotation,
    ratchet,
    judge_owned,
    owner_controllers,
    time_budget,
    max_body_bytes,
    context_dir,
    context_interval,
    cluster_context,
    kubeconfig,
    cache_size,
    lint_threads,
    shutdown_delay,
    graceful_timeout,
    header_timeout,
    idle_timeout,
    max_connections,
    max_in_flight,
    body_timeout,
    max_body_readers,
    log_level,
):
    """Run the validating and mutating admission webhook (HTTPS)."""
    from eksmllint.config import ConfigError
    from eksmllint.server.app import WebhookApp
    from eksmllint.server.context import ContextStore, DirectoryContext
    from eksmllint.server.linting import AdmissionLinter
    from eksmllint.server.settings import DEFAULT_MAX_BODY, ServerSettings

    if insecure_http:
        host = host or "127.0.0.1"
        if not _is_loopback(host):
            raise click.UsageError("--insecure-http serves plain HTTP on loopback only; use TLS for other addresses")
        if tls_cert or tls_key:
            raise click.UsageError("--insecure-http and --tls-cert/--tls-key exclude each other")
    else:
        host = host or "0.0.0.0"
        if not (tls_cert and tls_key):
            raise click.UsageError("give --tls-cert and --tls-key (or --insecure-http for local plain HTTP)")
    logging.basicConfig(
        level=log_level.upper(), stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )

    cfg = make_config(config, select, ignore, k8s_version, (), platform)
    registry = load_registry()
    try:
        linter = AdmissionLinter(
            cfg, registry, split_values(mutate) or (), single_rule_annotations=not exempt_annotation
        )
    except (ConfigError, ValueError) as err:
        raise click.UsageError(str(err)) from None

    tls = None
    if not insecure_http:
        from eksmllint.server.tls import ReloadingTLS

        try:
            tls = ReloadingTLS(tls_cert, tls_key)
        except (OSError, ValueError) as err:
            raise click.UsageError(f"cannot load --tls-cert/--tls-key: {err}") from None

    # --context-dir, plus the config's own `context:` paths (what `eksmllint lint` reads too)
    sources = [DirectoryContext(str(Path(d)), cfg.max_file_size) for d in (*context_dir, *cfg.context)]
    if cluster_context:
        from eksmllint.server.cluster import ClusterContext, KubernetesTransport

        try:
            cluster = ClusterContext(KubernetesTransport(kubeconfig))
        except Exception as err:  # no client installed, no config: say so, do not trace back
            raise click.UsageError(f"--cluster-context: {err}") from None
        cluster.start()
        sources.append(cluster)
    store = ContextStore(sources, context_interval) if sources else None
    settings = ServerSettings(
        deny_on=Severity.parse(deny_on),
        failure_mode=failure_mode,
        on_timeout=on_timeout,
        time_budget=time_budget,
        max_body=max_body_bytes or DEFAULT_MAX_BODY,
        cache_size=cache_size,
        lint_threads=lint_threads,
        ratchet=ratchet,
        judge_owned=judge_owned,
        owner_controllers=frozenset(split_values(owner_controllers) or ()) or None,
        max_in_flight=max_in_flight,
        body_timeout=body_timeout,
        max_body_readers=max_body_readers,
        audit=audit,
        exempt_annotation=exempt_annotation,
    )
    app = WebhookApp(linter, settings, store)

    from eksmllint.server.runner import ConnectionLimits, run

    run(
        app,
        host,
        port,
        tls,
        tls_interval=tls_reload_interval,
        shutdown_delay=shutdown_delay,
        graceful_timeout=graceful_timeout,
        log_level=log_level,
        limits=ConnectionLimits(header_timeout, idle_timeout, max_connections),
    )
