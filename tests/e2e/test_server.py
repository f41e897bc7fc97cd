"""`eksmllint serve` end to end: the real server (a subprocess) on 127.0.0.1 over TLS with a test CA.

Every server is started and stopped by the test that needs it, on loopback only, with bounded
waits; AdmissionReviews go over real TLS connections (httpx, or a raw socket where a test needs
control over the bytes).
"""

from __future__ import annotations

import base64
import copy
import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import time
import warnings
from pathlib import Path

import builders as b
import httpx
import jsonpatch
import pytest
import trustme
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eksmllint.core.engine import lint_text

pytestmark = pytest.mark.slow  # real servers as subprocesses

STARTUP_TIMEOUT = 60.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_cert(ca: trustme.CA, directory: Path) -> tuple[Path, Path]:
    cert = ca.issue_cert("127.0.0.1", "localhost")
    crt, key = directory / "tls.crt", directory / "tls.key"
    tmp_crt, tmp_key = directory / ".tls.crt.tmp", directory / ".tls.key.tmp"
    cert.cert_chain_pems[0].write_to_path(str(tmp_crt))
    cert.private_key_pem.write_to_path(str(tmp_key))
    os.replace(tmp_crt, crt)
    os.replace(tmp_key, key)
    return crt, key


def client_context(ca: trustme.CA) -> ssl.SSLContext:
    ctx = ssl.create_default_context()
    ca.configure_trust(ctx)
    return ctx


class Server:
    """``python -m eksmllint serve`` on a free loopback port, TLS from ``ca``."""

    def __init__(self, tmp: Path, ca: trustme.CA, *args: str) -> None:
        self.tmp = tmp
        self.ca = ca
        self.args = args
        self.crt, self.key = write_cert(ca, tmp)
        self.port = 0
        self.proc: subprocess.Popen | None = None
        self.log = tmp / "server.log"

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    def start(self) -> Server:
        for _attempt in range(3):  # the free port may be taken between probe and bind
            self.port = free_port()
            cmd = [
                sys.executable,
                "-m",
                "eksmllint",
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--tls-cert",
                str(self.crt),
                "--tls-key",
                str(self.key),
                *self.args,
            ]
            self._log = open(self.log, "ab")
            self.proc = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT, cwd=self.tmp)
            if self._wait_ready():
                return self
            self.stop()
        raise AssertionError("server did not start:\n" + self.log.read_text(errors="replace"))

    def _wait_ready(self) -> bool:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        ctx = client_context(self.ca)
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                if httpx.get(f"{self.url}/readyz", verify=ctx, timeout=2).status_code == 200:
                    return True
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        return False

    def client(self, ca: trustme.CA | None = None, **kw) -> httpx.Client:
        return httpx.Client(base_url=self.url, verify=client_context(ca or self.ca), timeout=15, **kw)

    def stop(self) -> int | None:
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self._log.close()
        return self.proc.returncode


# -- objects and reviews -------------------------------------------------------------------------
def gpu_pod(name: str = "trainer", gpus: int = 8, **resources) -> dict:
    res = resources or {"limits": {"nvidia.com/gpu": gpus, "cpu": "90", "memory": "1000Gi"}}
    train = b.container("train", command=["torchrun", f"--nproc_per_node={gpus}", "train.py"], resources=res)
    return b.pod(name, train, restartPolicy="Never")


def review(
    obj: dict | None, operation: str = "CREATE", uid: str = "4f3c1b1e-1111-2222-3333-444455556666", **extra
) -> dict:
    kind = (obj or {}).get("kind", "Pod")
    req = {
        "uid": uid,
        "operation": operation,
        "namespace": "ml",
        "kind": {"group": "", "version": "v1", "kind": kind},
        "object": obj,
        **extra,
    }
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": req}


def post(client: httpx.Client, endpoint: str, body: dict) -> dict:
    r = client.post(endpoint, json=body)
    assert r.status_code == 200, r.text
    data = r.json()
    assert data["apiVersion"] == "admission.k8s.io/v1" and data["kind"] == "AdmissionReview"
    return data["response"]


def decode_patch(response: dict) -> list[dict]:
    assert response["patchType"] == "JSONPatch"
    return json.loads(base64.b64decode(response["patch"]))


def metric(text: str, name: str, **labels) -> float:
    total = 0.0
    for line in text.splitlines():
        if not line.startswith(name + "{") and not line.startswith(name + " "):
            continue
        if all(f'{k}="{v}"' in line for k, v in labels.items()):
            total += float(line.rsplit(" ", 1)[1])
    return total


