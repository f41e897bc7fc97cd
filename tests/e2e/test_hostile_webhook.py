"""Hostile clients against the real `eksmllint serve` (issue 22): stalled bodies must neither
starve real reviews nor hold up SIGTERM.

Real server subprocesses on 127.0.0.1 only; every wait is bounded and every socket is closed by
the test that opened it.
"""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import ssl
import sys
import time

import pytest
import trustme
from repository import ROOT
from test_server import Server, client_context, gpu_pod, post, review

sys.path.insert(0, str(ROOT / "bench"))
from hostile_webhook import denied_job  # the bench's padded job: one definition

pytestmark = pytest.mark.slow  # real servers as subprocesses

STALLED = 64


def stalled_body(port: int, ctx: ssl.SSLContext) -> ssl.SSLSocket:
    """A TLS connection that sent a review's headers and the first bytes of its body, then stalls."""
    raw = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        sock = ctx.wrap_socket(raw, server_hostname="127.0.0.1")
    except BaseException:
        raw.close()
        raise
    body = json.dumps(review(gpu_pod())).encode()
    sock.sendall(
        b"POST /validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n" % len(body) + body[:20]
    )
    return sock


def test_stalled_bodies_do_not_starve_reviews_or_hold_up_sigterm(tmp_path):
    ca = trustme.CA()
    srv = Server(tmp_path, ca, "--max-in-flight", "8", "--max-body-readers", "16").start()
    ctx = client_context(ca)
    try:
        with contextlib.ExitStack() as stack:
            for _ in range(STALLED):
                stack.enter_context(stalled_body(srv.port, ctx))
            time.sleep(0.3)  # every stalled request has reached the app
            with srv.client() as c:
                for i in range(5):
                    resp = post(c, "/validate", review(gpu_pod(name=f"p{i}"), uid=f"real-{i}"))
                    assert resp["uid"] == f"real-{i}"
            # Stalled again (the evicted ones are answered 408), then SIGTERM: no wait for them.
            for _ in range(4):
                stack.enter_context(stalled_body(srv.port, ctx))
            time.sleep(0.2)
            signalled = time.monotonic()
            srv.proc.send_signal(signal.SIGTERM)
            assert srv.proc.wait(timeout=30) == 0
            assert time.monotonic() - signalled < 1.5  # --body-timeout is 2 s, the graceful timeout 20 s
    finally:
        srv.stop()


def test_large_objects_are_judged_and_do_not_starve_small_ones(tmp_path):
    import concurrent.futures

    big = review(denied_job("big", volumes=11_200))
    body = json.dumps(big).encode()
    assert 1_300_000 < len(body) < 1_500_000, len(body)  # ~1.4 MB: under the 1.5 MiB etcd limit
    srv = Server(tmp_path, trustme.CA()).start()
    try:

        def send(payload: dict) -> dict:
            with srv.client() as c:
                return post(c, "/validate", payload)

        with concurrent.futures.ThreadPoolExecutor(5) as pool:
            bigs = [pool.submit(send, big) for _ in range(4)]
            time.sleep(0.2)
            small = pool.submit(send, review(denied_job("small"), uid="small")).result(timeout=60)
            answers = [f.result(timeout=60) for f in bigs]
        assert small["allowed"] is False and "EML601" in small["status"]["message"], small  # judged in time
        for resp in answers:  # judged, or refused unjudged on a slow machine: never admitted
            assert resp["allowed"] is False, resp
    finally:
        srv.stop()
