"""Run the webhook on uvicorn (httptools + uvloop when installed), with TLS rotation and draining.

Shutdown on SIGTERM (what the kubelet sends): ``/readyz`` turns 503 at once so the endpoint is
removed from the Service, the server keeps answering for ``--shutdown-delay`` seconds (the
endpoint removal takes a moment to reach every API server), then stops accepting connections,
drops idle keep-alive connections at once, lets the requests in flight finish (up to
``--graceful-timeout``), and exits 0. A second signal skips what is left of the delay; a second
Ctrl-C also stops waiting for requests in flight. Connection limits: :mod:`.protocol`.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import signal
import sys
import threading
import time
from dataclasses import dataclass
from types import FrameType

import uvicorn

from eksmllint.server.app import WebhookApp
from eksmllint.server.protocol import DEFAULT_HEADER_TIMEOUT, DEFAULT_MAX_CONNECTIONS, WebhookProtocol, connection_cap
from eksmllint.server.tls import ReloadingTLS

log = logging.getLogger("eksmllint.server")


class DrainingServer(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, app: WebhookApp, shutdown_delay: float) -> None:
        super().__init__(config)
        self.webhook = app
        self.shutdown_delay = max(0.0, shutdown_delay)
        self._exit_at: float | None = None

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        # Not recorded in _captured_signals: uvicorn would re-raise it after the graceful stop and
        # the process would die by the signal instead of exiting 0.
        if self._exit_at is not None or self.should_exit:
            self.should_exit = True
            self.force_exit = sig == signal.SIGINT or self.force_exit
            return
        self.webhook.draining = True
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = str(sig)
        log.info("received %s: draining (not ready), stopping in %.1fs", name, self.shutdown_delay)
        self._exit_at = time.monotonic() + self.shutdown_delay
        if self.shutdown_delay == 0:
            self.should_exit = True

    async def on_tick(self, counter: int) -> bool:
        if self._exit_at is not None and time.monotonic() >= self._exit_at:
            self.should_exit = True
        return await super().on_tick(counter)


def tls_reloader(tls: ReloadingTLS, app: WebhookApp, interval: float):
    """A background task factory: poll the certificate files every ``interval`` seconds, on a
    daemon thread of its own (reading files on the event loop let a FIFO at the certificate path
    hang every request, the probes and SIGTERM); the task only starts and stops it."""

    def poll(stop: threading.Event) -> None:
        while not stop.wait(interval):
            try:
                outcome = tls.reload_if_changed()
            except Exception:  # never let the poller die: the current certificate keeps serving
                log.exception("TLS certificate poll failed")
                continue
            if outcome.changed:
                app.metrics.tls_reloads.labels("ok").inc()
            elif outcome.error:
                app.metrics.tls_reloads.labels("failed").inc()

    async def task() -> None:
        stop = threading.Event()
        threading.Thread(target=poll, args=(stop,), name="eksmllint-tls-poll", daemon=True).start()
        try:
            await asyncio.Event().wait()  # until shutdown cancels the task
        finally:
            stop.set()

    return task


class _Config(uvicorn.Config):
    """Serves on the :class:`ReloadingTLS` listening context (uvicorn would build a fixed one);
    carries the connection limits :class:`WebhookProtocol` reads."""

    def __init__(
        self,
        *args,
        tls: ReloadingTLS | None = None,
        header_timeout: float = DEFAULT_HEADER_TIMEOUT,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
        **kwargs,
    ) -> None:
        self._tls = tls
        self.header_timeout = header_timeout
        self.max_connections = max_connections
        if tls is not None:
            kwargs.update(ssl_certfile=tls.certfile, ssl_keyfile=tls.keyfile)
        super().__init__(*args, **kwargs)

    def load(self) -> None:
        super().load()
        if self._tls is not None:
            self.ssl = self._tls.listening


def build_config(
    app: WebhookApp,
    host: str,
    port: int,
    tls: ReloadingTLS | None,
    graceful_timeout: float,
    log_level: str,
    limits: ConnectionLimits,
) -> uvicorn.Config:
    return _Config(
        app,
        tls=tls,
        header_timeout=limits.header_timeout,
        max_connections=connection_cap(limits.max_connections),
        host=host,
        port=port,
        loop="uvloop" if importlib.util.find_spec("uvloop") else "asyncio",
        http=WebhookProtocol,
        lifespan="on",
        interface="asgi3",
        access_log=False,
        server_header=False,
        proxy_headers=False,
        timeout_graceful_shutdown=graceful_timeout,
        timeout_keep_alive=limits.idle_timeout,
        backlog=1024,
        log_level=log_level,
        log_config=None,
    )


@dataclass(frozen=True)
class ConnectionLimits:
    header_timeout: float = DEFAULT_HEADER_TIMEOUT
    #: The API server reuses connections; keep them past its idle window.
    idle_timeout: int = 30
    max_connections: int = DEFAULT_MAX_CONNECTIONS


def run(
    app: WebhookApp,
    host: str,
    port: int,
    tls: ReloadingTLS | None,
    *,
    tls_interval: float = 10.0,
    shutdown_delay: float = 0.0,
    graceful_timeout: float = 20.0,
    log_level: str = "info",
    limits: ConnectionLimits = ConnectionLimits(),
) -> None:
    # Lints run on worker threads; a shorter GIL switch interval than the default 5 ms lets the
    # event loop (TLS, probes, cache hits) in sooner while a lint is running.
    sys.setswitchinterval(0.001)
    if tls is not None:
        app.add_background(tls_reloader(tls, app, tls_interval))
    config = build_config(app, host, port, tls, graceful_timeout, log_level, limits)
    server = DrainingServer(config, app, shutdown_delay)
    server.run()
