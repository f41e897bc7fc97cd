"""The webhook as a plain ASGI application (no framework: five routes do not need one).

Routes: ``POST /validate`` and ``POST /mutate`` (admission.k8s.io/v1 AdmissionReview), ``GET
/healthz`` (the process answers), ``GET /readyz`` (rules loaded, context loaded once, not
draining), ``GET /metrics`` (Prometheus).

Linting is CPU-bound and runs on a small thread pool so that the event loop keeps answering
probes and can enforce the per-request time budget: a request whose lint overruns the budget is
answered per ``--failure-mode`` (the stray lint finishes in the background; the pool is bounded,
so a pathological object cannot pile up threads). Identical objects (the validating and the
mutating webhook both see each object; dry runs, retries and reinvocations repeat them) are
answered from a small decision cache keyed by the object's content and the context generation.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from eksmllint.core.finding import Finding
from eksmllint.server import admission as adm
from eksmllint.server.context import ContextSnapshot, ContextStore
from eksmllint.server.intake import BodyReaders, Lane, json_digest
from eksmllint.server.linting import INTERNAL_ERROR_CODE, AdmissionLinter, is_exempt
from eksmllint.server.logtext import escape_log
from eksmllint.server.metrics import Metrics
from eksmllint.server.owners import default_controllers, made_by_its_controller
from eksmllint.server.settings import ServerSettings

log = logging.getLogger("eksmllint.server")

_POD_SPEC = {
    "restartPolicy": "Never",
    "containers": [
        {"name": "c", "image": "python:3.11.9-slim", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}
    ],
}
WARM_UP_OBJECTS = (
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "warm-up"}, "spec": _POD_SPEC},
    {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "warm-up"},
        "spec": {"template": {"spec": _POD_SPEC}},
    },
    {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "warm-up"},
        "spec": {"pytorchReplicaSpecs": {"Worker": {"replicas": 1, "template": {"spec": _POD_SPEC}}}},
    },
)

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict]]
Send = Callable[[dict], Awaitable[None]]


class _Reply(Exception):
    """Answer the HTTP request with ``status`` and a plain-text ``message`` (never a traceback)."""

    def __init__(self, status: int, message: str, headers: list[tuple[bytes, bytes]] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or []


@dataclass
class _Decision:
    response: dict
    result: str
    findings: tuple[Finding, ...] = ()
    cacheable: bool = True


class WebhookApp:
    def __init__(
        self,
        linter: AdmissionLinter,
        settings: ServerSettings | None = None,
        store: ContextStore | None = None,
        metrics: Metrics | None = None,
        background: list[Callable[[], Coroutine[Any, Any, None]]] | None = None,
    ) -> None:
        self.linter = linter
        self.settings = settings or ServerSettings()
        self.store = store
        self.metrics = metrics or Metrics()
        # Two lanes, so large objects cannot starve small ones of threads; each queue is bounded.
        self._small = Lane("lint", max(1, self.settings.lint_threads), self.settings.max_in_flight)
        self._large = Lane("large", 1, self.settings.max_large_in_flight)
        self._parser = Lane("parse", 1, self.settings.max_in_flight)
        self.draining = False
        self.started = False
        self._controllers = (
            default_controllers() if self.settings.owner_controllers is None else self.settings.owner_controllers
        )
        self._in_flight = 0  # event-loop only: no lock
        self._bodies = BodyReaders(self.settings)
        self.warmed = threading.Event()
        self._background = background or []
        self._tasks: list[asyncio.Task] = []
        self._cache: OrderedDict[tuple, _Decision] = OrderedDict()
        if store is not None:
            prev = store.on_reload

            def on_reload(snap: ContextSnapshot) -> None:
                self.metrics.set_context(snap.counts, snap.generation, snap.problems)
                if prev:
                    prev(snap)

            store.on_reload = on_reload
            self.metrics.set_context(store.snapshot.counts, store.snapshot.generation, store.snapshot.problems)

    # -- ASGI --------------------------------------------------------------------------------
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        path, method = scope.get("path", ""), scope.get("method", "GET")
        try:
            if path in ("/validate", "/mutate"):
                if method != "POST":
                    raise _Reply(405, "use POST", [(b"allow", b"POST")])
                await self._admission(path[1:], scope, receive, send)
            elif path == "/healthz":
                await _text(send, 200, "ok")
            elif path == "/readyz":
                ready, why = self.ready()
                await _text(send, 200 if ready else 503, why)
            elif path == "/metrics":
                await _respond(send, 200, self.metrics.render(), self.metrics.content_type.encode())
            else:
                raise _Reply(404, "not found: use /validate, /mutate, /healthz, /readyz or /metrics")
        except _Reply as reply:
            await _text(send, reply.status, reply.message, reply.headers)
        except Exception:  # a bug of ours: logged in full, answered without internals
            log.exception("unexpected error answering %s %s", method, path)
            await _text(send, 500, "eksmllint internal error (logged)")

    def add_background(self, factory: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Run ``factory()`` as a task from startup until shutdown (e.g. the TLS file poller)."""
        self._background.append(factory)

    def ready(self) -> tuple[bool, str]:
        if self.draining:
            return False, "shutting down"
        if not self.started:
            return False, "starting"
        if not self.warmed.is_set():
            return False, "warming up"
        if self.store is not None and not self.store.ready():
            return False, "context not loaded yet"
        return True, "ready"

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self.startup()
                except Exception as err:  # report, so the server exits instead of serving half-ready
                    log.exception("startup failed")
                    await send({"type": "lifespan.startup.failed", "message": str(err)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.shutdown()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def startup(self) -> None:
        loop = asyncio.get_running_loop()
        if self.store is not None:
            await loop.run_in_executor(None, self.store.start)
        # On a daemon thread of its own: readiness waits for it, the probes and the rest of
        # start-up do not, and a pathological rule cannot hold up the process's exit.
        threading.Thread(target=self._warm_up, name="eksmllint-warm-up", daemon=True).start()
        for factory in self._background:
            self._tasks.append(asyncio.create_task(factory()))
        self.started = True

    async def shutdown(self) -> None:
        self.draining = True
        for t in self._tasks:
            t.cancel()
        for t in self._tasks:
            try:
                await t
            except (asyncio.CancelledError, Exception):
                pass
        if self.store is not None:
            await asyncio.get_running_loop().run_in_executor(None, self.store.stop)
        for lane in (self._small, self._large, self._parser):
            lane.executor.shutdown(wait=False, cancel_futures=True)

    def _warm_up(self) -> None:
        """Lint one object of each common kind before reporting ready: the lazily built schema
        validators, CRD models and rule caches are then ready before the first request, whose
        time budget would otherwise pay for them (and, on a busy node, be answered per
        --failure-mode)."""
        snapshot = self.store.snapshot if self.store is not None else None
        for obj in WARM_UP_OBJECTS:
            try:
                self.linter.lint(obj, snapshot, "default")
            except Exception:  # a warm-up problem is the first request's to report
                log.debug("warm-up lint of %s failed", obj["kind"], exc_info=True)
        self.warmed.set()

    # -- admission ---------------------------------------------------------------------------
    async def _admission(self, endpoint: str, scope: Scope, receive: Receive, send: Send) -> None:
        # The body first: a request counts as in flight only once it has arrived, so clients that
        # send headers and stall cannot hold the slots real reviews need (issue 22).
        try:
            body = await self._bodies.receive(scope, receive)
        except adm.AdmissionError as err:
            self.metrics.requests.labels(endpoint, "bad_request").inc()
            # After a 408 the rest of the body may still come: the connection is not reusable.
            raise _Reply(err.status, err.message, [(b"connection", b"close")] if err.status == 408 else []) from None
        if self._in_flight >= self.settings.max_in_flight:
            self.metrics.requests.labels(endpoint, "overloaded").inc()
            raise _Reply(
                503,
                f"more than {self.settings.max_in_flight} admission requests in flight; retry",
                [(b"retry-after", b"1")],
            )
        self._in_flight += 1
        try:
            await self._answer(endpoint, body, send)
        finally:
            self._in_flight -= 1

    async def _answer(self, endpoint: str, body: bytes, send: Send) -> None:
        started = time.perf_counter()  # from the body's arrival: the time eksmllint takes
        deadline = asyncio.get_running_loop().time() + self.settings.time_budget
        self.metrics.in_flight.inc()
        result = "error"
        large = len(body) >= self.settings.large_body
        try:
            try:
                # A large body is decoded off the event loop (~0.1 s per MB), on a thread of its
                # own: it must always be decoded to be answered, and must not delay the others.
                request = await self._parser.submit(adm.parse_review, body) if large else adm.parse_review(body)
            except adm.AdmissionError as err:
                result = "bad_request"
                raise _Reply(err.status, err.message) from None
            decision = await self._decide(endpoint, request, self._large if large else self._small, deadline)
            result = decision.result
            if decision.findings and not request.dry_run:
                for f in decision.findings:
                    self.metrics.findings.labels(f.code, f.slug, str(f.severity)).inc()
            payload = json.dumps(adm.review(request, decision.response), separators=(",", ":")).encode()
            await _respond(send, 200, payload, b"application/json")
        finally:
            self.metrics.in_flight.dec()
            self.metrics.requests.labels(endpoint, result).inc()
            lane = "large" if large else "small"
            self.metrics.latency.labels(endpoint, lane).observe(time.perf_counter() - started)

    async def _decide(self, endpoint: str, request: adm.AdmissionRequest, lane: Lane, deadline: float) -> _Decision:
        skip = self._skip_reason(request)
        if skip is not None:
            return skip
        if endpoint == "mutate" and (not self.linter.mutate_codes or request.operation != "CREATE"):
            # Only new objects are patched: most of what fixes touch (a Pod's spec, a Job's
            # template) is immutable after creation, so a patch on UPDATE would be refused.
            return _Decision(adm.allow(), "allowed" if request.operation == "CREATE" else "skipped", cacheable=False)
        snapshot = self.store.snapshot if self.store is not None else None
        loop = asyncio.get_running_loop()
        key = None
        try:
            # Large objects are not cached: hashing one holds the GIL for ~50 ms per MB (the C JSON
            # encoder), which every other request would wait for; they are rare enough to judge twice.
            if self.settings.cache_size > 0 and lane is not self._large:
                judged = [request.object]
                if endpoint == "validate" and request.operation == "UPDATE" and self.settings.ratchet:
                    judged.append(request.old_object)  # ratcheting: the decision depends on it too
                digest = json_digest(judged)
                key = (endpoint, request.namespace, digest, snapshot.generation if snapshot else 0)
                hit = self._cache.get(key)
                if hit is not None:
                    self._cache.move_to_end(key)
                    self.metrics.cache.labels("hit").inc()
                    return hit
                self.metrics.cache.labels("miss").inc()
            if lane.full:
                log.error("%s %s: %d %s objects already being judged", endpoint, request.subject, lane.limit, lane.name)
                return self._unjudged(
                    request, f"{lane.limit} {lane.name} objects are already being judged", "overloaded"
                )
            work = self._validate if endpoint == "validate" else self._mutate
            stop = threading.Event()
            future = lane.submit(work, request, snapshot, stop)
            try:
                decision = await asyncio.wait_for(future, max(0.0, deadline - loop.time()))
            except TimeoutError:
                stop.set()  # the stray lint ends before its next rule
                raise
        except TimeoutError:
            self.metrics.internal_errors.labels("<timeout>").inc()
            log.error(
                "%s %s: no answer within the %.1fs time budget (on-timeout %s)",
                endpoint,
                request.subject,
                self.settings.time_budget,
                self.settings.on_timeout,
            )
            return self._unjudged(request, f"not judged within the {self.settings.time_budget:g}s budget", "timeout")
        except Exception as err:  # a bug outside the rules: still an answer, never a 500
            self.metrics.internal_errors.labels("<server>").inc()
            log.exception("%s %s: internal error", endpoint, request.subject)
            return self._failure(f"eksmllint internal error: {type(err).__name__}: {err}", "error")
        if key is not None and decision.cacheable:
            self._cache[key] = decision
            if len(self._cache) > self.settings.cache_size:
                self._cache.popitem(last=False)
        return decision

    def _unjudged(self, request: adm.AdmissionRequest, why: str, result: str) -> _Decision:
        """The answer for an object whose judgement did not finish: denied (``--on-timeout
        deny``, the default: an admission controller must not admit what it did not judge) or
        admitted with a warning saying so (``--on-timeout admit``, or ``--audit``)."""
        message = f"eksmllint: {request.subject} {why}"
        if self.settings.on_timeout == "deny" and not self.settings.audit:
            return _Decision(
                adm.deny(f"{message}; not admitted unjudged (retry later)", code=504, reason="Timeout"),
                result,
                cacheable=False,
            )
        return _Decision(
            adm.allow([adm.truncate(f"{message}; admitted unjudged", adm.WARNING_MAX)]), result, cacheable=False
        )

    def _skip_reason(self, request: adm.AdmissionRequest) -> _Decision | None:
        if request.operation not in ("CREATE", "UPDATE"):
            return _Decision(adm.allow(), "skipped", cacheable=False)
        if request.sub_resource:  # status, scale...: not the spec the rules judge
            return _Decision(adm.allow(), "skipped", cacheable=False)
        obj = request.object or {}
        meta = obj.get("metadata")
        if not isinstance(meta, dict):
            meta = {}
        if meta.get("deletionTimestamp"):  # finalizers being removed: never block a deletion
            return _Decision(adm.allow(), "skipped", cacheable=False)
        if not self.settings.judge_owned and made_by_its_controller(obj, request.username, self._controllers):
            return _Decision(adm.allow(), "skipped", cacheable=False)  # judged with its owner
        reason = is_exempt(obj) if self.settings.exempt_annotation else None
        if reason is not None:
            log.info("%s exempt from eksmllint (%s)", request.subject, escape_log(reason))
            return _Decision(
                adm.allow(
                    [
                        adm.truncate(
                            adm.clean(f"eksmllint: checks skipped (eksmllint.io/exempt: {reason})"), adm.WARNING_MAX
                        )
                    ]
                ),
                "exempt",
                cacheable=False,
            )
        return None

    def _failure(self, message: str, result: str) -> _Decision:
        if self.settings.fail_closed:
            return _Decision(adm.deny(message, code=500, reason="InternalError"), result, cacheable=False)
        return _Decision(
            adm.allow([adm.truncate(f"{message}; admitted (failure-mode open)", adm.WARNING_MAX)]),
            result,
            cacheable=False,
        )

    def _internal(self, errors: list[Finding], subject: str) -> None:
        for f in errors:
            rule = f.message.split(" ", 2)[1] if f.message.startswith("rule ") else "<unknown>"
            self.metrics.internal_errors.labels(rule).inc()
            log.error("%s: %s", subject, escape_log(f.message))

    # Both run on a lane's thread pool.
    def _validate(
        self, request: adm.AdmissionRequest, snapshot: ContextSnapshot | None, stop: threading.Event | None = None
    ) -> _Decision:
        active = self.linter.lint(request.object or {}, snapshot, request.namespace, stop).active
        internal = [f for f in active if f.code == INTERNAL_ERROR_CODE]
        if internal:
            self._internal(internal, request.subject)
        threshold = self.settings.deny_on
        blocking = [f for f in active if f.code != INTERNAL_ERROR_CODE and f.severity >= threshold]
        lower = [f for f in active if f.code != INTERNAL_ERROR_CODE and f.severity < threshold]
        notes: list[str] = []
        if blocking and request.operation == "UPDATE" and request.old_object and self.settings.ratchet:
            blocking, preexisting = self._ratchet(blocking, request, snapshot, stop)
            notes += [f"pre-existing, not blocking this update: {adm.finding_line(f)}" for f in preexisting]
        closed = self.settings.fail_closed
        if internal and not closed:
            notes += [
                f"eksmllint internal error, not blocking (failure-mode open): {adm.finding_line(f)}" for f in internal
            ]
        refused_for = blocking + (internal if closed else [])
        if refused_for and self.settings.audit:
            log.info(
                "audit: would deny %s%s: %s",
                request.subject,
                " (dry run)" if request.dry_run else "",
                ", ".join(f.code for f in refused_for),
            )
            notes = [f"eksmllint audit mode, would deny: {adm.finding_line(f)}" for f in refused_for] + notes
            return _Decision(
                adm.allow(adm.warnings_for(lower, notes)), "would_deny", tuple(active), cacheable=not internal
            )
        warnings = adm.warnings_for(lower, notes)
        if refused_for:
            log.info(
                "denied %s%s: %s",
                request.subject,
                " (dry run)" if request.dry_run else "",
                ", ".join(f.code for f in refused_for),
            )
            response = adm.deny(adm.denial_message(request.subject, refused_for, threshold), warnings)
            return _Decision(response, "denied", tuple(active), cacheable=not internal)
        return _Decision(adm.allow(warnings), "allowed", tuple(active), cacheable=not internal)

    def _ratchet(
        self,
        blocking: list[Finding],
        request: adm.AdmissionRequest,
        snapshot: ContextSnapshot | None,
        stop: threading.Event | None = None,
    ) -> tuple[list[Finding], list[Finding]]:
        """(new, pre-existing): as CRD validation ratcheting does, an UPDATE is not refused for
        what the stored object already had (same rule, same path), or no controller could touch
        the metadata of an object admitted before the webhook (or a rule) existed."""
        old = self.linter.lint(request.old_object or {}, snapshot, request.namespace, stop)
        known = {(f.code, tuple(f.location.path)) for f in old.active}
        new = [f for f in blocking if (f.code, tuple(f.location.path)) not in known]
        return new, [f for f in blocking if (f.code, tuple(f.location.path)) in known]

    def _mutate(
        self, request: adm.AdmissionRequest, snapshot: ContextSnapshot | None, stop: threading.Event | None = None
    ) -> _Decision:
        m = self.linter.mutate(request.object or {}, snapshot, request.namespace, stop=stop)
        if m.internal_errors:
            self._internal(m.internal_errors, request.subject)
            if self.settings.fail_closed:
                return self._failure(
                    "eksmllint internal error while computing fixes: "
                    + "; ".join(f.message for f in m.internal_errors[:3]),
                    "error",
                )
        for err in m.errors:
            log.warning("%s: fix not applied: %s", request.subject, escape_log(err))
        if not m.patch:
            return _Decision(adm.allow(), "allowed", cacheable=not m.internal_errors)
        if self.settings.audit:
            notes = [f"eksmllint audit mode, would patch: {f.code} {f.slug}: {f.fix.title}" for f in m.applied if f.fix]
            return _Decision(adm.allow(adm.warnings_for([], notes)), "would_patch", cacheable=not m.internal_errors)
        notes = [f"eksmllint mutated: {f.code} {f.slug}: {f.fix.title}" for f in m.applied if f.fix]
        log.info(
            "patched %s%s: %s",
            request.subject,
            " (dry run)" if request.dry_run else "",
            ", ".join(f.code for f in m.applied),
        )
        return _Decision(adm.allow(adm.warnings_for([], notes), m.patch), "patched", cacheable=not m.internal_errors)


async def _respond(
    send: Send, status: int, body: bytes, content_type: bytes, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", content_type),
                (b"content-length", str(len(body)).encode()),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _text(send: Send, status: int, message: str, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    await _respond(send, status, (message + "\n").encode(), b"text/plain; charset=utf-8", headers)
