"""Roll-out modes (issue 15): audit (warn-only) and the operator switching off the
eksmllint.io/exempt annotation, in process and through `eksmllint serve`'s flags."""

from __future__ import annotations

import json

import pytest
import trustme
from test_server import Server, gpu_pod, metric, post, review
from webhook_calls import POD, _spec, app_with, call, crash

from eksmllint.config import Config
from eksmllint.core.registry import default_registry
from eksmllint.core.rule import Rule
from eksmllint.server.app import WebhookApp
from eksmllint.server.linting import AdmissionLinter
from eksmllint.server.settings import ServerSettings

BAD_POD = json.loads(json.dumps(POD))
BAD_POD["spec"]["containers"][0]["resources"] = {"requests": {"nvidia.com/gpu": 1}}  # EML601: an error


def app(**settings) -> WebhookApp:
    return WebhookApp(AdmissionLinter(Config(), default_registry(), ("EML301",)), ServerSettings(**settings))


def test_audit_mode_never_denies_and_counts_would_be_denials():
    audited = app(audit=True)
    _, data = call(
        audited,
        "/validate",
        {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {"uid": "a", "operation": "CREATE", "object": BAD_POD},
        },
    )
    resp = data["response"]
    assert resp["allowed"] is True and "status" not in resp
    assert any(w.startswith("eksmllint audit mode, would deny: EML601") for w in resp["warnings"]), resp
    text = audited.metrics.render().decode()
    assert 'eksmllint_webhook_requests_total{endpoint="validate",result="would_deny"} 1.0' in text
    assert 'eksmllint_webhook_findings_total{code="EML601"' in text
    _, enforced = call(
        app(),
        "/validate",
        {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {"uid": "b", "operation": "CREATE", "object": BAD_POD},
        },
    )
    assert enforced["response"]["allowed"] is False  # the same object, enforcing


def test_audit_mode_admits_internal_errors_even_with_failure_mode_closed():
    closed = app_with(Rule(_spec("EML998", "test-crash"), crash), failure_mode="closed", audit=True)
    _, data = call(
        closed,
        "/validate",
        {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {"uid": "c", "operation": "CREATE", "object": POD},
        },
    )
    assert data["response"]["allowed"] is True
    assert any("EML998" in w for w in data["response"]["warnings"])


def test_audit_mode_does_not_patch():
    pod = gpu_pod()
    body = review(pod)
    _, patched = call(app(), "/mutate", body)
    assert patched["response"]["patchType"] == "JSONPatch"
    _, audited = call(app(audit=True), "/mutate", body)
    assert "patch" not in audited["response"] and audited["response"]["allowed"] is True
    assert any(w.startswith("eksmllint audit mode, would patch: EML301") for w in audited["response"]["warnings"])


def test_the_exempt_annotation_can_be_switched_off():
    exempt = json.loads(json.dumps(BAD_POD))
    exempt["metadata"]["annotations"] = {"eksmllint.io/exempt": "reviewed"}
    body = {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {"uid": "d", "operation": "CREATE", "object": exempt},
    }
    assert call(app(), "/validate", body)[1]["response"]["allowed"] is True
    _, judged = call(app(exempt_annotation=False), "/validate", body)
    assert judged["response"]["allowed"] is False and "EML601" in judged["response"]["status"]["message"]


@pytest.mark.slow
def test_serve_flags_audit_and_no_exempt_annotation(tmp_path):
    srv = Server(tmp_path, trustme.CA(), "--audit", "--no-exempt-annotation").start()
    try:
        bad = gpu_pod(requests={"nvidia.com/gpu": 1}, limits={"cpu": "1"})
        bad["metadata"]["annotations"] = {"eksmllint.io/exempt": "reviewed"}
        with srv.client() as c:
            resp = post(c, "/validate", review(bad))
            assert resp["allowed"] is True
            assert any("would deny: EML601" in w for w in resp["warnings"])  # judged despite the annotation
            assert metric(c.get("/metrics").text, "eksmllint_webhook_requests_total", result="would_deny") == 1
    finally:
        assert srv.stop() == 0
