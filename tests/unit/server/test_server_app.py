"""The ASGI app in process: failure modes, the time budget, the decision cache, TLS contexts.

These need rules that crash or hang, which the real server (a subprocess with the built-in rule
pack) cannot be given; the HTTP path is the same app object the server runs.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import time

import httpx
import pytest
import trustme
from repository import ROOT
from webhook_calls import BAD_JOB, POD, _spec, app_with, call, crash

from eksmllint.config import Config
from eksmllint.core.registry import default_registry
from eksmllint.core.rule import Rule
from eksmllint.server.app import WebhookApp
from eksmllint.server.linting import AdmissionLinter
from eksmllint.server.settings import ServerSettings
from eksmllint.server.tls import ReloadingTLS, make_context


def slow(ctx, resource):
    time.sleep(1.0)
    return []


def review(obj: dict, uid: str = "u-1") -> dict:
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {"uid": uid, "operation": "CREATE", "namespace": "ml", "object": obj},
    }


@pytest.mark.parametrize("mode,allowed", [("open", True), ("closed", False)])
def test_rule_crash_is_answered_per_failure_mode(mode, allowed, caplog):
    app = app_with(Rule(_spec("EML998", "test-crash"), crash), failure_mode=mode)
    status, data = call(app, "/validate", review(POD))
    assert status == 200
    resp = data["response"]
    assert resp["allowed"] is allowed and resp["uid"] == "u-1"
    text = resp["status"]["message"] if not allowed else " ".join(resp["warnings"])
    assert "EML998" in text and "ZeroDivisionError" in text
    assert 'eksmllint_webhook_internal_errors_total{rule="EML998"} 1.0' in app.metrics.render().decode()
    assert "rule EML998 (test-crash) crashed" in caplog.text


@pytest.mark.parametrize("mode", ["open", "closed"])
@pytest.mark.parametrize("on_timeout,allowed", [("admit", True), ("deny", False)])
def test_time_budget_is_enforced(mode, on_timeout, allowed):
    app = app_with(Rule(_spec("EML997", "test-slow"), slow), failure_mode=mode, on_timeout=on_timeout, time_budget=0.2)
    started = time.monotonic()
    status, data = call(app, "/validate", review(POD))
    assert time.monotonic() - started < 0.9  # answered before the rule finished
    assert status == 200 and data["response"]["allowed"] is allowed
    assert "not judged within the 0.2s budget" in json.dumps(data["response"])
    assert 'eksmllint_webhook_requests_total{endpoint="validate",result="timeout"} 1.0' in app.metrics.render().decode()


def test_identical_objects_are_answered_from_the_cache():
    app = WebhookApp(AdmissionLinter(Config(), default_registry()), ServerSettings(cache_size=4))

    async def go():
        await app.startup()
        try:
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
                first = (await c.post("/validate", json=review(POD, "a"))).json()["response"]
                second = (await c.post("/validate", json=review(POD, "b"))).json()["response"]
                other = dict(POD, metadata={"name": "q", "namespace": "ml"})
                third = (await c.post("/validate", json=review(other, "c"))).json()["response"]
                return first, second, third
        finally:
            await app.shutdown()

    first, second, third = asyncio.run(go())
    assert (first["uid"], second["uid"], third["uid"]) == ("a", "b", "c")  # the uid is never cached
    metrics = app.metrics.render().decode()
    assert 'eksmllint_webhook_cache_total{result="hit"} 1.0' in metrics
    assert 'eksmllint_webhook_cache_total{result="miss"} 2.0' in metrics


def test_crashed_decisions_are_not_cached():
    app = app_with(Rule(_spec("EML998", "test-crash"), crash), cache_size=8)

    async def go():
        await app.startup()
        try:
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
                for uid in ("a", "b"):
                    assert (await c.post("/validate", json=review(POD, uid))).status_code == 200
        finally:
            await app.shutdown()

    asyncio.run(go())
    assert 'eksmllint_webhook_internal_errors_total{rule="EML998"} 2.0' in app.metrics.render().decode()


def test_server_context_is_tls12_minimum(tmp_path):
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1")
    cert.cert_chain_pems[0].write_to_path(str(tmp_path / "c.pem"))
    cert.private_key_pem.write_to_path(str(tmp_path / "k.pem"))
    ctx = make_context(str(tmp_path / "c.pem"), str(tmp_path / "k.pem"))
    assert ctx.minimum_version == ssl.TLSVersion.TLSv1_2
    tls = ReloadingTLS(str(tmp_path / "c.pem"), str(tmp_path / "k.pem"))
    assert tls.reload_if_changed().changed is False
    first = tls.current
    other = ca.issue_cert("127.0.0.1")
    other.cert_chain_pems[0].write_to_path(str(tmp_path / "c.pem"))
    assert tls.reload_if_changed().error  # new cert with the old key: refused, old kept
    assert tls.current is first
    other.private_key_pem.write_to_path(str(tmp_path / "k.pem"))
    assert tls.reload_if_changed().changed and tls.current is not first and tls.reloads == 1


def test_an_unexpected_bug_is_a_plain_500_without_internals(monkeypatch, caplog):
    from eksmllint.server import admission

    def broken(body):
        raise KeyError("secret internals")

    monkeypatch.setattr(admission, "parse_review", broken)
    app = WebhookApp(AdmissionLinter(Config(), default_registry()))
    status, text = call(app, "/validate", review(POD))
    assert status == 500 and "secret internals" not in text and "Traceback" not in text
    assert "secret internals" in caplog.text  # but it is logged


def test_a_request_after_shutdown_is_still_answered():
    app = WebhookApp(AdmissionLinter(Config(), default_registry()), ServerSettings(failure_mode="closed"))

    async def go():
        await app.startup()
        await app.shutdown()  # the lint pool is gone
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
            return await c.post("/validate", json=review(POD))

    r = asyncio.run(go())
    assert r.status_code == 200 and r.json()["response"]["allowed"] is False


def test_judge_owned_judges_controller_made_objects():
    pod = {
        **POD,
        "metadata": {
            "name": "p",
            "namespace": "ml",
            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": "1", "controller": True}],
        },
        "spec": {
            "containers": [
                {"name": "c", "image": "python:3.11.9-slim", "resources": {"requests": {"nvidia.com/gpu": 1}}}
            ]
        },
    }
    linter = AdmissionLinter(Config(), default_registry())
    body = review(pod)
    body["request"]["userInfo"] = {"username": "system:serviceaccount:kube-system:job-controller"}
    _, skipped = call(WebhookApp(linter), "/validate", body)
    assert skipped["response"] == {"uid": "u-1", "allowed": True}
    _, judged = call(WebhookApp(linter, ServerSettings(judge_owned=True)), "/validate", body)
    assert judged["response"]["allowed"] is False and "EML601" in judged["response"]["status"]["message"]


def test_a_trickling_body_is_abandoned_with_408():
    app = WebhookApp(AdmissionLinter(Config(), default_registry()), ServerSettings(body_timeout=0.2))
    sent: list[dict] = []

    async def go():
        first = True

        async def receive():
            nonlocal first
            if first:
                first = False
                return {"type": "http.request", "body": b'{"apiVersion":', "more_body": True}
            await asyncio.sleep(5)  # the rest never comes in time
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message):
            sent.append(message)

        await app({"type": "http", "path": "/validate", "method": "POST", "headers": []}, receive, send)

    started = time.monotonic()
    asyncio.run(go())
    assert time.monotonic() - started < 2
    assert sent[0]["status"] == 408


def test_requests_beyond_max_in_flight_get_503_with_retry_after():
    app = app_with(Rule(_spec("EML997", "test-slow"), slow), max_in_flight=1, time_budget=5)

    async def go():
        await app.startup()
        try:
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
                first = asyncio.create_task(c.post("/validate", json=review(POD, "a")))
                await asyncio.sleep(0.2)  # the first is linting (1 s)
                second = await c.post("/validate", json=review(POD, "b"))
                health = await c.get("/healthz")
                return await first, second, health
        finally:
            await app.shutdown()

    first, second, health = asyncio.run(go())
    assert first.status_code == 200 and first.json()["response"]["uid"] == "a"
    assert second.status_code == 503 and second.headers["retry-after"] == "1"
    assert health.status_code == 200  # probes are not admission requests
    assert (
        'eksmllint_webhook_requests_total{endpoint="validate",result="overloaded"} 1.0' in app.metrics.render().decode()
    )


@pytest.mark.parametrize("mode", ["open", "closed"])
@pytest.mark.parametrize("parallelism", ["²", "٣", 10**400, "1e400", [2], {"n": 2}, 1.5, -1, True])
def test_hostile_values_never_get_a_denied_job_admitted(mode, parallelism):
    job = json.loads(json.dumps(BAD_JOB))
    job["spec"]["parallelism"] = parallelism
    app = WebhookApp(AdmissionLinter(Config(), default_registry()), ServerSettings(failure_mode=mode))
    status, data = call(app, "/validate", review(job))
    assert status == 200
    assert data["response"]["allowed"] is False, data


def test_unreadable_pod_templates_are_reported_as_eml000_and_the_deny_stands(monkeypatch):
    import eksmllint.core.context as run_module

    def unreadable(resource):  # "²" no longer breaks the workload view (it is unknown): force it
        raise ValueError("invalid literal for int() with base 10: '²'")

    monkeypatch.setattr(run_module, "workload_of", unreadable)
    job = json.loads(json.dumps(BAD_JOB))
    job["spec"]["parallelism"] = "²"
    app = WebhookApp(AdmissionLinter(Config(), default_registry()), ServerSettings(failure_mode="open"))
    _, data = call(app, "/validate", review(job))
    resp = data["response"]
    assert resp["allowed"] is False and "EML002" in resp["status"]["message"]
    assert any(
        w.startswith("eksmllint internal error") and "EML000" in w and "ValueError" in w for w in resp["warnings"]
    ), resp


def test_a_rule_crash_does_not_turn_a_deny_into_an_allow():
    bad_pod = json.loads(json.dumps(POD))
    bad_pod["spec"]["containers"][0]["resources"] = {"requests": {"nvidia.com/gpu": 1}}
    app = app_with(Rule(_spec("EML998", "test-crash"), crash), failure_mode="open")
    _, data = call(app, "/validate", review(bad_pod))
    resp = data["response"]
    assert resp["allowed"] is False and "EML601" in resp["status"]["message"]
    assert any("EML998" in w and "ZeroDivisionError" in w for w in resp["warnings"])


ORDER_SCRIPT = """
import json, sys
from eksmllint.config import Config
from eksmllint.core.registry import default_registry
from eksmllint.server import admission as adm
from eksmllint.server.app import WebhookApp
from eksmllint.server.linting import AdmissionLinter
app = WebhookApp(AdmissionLinter(Config(), default_registry()))
decision = app._validate(adm.parse_review(sys.stdin.buffer.read()), None)
print(json.dumps(decision.response, sort_keys=True))
"""


def test_denials_list_findings_in_the_same_order_in_every_process():
    """Findings an admitted object's rules report at different paths with the same message used to
    be ordered by the set's string hashes, which differ per process (PYTHONHASHSEED)."""
    import os
    import subprocess
    import sys

    same = {"name": "t", "image": "python", "resources": {"requests": {"nvidia.com/gpu": 1}}}
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ml"},
        "spec": {"containers": [dict(same) for _ in range(4)], "initContainers": [dict(same) for _ in range(3)]},
    }
    body = json.dumps(review(pod)).encode()
    root = str(ROOT)
    answers = set()
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": root}
        out = subprocess.run(
            [sys.executable, "-c", ORDER_SCRIPT], input=body, env=env, capture_output=True, timeout=120, check=True
        )
        answers.add(out.stdout)
    (answer,) = answers
    assert json.loads(answer)["allowed"] is False


