"""How admission requests come in: their bodies (size, time and count limits) and the lanes of
threads that judge them (bounded queues, so large objects cannot starve small ones)."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from eksmllint.server import admission as adm
from eksmllint.server.settings import ServerSettings

Receive = Callable[[], Awaitable[dict]]


class BodyReaders:
    """The request bodies being received, oldest first (event loop only: no lock)."""

    def __init__(self, settings: ServerSettings) -> None:
        self.settings = settings
        self._readers: OrderedDict[object, asyncio.Event] = OrderedDict()

    async def receive(self, scope: dict, receive: Receive) -> bytes:
        """The request body within ``body_timeout`` and ``max_body``; over ``max_body_readers``
        bodies arriving at once, the one arriving the longest is abandoned (408) for the new
        one. Raises :class:`~eksmllint.server.admission.AdmissionError`."""
        evicted = asyncio.Event()
        token = object()
        self._readers[token] = evicted
        if len(self._readers) > self.settings.max_body_readers:
            _, oldest = self._readers.popitem(last=False)
            oldest.set()
        reading = asyncio.ensure_future(read_body(scope, receive, self.settings.max_body))
        waiting = asyncio.ensure_future(evicted.wait())
        try:
            await asyncio.wait({reading, waiting}, timeout=self.settings.body_timeout, return_when="FIRST_COMPLETED")
            if reading.done():
                return reading.result()
        finally:
            reading.cancel()
            waiting.cancel()
            self._readers.pop(token, None)
        if evicted.is_set():
            raise adm.AdmissionError(
                408, f"the request body was still arriving while {self.settings.max_body_readers} others waited"
            )
        raise adm.AdmissionError(408, f"the request body did not arrive within {self.settings.body_timeout:g}s")


class Lane:
    """A thread pool whose queue is bounded: at most ``limit`` jobs waiting or running (a lint
    abandoned at its time budget counts until it has stopped)."""

    def __init__(self, name: str, threads: int, limit: int) -> None:
        self.name = name
        self.limit = limit
        self.executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix=f"eksmllint-{name}")
        self._jobs: set[Future] = set()

    @property
    def full(self) -> bool:
        return len(self._jobs) >= self.limit

    def submit(self, fn: Callable[..., Any], *args: Any) -> asyncio.Future:
        job = self.executor.submit(fn, *args)
        self._jobs.add(job)
        job.add_done_callback(self._jobs.discard)
        return asyncio.wrap_future(job)


def json_digest(judged: list) -> bytes:
    return hashlib.sha256(json.dumps(judged, sort_keys=True, separators=(",", ":"), default=str).encode()).digest()


async def read_body(scope: dict, receive: Receive, limit: int) -> bytes:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                declared = int(value)
            except ValueError:
                raise adm.AdmissionError(400, "invalid Content-Length") from None
            if declared > limit:
                raise adm.AdmissionError(413, f"request body of {declared} bytes exceeds the {limit}-byte limit")
        elif name == b"content-type":
            ctype = value.split(b";", 1)[0].strip().lower()
            if ctype and ctype != b"application/json" and not ctype.endswith(b"+json"):
                raise adm.AdmissionError(415, f"expected Content-Type application/json, got {ctype.decode('latin-1')}")
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise adm.AdmissionError(400, "client disconnected before sending the whole body")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise adm.AdmissionError(413, f"request body exceeds the {limit}-byte limit")
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)
