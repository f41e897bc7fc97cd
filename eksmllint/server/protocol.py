"""uvicorn's httptools protocol with the connection limits a webhook on the network needs.

uvicorn alone has no header-read timeout (a client that connects and sends nothing, or sends its
headers a byte at a time, holds its connection forever), counts idle connections against
``limit_concurrency`` (1,000 idle connections made every request, probes included, answer 503),
and closes idle TLS connections gracefully: it waits for the peer's close_notify, so one idle
keep-alive connection held SIGTERM for the whole graceful timeout. Here:

- a request's headers must arrive within ``header_timeout`` seconds of the connection (or of the
  request's first byte on a kept-alive connection), else the connection is dropped;
- idle connections (no request in progress) are dropped at once, without the TLS goodbye, when
  their keep-alive time is up and on shutdown, as are those whose request body is still
  arriving on shutdown; requests in flight still finish;
- beyond ``max_connections`` open connections the longest-idle ones are dropped to make room,
  so idle clients cannot starve new ones; no connection count ever turns into a 503.

The per-request memory bound (requests in flight) is the application's
(:attr:`~eksmllint.server.settings.ServerSettings.max_in_flight`), not a connection count.
"""

from __future__ import annotations

import asyncio
import logging
import resource

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

log = logging.getLogger("eksmllint.server")

DEFAULT_HEADER_TIMEOUT = 10.0  # seconds from connect (or a request's first byte) to complete headers
DEFAULT_MAX_CONNECTIONS = 4096
CLOSE_GRACE = 1.0  # seconds a connection closed after its answer has to read it before it is dropped
FD_RESERVE = 64  # descriptors kept for files, the context directory, logs


def raise_fd_limit() -> int:
    """Raise the soft open-files limit to the hard one; the resulting soft limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        target = hard if hard != resource.RLIM_INFINITY else max(soft, 65536)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    return soft


def connection_cap(requested: int) -> int:
    """``requested``, lowered so that open connections can never exhaust file descriptors."""
    soft = raise_fd_limit()
    if soft == resource.RLIM_INFINITY:
        return requested
    return max(1, min(requested, soft - FD_RESERVE))


class WebhookProtocol(HttpToolsProtocol):
    """Reads ``header_timeout`` and ``max_connections`` from the uvicorn config (see runner)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.limit_concurrency = None  # connection counts never answer 503 (see module docstring)
        self.header_timeout: float = getattr(self.config, "header_timeout", DEFAULT_HEADER_TIMEOUT)
        self.max_connections: int = getattr(self.config, "max_connections", DEFAULT_MAX_CONNECTIONS)
        self._header_timer: asyncio.TimerHandle | None = None
        self.idle_since = self.loop.time()

    @property
    def idle(self) -> bool:
        return self.cycle is None or self.cycle.response_complete

    def _drop(self) -> None:
        """Close without the TLS close_notify exchange: an idle peer may never answer it."""
        self._cancel_header_timer()
        if self.transport is not None:  # also when closing: a graceful TLS close may wait forever
            self.transport.abort()

    def _arm_header_timer(self) -> None:
        if self._header_timer is None:
            self._header_timer = self.loop.call_later(self.header_timeout, self._header_timeout_expired)

    def _cancel_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _header_timeout_expired(self) -> None:
        self._header_timer = None
        log.debug("dropping %s: no complete request headers within %.1fs", self.client, self.header_timeout)
        self._drop()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.idle_since = self.loop.time()
        self._arm_header_timer()
        if len(self.connections) > self.max_connections:
            self._shed_idle()

    def _shed_idle(self) -> None:
        """Drop the longest-idle connections (not this new one) until under the cap."""
        excess = len(self.connections) - self.max_connections
        idle = sorted(
            (c for c in self.connections if isinstance(c, WebhookProtocol) and c is not self and c.idle),
            key=lambda c: c.idle_since,
        )
        for conn in idle[:excess]:
            conn._drop()
        if idle:
            log.warning(
                "more than %d connections open: dropped %d idle one(s)", self.max_connections, min(excess, len(idle))
            )

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_header_timer()
        super().connection_lost(exc)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._arm_header_timer()

    def on_headers_complete(self) -> None:
        self._cancel_header_timer()
        super().on_headers_complete()

    def on_response_complete(self) -> None:
        self.idle_since = self.loop.time()
        super().on_response_complete()
        if self.transport.is_closing():  # closed after its answer (a 408): the peer's goodbye is not awaited long
            self.loop.call_later(CLOSE_GRACE, self._drop)

    def timeout_keep_alive_handler(self) -> None:
        self._drop()

    def shutdown(self) -> None:
        # A request whose body is still arriving has not started: SIGTERM does not wait for it.
        if self.idle or (self.cycle.more_body and not self.cycle.response_started):
            self._drop()
        else:
            self.cycle.keep_alive = False
