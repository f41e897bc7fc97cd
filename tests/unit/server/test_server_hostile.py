"""Hostile admission requests (issue 22), in process: metadata of the wrong type, forged owner
references, whole-catalogue ignore annotations, objects whose judgement does not finish.

The HTTP path is the app object the real server runs; nothing here opens a socket.
"""

from __future__ import annotations

import copy
import threading

import pytest
from webhook_calls import BAD_JOB, call

from eksmllint.config import Config
from eksmllint.core.registry import default_registry
from eksmllint.server.app import WebhookApp
from eksmllint.server.linting import AdmissionLinter
from eksmllint.server.settings import ServerSettings


def review(obj: dict, uid: str = "u-1", **request) -> dict:
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {"uid": uid, "operation": "CREATE", "namespace": "ml", "object": obj, **request},
    }


def app(**settings) -> WebhookApp:
    return WebhookApp(AdmissionLinter(Config(), default_registry()), ServerSettings(**settings))


@pytest.mark.parametrize("value", [5, {"a": 1}, ["ml"], True, None, 1.5])
@pytest.mark.parametrize("field", ["namespace", "name", "generateName", "labels", "annotations", "ownerReferences"])
def test_metadata_of_the_wrong_type_is_judged_not_a_500(field, value):
    job = copy.deepcopy(BAD_JOB)
    job["metadata"][field] = value
    status, data = call(app(), "/validate", review(job))
    assert status == 200, data
    assert data["response"]["allowed"] is False


def _ignored(job: dict, selectors: str) -> dict:
    job = copy.deepcopy(job)
    job["metadata"]["annotations"] = {"eksmllint.io/ignore": selectors}
    return job


@pytest.mark.parametrize("selectors", ["ALL", "all", "EML6", "EML0,EML1,EML2,EML3,EML4,EML5,EML6,EML7,EML8,EML9"])
def test_whole_catalogue_ignores_do_not_silence_rules_without_the_exemption(selectors):
    job = _ignored(BAD_JOB, selectors)
    strict = AdmissionLinter(Config(), default_registry(), single_rule_annotations=True)
    _, data = call(WebhookApp(strict), "/validate", review(job))
    assert data["response"]["allowed"] is False, data
    assert "EML601" in data["response"]["status"]["message"]
    assert any("may only name single rules" in w for w in data["response"].get("warnings", ()))
    # The default (exemption annotation honoured) still reads them as before.
    _, lenient = call(app(), "/validate", review(job))
    assert lenient["response"]["allowed"] is True


def test_single_rules_are_still_silenced_without_the_exemption():
    job = _ignored(BAD_JOB, "EML601 # reviewed")
    strict = AdmissionLinter(Config(), default_registry(), single_rule_annotations=True)
    _, data = call(WebhookApp(strict), "/validate", review(job))
    assert data["response"]["allowed"] is True, data


GPU_POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "namespace": "ml"},
    "spec": {
        "containers": [{"name": "c", "image": "python:3.11.9-slim", "resources": {"requests": {"nvidia.com/gpu": 1}}}]
    },
}


#: The owner's apiVersion where it is not Kubeflow's (what a controller writes in its ownerReference).
_OWNER_API = {"HyperPodPyTorchJob": "sagemaker.amazonaws.com/v1"}


def _owned_by(kind: str) -> dict:
    pod = copy.deepcopy(GPU_POD)
    api = _OWNER_API.get(kind, "kubeflow.org/v1")
    pod["metadata"]["ownerReferences"] = [
        {"apiVersion": api, "kind": kind, "name": "j", "uid": "1", "controller": True}
    ]
    return pod


@pytest.mark.parametrize("kind", ["Job", "PyTorchJob", "JobSet", "RayCluster", "HyperPodPyTorchJob"])
@pytest.mark.parametrize("user", [None, "alice", "system:serviceaccount:ml:training-operator"])
def test_a_forged_owner_reference_is_judged(kind, user):
    body = review(_owned_by(kind), userInfo={"username": user} if user else {})
    _, data = call(app(exempt_annotation=False), "/validate", body)
    assert data["response"]["allowed"] is False, data
    assert "EML601" in data["response"]["status"]["message"]


@pytest.mark.parametrize(
    "kind,user",
    [
        ("Job", "system:serviceaccount:kube-system:job-controller"),
        ("PyTorchJob", "system:serviceaccount:kubeflow:training-operator"),
        ("JobSet", "system:serviceaccount:jobset-system:jobset-controller-manager"),
        ("HyperPodPyTorchJob", "system:serviceaccount:aws-hyperpod:hp-training-operator-controller-manager"),
    ],
)
def test_objects_their_controller_sends_pass_as_judged_with_their_owner(kind, user):
    _, data = call(app(), "/validate", review(_owned_by(kind), userInfo={"username": user}))
    assert data["response"] == {"uid": "u-1", "allowed": True}


def test_owner_controllers_are_configurable():
    user = "system:serviceaccount:training:my-operator"
    body = review(_owned_by("PyTorchJob"), userInfo={"username": user})
    _, default = call(app(), "/validate", body)
    assert default["response"]["allowed"] is False  # not a default install's controller
    _, data = call(app(owner_controllers=frozenset({user})), "/validate", body)
    assert data["response"] == {"uid": "u-1", "allowed": True}


def test_the_owner_table_is_valid_and_sourced():
    from eksmllint.server.owners import owners

    table = owners()
    assert {"Job", "PyTorchJob", "TrainJob", "JobSet", "RayCluster", "LeaderWorkerSet", "HyperPodPyTorchJob"} <= set(
        table
    )
    assert all(o.source.startswith("https://") for o in table.values())


