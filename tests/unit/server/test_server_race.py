"""A fresh server answering its first requests concurrently (issue 16, item 3): lazily built
schema validators and catalogue tables are shared by the lint threads, and a request must never
see one half-built (it did: valid Pods and Jobs were denied with EML002 IndexError)."""

from __future__ import annotations

import asyncio
import threading
import time

import httpx
import pytest

from eksmllint.config import Config
from eksmllint.core.registry import default_registry
from eksmllint.schema import core as schema_core
from eksmllint.server.app import WebhookApp
from eksmllint.server.linting import AdmissionLinter
from eksmllint.server.settings import ServerSettings

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "namespace": "ml"},
    "spec": {
        "containers": [
            {"name": "c", "image": "python:3.11.9-slim", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}
        ]
    },
}
JOB = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": {"name": "tokenize", "namespace": "ml"},
    "spec": {
        "template": {
            "spec": {
                "restartPolicy": "Never",
                "containers": [
                    {
                        "name": "t",
                        "image": "public.ecr.aws/docker/library/python:3.11.9-slim",
                        "resources": {"limits": {"cpu": "2", "memory": "4Gi"}},
                    }
                ],
            }
        }
    },
}


@pytest.fixture()
def cold_slow_schemas(monkeypatch):
    """Empty validator caches (as in a fresh process) and a compiler slow enough that concurrent
    first builds overlap on every run instead of by chance."""
    monkeypatch.setattr(schema_core, "_VALIDATORS", {})
    schema_core._compiler.cache_clear()
    node = schema_core._Compiler.node

    def slow_node(self, schema):
        time.sleep(0.0002)
        return node(self, schema)

    monkeypatch.setattr(schema_core._Compiler, "node", slow_node)
    yield
    schema_core._compiler.cache_clear()


def test_concurrent_first_validations_all_succeed(cold_slow_schemas):
    results: list = []
    barrier = threading.Barrier(6)

    def validate(obj):
        barrier.wait()
        results.append(schema_core.validate_core(obj, "1.33"))

    threads = [threading.Thread(target=validate, args=(POD if i % 2 else JOB,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert results == [[]] * 6


def test_concurrent_first_requests_on_a_fresh_app_are_not_denied(cold_slow_schemas):
    app = WebhookApp(AdmissionLinter(Config(), default_registry()), ServerSettings(lint_threads=4, time_budget=60))

    def review(obj, uid):
        return {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {"uid": uid, "operation": "CREATE", "namespace": "ml", "object": obj},
        }

    async def go():
        await app.startup()
        try:
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
                rs = await asyncio.gather(
                    *(c.post("/validate", json=review(POD if i % 2 else JOB, f"u{i}")) for i in range(8))
                )
                again = await c.post("/validate", json=review(JOB, "later"))  # nothing wrong was cached
                return [r.json()["response"] for r in [*rs, again]]
        finally:
            await app.shutdown()

    for resp in asyncio.run(go()):
        assert resp["allowed"] is True, resp
        assert not any("EML002" in w or "EML000" in w for w in resp.get("warnings", [])), resp


def test_startup_builds_the_lazy_validators_before_the_first_request(monkeypatch):
    monkeypatch.setattr(schema_core, "_VALIDATORS", {})
    app = WebhookApp(AdmissionLinter(Config(), default_registry()))

    async def go():
        await app.startup()
        assert app.ready()[1] in ("warming up", "ready")
        await asyncio.to_thread(app.warmed.wait, 60)
        ready = app.ready()
        built = set(schema_core._VALIDATORS)
        await app.shutdown()
        assert ready == (True, "ready")
        return built

    built = asyncio.run(go())
    assert {("v1", "Pod"), ("batch/v1", "Job")} <= {(api, kind) for api, kind, _ in built}