def test_log_lines_escape_newlines_from_the_object(caplog):
    forged = "p\n2026-01-01 00:00:00,000 INFO eksmllint.server: allowed Pod ml/evil"
    bad = {
        **POD,
        "metadata": {"name": forged, "namespace": "ml"},
        "spec": {
            "containers": [
                {"name": "c", "image": "python:3.11.9-slim", "resources": {"requests": {"nvidia.com/gpu": 1}}}
            ]
        },
    }
    exempt = {
        **POD,
        "metadata": {
            "name": forged,
            "namespace": "ml",
            "annotations": {"eksmllint.io/exempt": "yes\nINFO forged line"},
        },
    }
    app = WebhookApp(AdmissionLinter(Config(), default_registry()))
    caplog.set_level("INFO", logger="eksmllint.server")
    _, denied = call(app, "/validate", review(bad))
    _, skipped = call(app, "/validate", review(exempt))
    assert denied["response"]["allowed"] is False and skipped["response"]["allowed"] is True
    messages = [r.getMessage() for r in caplog.records if r.name == "eksmllint.server"]
    assert any(m.startswith("denied Pod ml/p\\n2026") for m in messages), messages
    assert any("exempt" in m and "yes\\nINFO" in m for m in messages), messages
    assert not any("\n" in m for m in messages)
    assert "\n" not in skipped["response"]["warnings"][0]  # the exemption reason, as the user sees it