def _slow_rules(calls: list[str], *codes: str):
    import time

    from webhook_calls import _spec, registry_with

    from eksmllint.core.rule import Rule

    def make(code: str):
        def check(ctx, resource):
            calls.append(code)
            time.sleep(0.5)
            return []

        return Rule(_spec(code, f"test-slow-{code.lower()}"), check)

    return registry_with(*(make(c) for c in codes))


def test_an_abandoned_lint_stops_before_its_next_rule():
    import time

    calls: list[str] = []
    webhook = WebhookApp(
        AdmissionLinter(Config(), _slow_rules(calls, "EML996", "EML997")), ServerSettings(time_budget=0.2)
    )
    webhook.warmed.set()  # the warm-up would run the slow rules too
    webhook._warm_up = lambda: None  # type: ignore[method-assign]
    _, data = call(webhook, "/validate", review(copy.deepcopy(BAD_JOB)))
    assert data["response"]["allowed"] is False  # not judged in time: denied (--on-timeout deny)
    assert "not judged within the 0.2s budget" in data["response"]["status"]["message"]
    time.sleep(1.5)  # long enough for the second rule to have run, had the lint gone on
    assert calls.count("EML997") + calls.count("EML996") == 1


def test_a_full_lane_refuses_unjudged_objects_instead_of_admitting_them():
    import asyncio

    import httpx

    calls: list[str] = []
    webhook = WebhookApp(
        AdmissionLinter(Config(), _slow_rules(calls, "EML996")),
        ServerSettings(time_budget=5, large_body=1, max_large_in_flight=1, cache_size=0),
    )
    webhook._warm_up = lambda: webhook.warmed.set()  # type: ignore[method-assign]

    async def go():
        await webhook.startup()
        try:
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=webhook), base_url="http://t") as c:
                first = asyncio.create_task(c.post("/validate", json=review(copy.deepcopy(BAD_JOB), "a")))
                await asyncio.sleep(0.2)  # the first holds the only place of the large lane
                second = await c.post("/validate", json=review(copy.deepcopy(BAD_JOB), "b"))
                return await first, second
        finally:
            await webhook.shutdown()

    first, second = asyncio.run(go())
    assert first.json()["response"]["allowed"] is False and "EML601" in first.text
    resp = second.json()["response"]
    assert resp["allowed"] is False and "already being judged" in resp["status"]["message"]
    assert 'result="overloaded"} 1.0' in webhook.metrics.render().decode()


def test_the_admitted_object_is_judged_as_decoded_not_copied():
    obj = copy.deepcopy(BAD_JOB)
    linted = AdmissionLinter(Config(), default_registry()).lint(obj, None, "ml")
    assert linted.resource.data is obj  # no copy in proportion to the object's size
    assert any(f.code == "EML601" for f in linted.active)


def _pair(ca, directory):
    cert = ca.issue_cert("127.0.0.1")
    cert.cert_chain_pems[0].write_to_path(str(directory / "c.pem"))
    cert.private_key_pem.write_to_path(str(directory / "k.pem"))
    return str(directory / "c.pem"), str(directory / "k.pem")


@pytest.mark.parametrize("swap", ["fifo", "huge", "directory"])
def test_the_certificate_poller_refuses_what_is_not_a_certificate_file_and_keeps_serving(tmp_path, swap):
    import os

    import trustme

    from eksmllint.server.tls import MAX_TLS_FILE, ReloadingTLS

    crt, key = _pair(trustme.CA(), tmp_path)
    tls = ReloadingTLS(crt, key)
    first = tls.current
    os.unlink(crt)
    if swap == "fifo":
        os.mkfifo(crt)  # reading it would wait for a writer forever
    elif swap == "huge":
        with open(crt, "wb") as fh:
            fh.truncate(MAX_TLS_FILE + 1)
    else:
        os.mkdir(crt)
    done = []
    poll = threading.Thread(target=lambda: done.append(tls.reload_if_changed()), daemon=True)
    poll.start()
    poll.join(timeout=5)  # bounded: a blocking read of the FIFO would never return
    assert done, "the poll blocked"
    outcome = done[0]
    assert outcome.error and not outcome.changed
    assert tls.current is first
    if swap == "fifo":
        with pytest.raises(OSError, match="not a regular file"):
            ReloadingTLS(crt, key)  # at start-up too (after the bounded check above): an error, not a hang


def test_the_certificate_poller_runs_off_the_event_loop(tmp_path):
    import asyncio
    import time

    import trustme

    from eksmllint.server.runner import tls_reloader
    from eksmllint.server.tls import ReloadingTLS, ReloadResult

    crt, key = _pair(trustme.CA(), tmp_path)
    tls = ReloadingTLS(crt, key)
    blocked = []

    def slow_reload():  # a poll that blocks, as a read of a FIFO would
        blocked.append(1)
        time.sleep(1.0)
        return ReloadResult(False)

    tls.reload_if_changed = slow_reload  # type: ignore[method-assign]
    webhook = app()

    async def go():
        task = asyncio.create_task(tls_reloader(tls, webhook, 0.05)())
        await asyncio.sleep(0.2)  # the poll has started and is blocked
        started = time.monotonic()
        await asyncio.sleep(0.05)  # the loop still runs its own timers on time
        late = time.monotonic() - started
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return late

    late = asyncio.run(go())
    assert blocked and late < 0.5
