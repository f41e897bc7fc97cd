"""Hostile admission requests (issue 22), in process: metadata of the wrong type, forged owner
references, whole-catalogue ignore annotations, objects whose judgement does not finish.

The HTTP path is the app object the real server runs; nothing here opens a socket.
"""

from __future__ import annotations

import copy

import pytest
from webhook_calls import call

from eksmllint.config import Config
from eksmllint.core.registry import default_registry
from eksmllint.server.app import WebhookApp
from eksmllint.server.linting import AdmissionLinter
from eksmllint.server.settings import ServerSettings

BAD_JOB = {
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
                        "image": "python:3.11.9-slim",
                        "resources": {"requests": {"nvidia.com/gpu": 1}, "limits": {"cpu": "2", "memory": "4Gi"}},
                    }
                ],
            }
        }
    },
}


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
