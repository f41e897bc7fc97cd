"""Connection limits of `eksmllint serve` (issues 15 and 16): idle and slow clients never starve
the others, never turn into 503s, and never hold up SIGTERM.

Real server subprocesses on 127.0.0.1 only; every wait is bounded and every socket is closed by
the test that opened it (the soak stops by itself after a fixed count).
"""

from __future__ import annotations

import contextlib
import resource
import signal
import socket
import ssl
import time

import pytest
import trustme
from test_server import Server, client_context, gpu_pod, post, review

pytestmark = pytest.mark.slow  # real servers as subprocesses, a thousand connections

IDLE_CONNECTIONS = 1000


def _tls_connection(port: int, ctx: ssl.SSLContext) -> ssl.SSLSocket:
    raw = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        return ctx.wrap_socket(raw, server_hostname="127.0.0.1")  # handshake done: a real idle client
    except BaseException:
        raw.close()
        raise


def _closed_by_peer(sock: ssl.SSLSocket, wait: float) -> bool:
    sock.settimeout(wait)
    try:
        return sock.recv(1) == b""
    except (ConnectionResetError, ssl.SSLError, BrokenPipeError):
        return True
    except TimeoutError:
        return False


@contextlib.contextmanager
def serving(tmp_path, *args: str):
    """A server with ``args`` and a client TLS context trusting it; stopped cleanly afterwards."""
    ca = trustme.CA()
    srv = Server(tmp_path, ca, *args).start()
    try:
        yield srv, client_context(ca)
    finally:
        assert srv.stop() == 0


@pytest.fixture()
def open_files():
    """Room for the soak's client sockets: the soft limit raised up to the hard one (this process
    only; restored afterwards)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = IDLE_CONNECTIONS + 256
    if soft < need:
        if hard != resource.RLIM_INFINITY and hard < need:
            pytest.skip(f"the hard open-files limit ({hard}) is below {need}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_sigterm_with_an_idle_keepalive_connection_exits_within_2s(tmp_path):
    ca = trustme.CA()
    srv = Server(tmp_path, ca).start()
    with srv.client() as c:  # httpx keeps the connection alive after the request
        assert post(c, "/validate", review(gpu_pod()))["allowed"] is True
        signalled = time.monotonic()
        srv.proc.send_signal(signal.SIGTERM)
        assert srv.proc.wait(timeout=30) == 0
        assert time.monotonic() - signalled < 2.0
    srv.stop()


def test_a_thousand_idle_tls_connections_get_no_503(tmp_path, open_files):
    with serving(tmp_path) as (srv, ctx), contextlib.ExitStack() as stack:
        for _ in range(IDLE_CONNECTIONS):
            stack.enter_context(_tls_connection(srv.port, ctx))
        with srv.client() as c:
            assert c.get("/healthz").status_code == 200
            assert c.get("/readyz").status_code == 200
            for i in range(5):
                r = c.post("/validate", json=review(gpu_pod(name=f"p{i}"), uid=f"soak-{i}"))
                assert r.status_code == 200, r.text
                assert r.json()["response"]["uid"] == f"soak-{i}"
        assert srv.proc.poll() is None


def test_slow_headers_and_silent_clients_are_dropped(tmp_path):
    with serving(tmp_path, "--header-timeout", "0.5") as (srv, ctx):
        with _tls_connection(srv.port, ctx) as silent, _tls_connection(srv.port, ctx) as slow:
            slow.sendall(b"POST /validate HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # ...and never the rest
            assert _closed_by_peer(silent, 5.0)
            assert _closed_by_peer(slow, 5.0)
        with srv.client() as c:  # a prompt client is served as before
            assert c.get("/healthz").status_code == 200
            time.sleep(1.0)  # idle between requests on a kept-alive connection: not a header timeout
            assert c.get("/healthz").status_code == 200


def test_past_max_connections_the_longest_idle_are_dropped(tmp_path):
    with serving(tmp_path, "--max-connections", "20") as (srv, ctx), contextlib.ExitStack() as stack:
        idle = [stack.enter_context(_tls_connection(srv.port, ctx)) for _ in range(40)]
        with srv.client() as c:
            assert c.get("/healthz").status_code == 200
        assert _closed_by_peer(idle[0], 5.0)  # the oldest made room
        assert not _closed_by_peer(idle[-1], 0.2)  # the newest is still served


def test_connection_flags_are_validated():
    from click.testing import CliRunner

    from eksmllint.cli import cli

    r = CliRunner().invoke(cli, ["serve", "--insecure-http", "--max-connections", "0"])
    assert r.exit_code == 2 and "--max-connections" in r.output
    r = CliRunner().invoke(cli, ["serve", "--insecure-http", "--header-timeout", "0"])
    assert r.exit_code == 2 and "--header-timeout" in r.output
