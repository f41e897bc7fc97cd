"""Run the webhook on uvicorn (httptools + uvloop when installed), with TLS rotation and draining.

Shutdown on SIGTERM (what the kubelet sends): ``/readyz`` turns 503 at once so the endpoint is
removed from the Service, the server keeps answering for ``--shutdown-delay`` seconds (the
endpoint removal takes a moment to reach every API server), then stops accepting connections,
lets the requests in flight finish (up to ``--graceful-timeout``), and exits 0. A second signal
exits at once.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import signal
import time
from types import FrameType

import uvicorn

from eksmllint.server.app import WebhookApp
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
        log.info("received %s: draining (not ready), stopping in %.1fs",
                 signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else sig,
                 self.shutdown_delay)
        self._exit_at = time.monotonic() + self.shutdown_delay
        if self.shutdown_delay == 0:
            self.should_exit = True

    async def on_tick(self, counter: int) -> bool:
        if self._exit_at is not None and time.monotonic() >= self._exit_at:
            self.should_exit = True
        return await super().on_tick(counter)


def tls_reloader(tls: ReloadingTLS, app: WebhookApp, interval: float):
    """A background task factory: poll the certificate files every ``interval`` seconds."""
    async def loop() -> None:
        while True:
            await asyncio.sleep(interval)
            outcome = tls.reload_if_changed()
            if outcome.changed:
                app.metrics.tls_reloads.labels("ok").inc()
            elif outcome.error:
                app.metrics.tls_reloads.labels("failed").inc()
    return loop


def build_config(app: WebhookApp, host: str, port: int, tls: ReloadingTLS | None,
                 graceful_timeout: float, log_level: str) -> uvicorn.Config:
    kwargs = {}
    if tls is not None:
        kwargs["ssl_context_factory"] = lambda _cfg, _default: tls.listening
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        loop="uvloop" if importlib.util.find_spec("uvloop") else "asyncio",
        http="httptools" if importlib.util.find_spec("httptools") else "h11",
        lifespan="on",
        interface="asgi3",
        access_log=False,
        server_header=False,
        proxy_headers=False,
        timeout_graceful_shutdown=graceful_timeout,
        timeout_keep_alive=30,  # the API server reuses connections; keep them past its idle window
        backlog=1024,
        log_level=log_level,
        log_config=None,
        **kwargs,
    )


def run(app: WebhookApp, host: str, port: int, tls: ReloadingTLS | None, *, tls_interval: float = 10.0,
        shutdown_delay: float = 0.0, graceful_timeout: float = 20.0, log_level: str = "info") -> None:
    if tls is not None:
        app._background.append(tls_reloader(tls, app, tls_interval))
    server = DrainingServer(build_config(app, host, port, tls, graceful_timeout, log_level), app, shutdown_delay)
    server.run()