def context_pool(name: str, itype: str) -> str:
    """An on-demand NodePool of one instance type whose nodes are never disrupted (context YAML)."""
    return b.manifest(
        b.nodepool(
            name,
            b.requirement(b.INSTANCE_TYPE, itype),
            b.requirement(b.CAPACITY_TYPE, "on-demand"),
            template={"expireAfter": "Never"},
            disruption={"consolidationPolicy": "WhenEmpty", "budgets": [{"nodes": "0"}]},
        )
    )


# -- the shared server -----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture(scope="module")
def context_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("context")
    (d / "pools.yaml").write_text(context_pool("a100", "p4d.24xlarge"))
    return d


@pytest.fixture(scope="module")
def server(tmp_path_factory, ca, context_dir):
    srv = Server(
        tmp_path_factory.mktemp("server"),
        ca,
        "--mutate",
        "EML301",
        "--context-dir",
        str(context_dir),
        "--context-interval",
        "0.1",
        "--cache-size",
        "64",
    )
    srv.start()
    yield srv
    assert srv.stop() == 0


@pytest.fixture()
def client(server):
    with server.client() as c:
        yield c


# -- the issue's acceptance cases ------------------------------------------------------------------
def test_gpu_pod_without_shm_is_allowed_with_an_eml301_warning(client):
    resp = post(client, "/validate", review(gpu_pod()))
    assert resp["uid"] == "4f3c1b1e-1111-2222-3333-444455556666"
    assert resp["allowed"] is True
    assert any(w.startswith("EML301 shm-missing") for w in resp["warnings"]), resp


def test_gpu_request_missing_from_limits_is_denied_with_eml601(client):
    pod = gpu_pod(
        requests={"nvidia.com/gpu": 8, "cpu": "90", "memory": "1000Gi"}, limits={"cpu": "90", "memory": "1000Gi"}
    )
    resp = post(client, "/validate", review(pod, uid="deny-1"))
    assert resp["uid"] == "deny-1" and resp["allowed"] is False
    status = resp["status"]
    assert status["code"] == 403
    assert "EML601 accelerator-limits at spec.containers[0].resources" in status["message"]
    assert any("EML301" in w for w in resp.get("warnings", []))  # the lower finding is still a warning


def test_mutate_adds_shm_and_the_patched_pod_lints_clean_for_eml301(client):
    pod = gpu_pod()
    resp = post(client, "/mutate", review(pod, uid="mut-1"))
    assert resp["uid"] == "mut-1" and resp["allowed"] is True
    patched = jsonpatch.JsonPatch(decode_patch(resp)).apply(copy.deepcopy(pod))
    spec = patched["spec"]
    (vol,) = [v for v in spec["volumes"] if v.get("emptyDir", {}).get("medium") == "Memory"]
    assert vol["emptyDir"]["sizeLimit"]
    assert {"name": vol["name"], "mountPath": "/dev/shm"} in spec["containers"][0]["volumeMounts"]
    # re-linted with the CLI engine: the fixed rule is gone
    assert "EML301" not in {f.code for f in lint_text(json.dumps(patched), name="patched.json").active}
    # re-invoked (reinvocationPolicy: IfNeeded): nothing more to patch
    again = post(client, "/mutate", review(patched, uid="mut-2"))
    assert again["allowed"] is True and "patch" not in again


def test_mutate_patches_a_pytorchjob_in_every_replica(client):
    def replica(n):
        limits = {"nvidia.com/gpu": 4, "cpu": "40", "memory": "320Gi"}
        return b.replica(n, b.pod_template(b.container("pytorch", limits=limits)))

    job = b.pytorchjob(
        "llm", replica(1), replica(2), namespace="ml", runPolicy={"schedulingPolicy": {"minAvailable": 3}}
    )
    patched = jsonpatch.apply_patch(job, decode_patch(post(client, "/mutate", review(job))))
    for role in ("Master", "Worker"):
        spec = patched["spec"]["pytorchReplicaSpecs"][role]["template"]["spec"]
        assert spec["containers"][0]["volumeMounts"][0]["mountPath"] == "/dev/shm"
        assert spec["volumes"][0]["emptyDir"]["medium"] == "Memory"


# -- more kinds ------------------------------------------------------------------------------------
def test_several_kinds(client):
    nodepool = b.nodepool(
        "gpu",
        b.requirement(b.INSTANCE_TYPE, "p4d.24xlarge"),
        disruption={"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "5m"},
    )
    resp = post(client, "/validate", review(nodepool))
    assert resp["allowed"] is True and any(w.startswith("EML501 ") for w in resp["warnings"])

    nodeclass = b.ec2nodeclass(
        "gpu-al2",
        {"id": "ami-0a1b2c3d4e5f67890"},
        amiFamily="AL2",
        role="KarpenterNodeRole-ml",
        subnetSelectorTerms=[{"tags": {"karpenter.sh/discovery": "ml"}}],
        securityGroupSelectorTerms=[{"tags": {"karpenter.sh/discovery": "ml"}}],
    )
    resp = post(client, "/validate", review(nodeclass))
    assert resp["allowed"] is False and "EML903 ami-family-unsupported" in resp["status"]["message"]

    def task(name, n):
        return {
            "name": name,
            "replicas": n,
            "template": {
                "spec": {
                    "containers": [
                        {
                            "name": "w",
                            "image": b.PYTORCH_IMAGE,
                            "resources": {"limits": {"nvidia.com/gpu": 1, "cpu": "4", "memory": "16Gi"}},
                        }
                    ]
                }
            },
        }

    job = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "ddp", "namespace": "ml"},
        "spec": {
            "pytorchReplicaSpecs": {
                "Master": {"replicas": 1, "template": task("m", 1)["template"]},
                "Worker": {"replicas": 3, "template": task("w", 3)["template"]},
            }
        },
    }
    resp = post(client, "/validate", review(job))
    assert resp["allowed"] is True and any(w.startswith("EML201 gang-missing") for w in resp["warnings"])

    clean = {
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
    resp = post(client, "/validate", review(clean))
    assert resp == {"uid": resp["uid"], "allowed": True}


def test_context_dir_feeds_context_rules_and_reloads(client, context_dir):
    pod = gpu_pod(name="pinned")
    pod["spec"]["nodeSelector"] = {"node.kubernetes.io/instance-type": "p5.48xlarge"}
    resp = post(client, "/validate", review(pod))
    assert resp["allowed"] is False and "EML702 no-matching-nodepool" in resp["status"]["message"]
    extra = context_dir / "h100.yaml"
    extra.write_text(context_pool("h100", "p5.48xlarge"))
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            resp = post(client, "/validate", review(pod))
            if resp["allowed"]:
                break
            time.sleep(0.1)
        assert resp["allowed"] is True, resp
    finally:
        extra.unlink()


def test_delete_and_connect_are_allowed_untouched(client):
    for op in ("DELETE", "CONNECT"):
        for endpoint in ("/validate", "/mutate"):
            resp = post(client, endpoint, review(None, operation=op, oldObject=gpu_pod(gpus=8)))
            assert resp == {"uid": resp["uid"], "allowed": True}


def test_status_subresource_and_terminating_objects_are_not_judged(client):
    bad = gpu_pod(requests={"nvidia.com/gpu": 1}, limits={"cpu": "1"})
    assert post(client, "/validate", review(bad, operation="UPDATE", subResource="status"))["allowed"] is True
    terminating = copy.deepcopy(bad)
    terminating["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert post(client, "/validate", review(terminating, operation="UPDATE"))["allowed"] is True
    assert post(client, "/validate", review(bad, operation="UPDATE"))["allowed"] is False


def test_update_ratchets_on_what_the_stored_object_already_had(client):
    bad = gpu_pod(requests={"nvidia.com/gpu": 1}, limits={"cpu": "1"})
    relabelled = copy.deepcopy(bad)
    relabelled["metadata"]["labels"] = {"team": "nlp"}  # a controller touching metadata
    resp = post(client, "/validate", review(relabelled, operation="UPDATE", oldObject=bad))
    assert resp["allowed"] is True
    assert any(w.startswith("pre-existing, not blocking this update: EML601") for w in resp["warnings"])
    clean = gpu_pod()
    resp = post(client, "/validate", review(bad, operation="UPDATE", oldObject=clean))
    assert resp["allowed"] is False and "EML601" in resp["status"]["message"]  # a new problem is refused


def test_mutate_only_patches_creates(client):
    resp = post(client, "/mutate", review(gpu_pod(), operation="UPDATE", oldObject=gpu_pod()))
    assert resp == {"uid": resp["uid"], "allowed": True}


def test_objects_made_by_a_judged_controller_pass(client):
    bad = gpu_pod(requests={"nvidia.com/gpu": 1}, limits={"cpu": "1"})
    owned = copy.deepcopy(bad)
    owned["metadata"]["ownerReferences"] = [
        {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "name": "llm", "uid": "1", "controller": True}
    ]
    operator = {"username": "system:serviceaccount:kubeflow:training-operator"}
    assert post(client, "/validate", review(owned, userInfo=operator)) == {
        "uid": "4f3c1b1e-1111-2222-3333-444455556666",
        "allowed": True,
    }
    assert post(client, "/validate", review(owned))["allowed"] is False  # a forged reference (issue 22)
    by_replicaset = copy.deepcopy(bad)  # Deployments are not judged themselves: their Pods are
    by_replicaset["metadata"]["ownerReferences"] = [
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "2", "controller": True}
    ]
    assert post(client, "/validate", review(by_replicaset))["allowed"] is False


def test_exemption_and_ignore_annotations(client):
    bad = gpu_pod(requests={"nvidia.com/gpu": 1}, limits={"cpu": "1"})
    bad["metadata"]["annotations"] = {"eksmllint.io/exempt": "vendor image, reviewed in JIRA-123"}
    resp = post(client, "/validate", review(bad))
    assert resp["allowed"] is True and "JIRA-123" in resp["warnings"][0]
    assert "patch" not in post(client, "/mutate", review(bad))
    pod = gpu_pod()
    pod["metadata"]["annotations"] = {"eksmllint.io/ignore": "shm-missing # the image mounts its own"}
    resp = post(client, "/validate", review(pod))
    assert resp["allowed"] is True and not any("EML301" in w for w in resp.get("warnings", []))
    assert "patch" not in post(client, "/mutate", review(pod))  # a suppressed finding is not fixed


def test_dry_run_answers_the_same_and_is_not_counted(client):
    before = metric(client.get("/metrics").text, "eksmllint_webhook_findings_total", code="EML601")
    bad = gpu_pod(requests={"nvidia.com/gpu": 1}, limits={"cpu": "1"})
    resp = post(client, "/validate", review(bad, dryRun=True))
    assert resp["allowed"] is False and "EML601" in resp["status"]["message"]
    mid = metric(client.get("/metrics").text, "eksmllint_webhook_findings_total", code="EML601")
    post(client, "/validate", review(bad, dryRun=False))
    after = metric(client.get("/metrics").text, "eksmllint_webhook_findings_total", code="EML601")
    assert mid == before and after > mid


# -- HTTP edges ------------------------------------------------------------------------------------
def test_probes_and_routes(client):
    assert client.get("/healthz").text.strip() == "ok"
    assert client.get("/readyz").status_code == 200
    r = client.get("/validate")
    assert r.status_code == 405 and r.headers["allow"] == "POST"
    assert client.get("/nope").status_code == 404


@pytest.mark.parametrize(
    "body,fragment",
    [
        (b"{not json", "not valid JSON"),
        (b'{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{"uid":"x"}}', "apiVersion"),
        (b'{"apiVersion":"v1","kind":"Pod","metadata":{}}', "AdmissionReview"),
        (b"", "empty"),
    ],
)
def test_malformed_requests_are_400_with_a_message(client, body, fragment):
    r = client.post("/validate", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 400 and fragment in r.text and "Traceback" not in r.text


def test_wrong_content_type_is_415(client):
    r = client.post("/validate", content=b"a: b", headers={"content-type": "application/yaml"})
    assert r.status_code == 415


def test_oversized_bodies_are_413(client):
    big = json.dumps(review(gpu_pod(), extra_padding="x" * (7 * 1024 * 1024))).encode()
    r = client.post("/validate", content=big, headers={"content-type": "application/json"})
    assert r.status_code == 413 and "limit" in r.text

    def chunks():  # no Content-Length: the cap applies while reading
        for _ in range(8):
            yield b" " * (1024 * 1024)

    r = client.post("/validate", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413


def test_metrics(client):
    post(client, "/validate", review(gpu_pod()))
    text = client.get("/metrics").text
    assert metric(text, "eksmllint_webhook_requests_total", endpoint="validate", result="allowed") >= 1
    assert metric(text, "eksmllint_webhook_request_duration_seconds_count", endpoint="validate") >= 1
    assert 'eksmllint_webhook_request_duration_seconds_bucket{endpoint="validate",lane="small",le="0.005"}' in text
    assert metric(text, "eksmllint_webhook_findings_total", code="EML301", slug="shm-missing") >= 1
    assert metric(text, "eksmllint_webhook_context_resources", kind="NodePool") >= 1


def test_plain_http_is_refused_on_the_tls_port(server):
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as s:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        s.settimeout(5)
        try:
            data = s.recv(1024)
        except (TimeoutError, ConnectionResetError):
            data = b""
    assert b"HTTP/1.1 200" not in data


def test_tls_below_1_2_is_refused(server, ca):
    ctx12 = client_context(ca)
    ctx12.maximum_version = ssl.TLSVersion.TLSv1_2
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as raw:
        with ctx12.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
            assert tls.version() == "TLSv1.2" and tls.selected_alpn_protocol() in (None, "http/1.1")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        ctx = client_context(ca)  # this client can speak TLS 1.0/1.1 (OpenSSL at security level 0)
        ctx.minimum_version = ssl.TLSVersion.TLSv1
        ctx.maximum_version = ssl.TLSVersion.TLSv1_1
        ctx.set_ciphers("DEFAULT:@SECLEVEL=0")
    with pytest.raises((ssl.SSLError, OSError)):
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as raw:
            with ctx.wrap_socket(raw, server_hostname="127.0.0.1"):
                pass


# -- hypothesis: never a 5xx, never a hang -----------------------------------------------------------
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=25,
)
K8S_KEYS = st.sampled_from(
    [
        "spec",
        "template",
        "containers",
        "resources",
        "limits",
        "requests",
        "nvidia.com/gpu",
        "replicas",
        "volumes",
        "volumeMounts",
        "command",
        "args",
        "env",
        "nodeSelector",
        "pytorchReplicaSpecs",
        "Worker",
        "Master",
        "tasks",
        "metadata",
        "annotations",
        "image",
        "name",
        "memory",
        "cpu",
        "emptyDir",
        "medium",
        "sizeLimit",
    ]
)
K8S_VALUE = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 10**6)
    | st.sampled_from(["8", "1Gi", "-1", "Memory", "torchrun", "p4d.24xlarge", "", "1e3", "0x10", "latest", "a:b"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(K8S_KEYS, inner, max_size=4),
    max_leaves=30,
)
OBJECT = st.fixed_dictionaries(
    {
        "apiVersion": st.sampled_from(
            [
                "v1",
                "batch/v1",
                "kubeflow.org/v1",
                "batch.volcano.sh/v1alpha1",
                "karpenter.sh/v1",
                "ray.io/v1",
                "jobset.x-k8s.io/v1alpha2",
                3,
            ]
        ),
        "kind": st.sampled_from(
            ["Pod", "Job", "PyTorchJob", "MPIJob", "NodePool", "RayCluster", "JobSet", "Job", None]
        ),
        "metadata": st.one_of(st.fixed_dictionaries({"name": st.text(max_size=8)}), K8S_VALUE),
        "spec": K8S_VALUE,
    }
)
REQUEST = st.fixed_dictionaries(
    {
        "uid": st.one_of(st.text(min_size=1, max_size=10), st.integers(), st.none()),
        "operation": st.sampled_from(["CREATE", "UPDATE", "DELETE", "CONNECT", "PATCH", ""]),
        "object": st.one_of(OBJECT, JSON),
        "dryRun": st.one_of(st.booleans(), st.none(), st.integers()),
    }
)
BODIES = st.one_of(
    st.binary(max_size=300),
    JSON.map(lambda v: json.dumps(v).encode()),
    REQUEST.map(
        lambda r: json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": r}).encode()
    ),
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(body=BODIES, endpoint=st.sampled_from(["/validate", "/mutate"]))
def test_generated_bodies_never_5xx_or_hang(client, body, endpoint):
    started = time.monotonic()
    r = client.post(endpoint, content=body, headers={"content-type": "application/json"})
    assert r.status_code in (200, 400), (r.status_code, r.text)
    assert time.monotonic() - started < 10
    if r.status_code == 200:
        resp = r.json()["response"]
        assert isinstance(resp["allowed"], bool) and resp["uid"]


# -- lifecycle: certificate rotation, SIGTERM --------------------------------------------------------
def test_certificate_rotation_is_picked_up_without_restart(tmp_path):
    ca1, ca2 = trustme.CA(), trustme.CA()
    srv = Server(tmp_path, ca1, "--tls-reload-interval", "0.1").start()
    try:
        with srv.client(ca1) as c:
            assert c.get("/healthz").status_code == 200
        with pytest.raises(httpx.ConnectError):
            with srv.client(ca2) as c:
                c.get("/healthz")
        write_cert(ca2, tmp_path)  # what cert-manager + the kubelet do to the mounted Secret
        deadline = time.monotonic() + 15
        ok = False
        while time.monotonic() < deadline and not ok:
            try:
                with srv.client(ca2) as c:
                    ok = c.get("/healthz").status_code == 200
            except httpx.ConnectError:
                time.sleep(0.1)
        assert ok, "the new certificate was not served"
        assert srv.proc.poll() is None  # same process
        with pytest.raises(httpx.ConnectError):  # the old one is gone for new connections
            with srv.client(ca1) as c:
                c.get("/healthz")
        with srv.client(ca2) as c:
            assert metric(c.get("/metrics").text, "eksmllint_webhook_tls_reloads_total", result="ok") >= 1
    finally:
        assert srv.stop() == 0


def test_a_broken_new_key_keeps_the_old_certificate(tmp_path):
    ca = trustme.CA()
    srv = Server(tmp_path, ca, "--tls-reload-interval", "0.1").start()
    try:
        (tmp_path / "tls.key").write_text("-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----\n")
        time.sleep(0.5)
        with srv.client() as c:
            assert c.get("/healthz").status_code == 200
            assert metric(c.get("/metrics").text, "eksmllint_webhook_tls_reloads_total", result="failed") >= 1
    finally:
        srv.stop()


def _raw_request(body: bytes) -> tuple[bytes, bytes]:
    head = (
        f"POST /validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    return head, body


def _read_http(sock: ssl.SSLSocket) -> tuple[int, bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    status = int(head.split()[1])
    length = int(
        next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length"))
    )
    while len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        rest += chunk
    return status, rest


def test_sigterm_drains_in_flight_requests_then_exits(tmp_path):
    ca = trustme.CA()
    delay = 2.0
    srv = Server(tmp_path, ca, "--shutdown-delay", str(delay)).start()
    ctx = client_context(ca)
    head, body = _raw_request(json.dumps(review(gpu_pod(), uid="in-flight")).encode())
    raw = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
    sock = ctx.wrap_socket(raw, server_hostname="127.0.0.1")
    try:
        sock.sendall(head + body[:100])  # a request on its way: headers and part of the body
        time.sleep(0.3)
        srv.proc.send_signal(signal.SIGTERM)
        signalled = time.monotonic()
        time.sleep(0.2)
        with srv.client() as c:  # during the shutdown delay: still serving, but not ready
            assert c.get("/readyz").status_code == 503
            assert c.get("/healthz").status_code == 200
        sock.sendall(body[100:])  # ...and the request that arrives meanwhile is answered
        status, payload = _read_http(sock)
        assert status == 200
        assert json.loads(payload)["response"]["uid"] == "in-flight"
        assert time.monotonic() - signalled < delay, "too slow to observe the delay window"
        time.sleep(max(0.0, signalled + delay + 1.0 - time.monotonic()))  # the delay is over: no new connections
        with pytest.raises(httpx.ConnectError):
            with srv.client() as c:
                c.get("/healthz")
    finally:
        sock.close()
    assert srv.proc.wait(timeout=30) == 0
    assert "draining" in srv.log.read_text()
    srv.stop()


def test_usage_errors_need_no_server(tmp_path):
    from click.testing import CliRunner

    from eksmllint.cli import cli

    runner = CliRunner()
    r = runner.invoke(cli, ["serve"])
    assert r.exit_code == 2 and "--tls-cert" in r.output
    r = runner.invoke(cli, ["serve", "--insecure-http", "--host", "0.0.0.0"])
    assert r.exit_code == 2 and "loopback" in r.output
    r = runner.invoke(cli, ["serve", "--insecure-http", "--mutate", "EML999"])
    assert r.exit_code == 2 and "EML999" in r.output
    (tmp_path / "k").write_text("junk")
    r = runner.invoke(cli, ["serve", "--tls-cert", str(tmp_path / "k"), "--tls-key", str(tmp_path / "k")])
    assert r.exit_code == 2 and "cannot load" in r.output


def test_insecure_http_mode_on_loopback(tmp_path):
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "eksmllint", "serve", "--insecure-http", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=tmp_path,
    )
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        resp = None
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                resp = httpx.post(f"http://127.0.0.1:{port}/validate", json=review(gpu_pod()), timeout=5)
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        assert resp is not None and resp.status_code == 200 and resp.json()["response"]["allowed"] is True
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
