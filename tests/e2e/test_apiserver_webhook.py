"""The webhook through a real kube-apiserver (issue 24): the configurations rendered by the Helm
chart (and by ``webhook-manifests``) with a URL clientConfig to ``eksmllint serve`` on loopback,
objects created with the Kubernetes Python client, and the server watching the cluster with
exactly the chart's RBAC (a service-account token from the TokenRequest API).

One control plane per session (``control_plane`` in conftest.py), one webhook server per module.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import ssl
import threading
import time

import builders as b
import httpx
import pytest
import trustme
import yaml
from controlplane import ABSENT_CRD, RELEASE_NS, Webhook, of_kind, point_at, render_chart

from eksmllint.core.engine import lint_text
from eksmllint.server import manifests

pytestmark = [pytest.mark.apiserver, pytest.mark.slow]

helm = pytest.importorskip("helm_python", reason="helm-python-sdk is not installed: the chart cannot be rendered")
kubernetes = pytest.importorskip("kubernetes", reason="the kubernetes client (test extras) is not installed")
from kubernetes import client  # noqa: E402
from kubernetes.client.exceptions import ApiException  # noqa: E402

NS = "ml"
OPT_OUT_NS = "ml-opt-out"
DOWN_NS = "ml-webhook-down"
SLOW_NS = "ml-webhook-slow"
#: How long a NodePool change may take to reach decisions: the watch, then --context-interval.
CONTEXT_INTERVAL_S = 0.5
FOLLOW_TIMEOUT_S = 15.0
#: The README's bound for a decision to follow a NodePool change at CONTEXT_INTERVAL_S.
FOLLOW_BOUND_S = 3.0
GPU_LIMITS = {"nvidia.com/gpu": "8", "cpu": "90", "memory": "1000Gi"}  # strings: the client validates Pods


CHART_VALUES = {"server": {"mutate": ["EML301"]}}


# -- objects -----------------------------------------------------------------------------------------
def worker(command: list[str], **fields) -> dict:
    return b.replica(2, b.pod_template(b.container("pytorch", command=command, limits=dict(GPU_LIMITS), **fields)))


def bad_job(name: str = "nproc-4", namespace: str = NS) -> dict:
    """torchrun starts 4 processes on 8 GPUs: EML604 (error)."""
    return b.pytorchjob(name, None, worker(["torchrun", "--nproc_per_node=4", "train.py"]), namespace=namespace)


def warn_job(name: str = "no-gang", namespace: str = NS) -> dict:
    """Two pods in one collective without gang scheduling: EML201 (warning, no fix); no /dev/shm:
    EML301 (warning, the fix the chart's ``server.mutate`` applies)."""
    return b.pytorchjob(name, None, worker(["torchrun", "--nproc_per_node=8", "train.py"]), namespace=namespace)


def small_pod(name: str, namespace: str) -> dict:
    return b.pod(
        name, b.container("c", "python:3.11.9-slim", limits={"cpu": "1", "memory": "1Gi"}), namespace=namespace
    )


def pinned_pod(name: str, instance_type: str) -> dict:
    pod = b.pod(name, b.container("train", command=["python", "train.py"], limits=dict(GPU_LIMITS)), namespace=NS)
    pod["spec"]["nodeSelector"] = {"node.kubernetes.io/instance-type": instance_type}
    volume = {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "64Gi"}}
    pod["spec"]["volumes"] = [volume]
    pod["spec"]["containers"][0]["volumeMounts"] = [{"name": "dshm", "mountPath": "/dev/shm"}]
    return pod


def nodepool(name: str, instance_type: str) -> dict:
    return b.nodepool(
        name,
        b.requirement(b.INSTANCE_TYPE, instance_type),
        b.requirement(b.CAPACITY_TYPE, "on-demand"),
        template={"expireAfter": "Never"},
        disruption={"consolidationPolicy": "WhenEmpty", "consolidateAfter": "Never", "budgets": [{"nodes": "0"}]},
    )


# -- servers on loopback -----------------------------------------------------------------------------
class Listener:
    """A TLS listener on loopback that never answers a request: ``silent`` holds each connection
    open after reading the request (a judgement longer than any ``timeoutSeconds``), ``close``
    drops it (a webhook going down). ``calls`` counts the connections the API server made."""

    def __init__(self, ca: trustme.CA, mode: str) -> None:
        self.mode = mode
        self.ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ca.issue_cert("127.0.0.1").configure_cert(self.ctx)
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.done = threading.Event()
        self.calls = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    def _serve(self) -> None:
        self.sock.settimeout(0.2)
        held = []
        while not self.done.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.calls += 1
            if self.mode == "close":
                conn.close()
                continue
            try:
                tls = self.ctx.wrap_socket(conn, server_side=True)
                tls.settimeout(5)
                tls.recv(65536)
                held.append(tls)
            except OSError:
                conn.close()
        for c in held:
            c.close()

    def close(self) -> None:
        self.done.set()
        self.thread.join(timeout=5)
        self.sock.close()


# -- the cluster ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def cluster(control_plane, tmp_path_factory):
    """CRDs, namespaces, the chart's RBAC, the webhook server (as the chart runs it, with a
    service-account token) and the chart's webhook configurations pointing at it."""
    api = control_plane.api_client()
    core = client.CoreV1Api(api)
    for ns, labels in (
        (RELEASE_NS, {}),
        (NS, {}),
        (OPT_OUT_NS, {manifests.NAMESPACE_OPT_OUT_LABEL: "disabled"}),
        (DOWN_NS, {}),
        (SLOW_NS, {}),
    ):
        core.create_namespace({"metadata": {"name": ns, "labels": labels}})

    docs = render_chart(CHART_VALUES)
    from kubernetes import utils

    for kind in ("ServiceAccount", "ClusterRole", "ClusterRoleBinding"):
        for doc in of_kind(docs, kind):
            utils.create_from_dict(api, doc, namespace=RELEASE_NS)
    (sa,) = of_kind(docs, "ServiceAccount")
    token = core.create_namespaced_service_account_token(
        sa["metadata"]["name"],
        RELEASE_NS,
        {"spec": {"audiences": ["https://kubernetes.default.svc"], "expirationSeconds": 3600}},
    ).status.token
    workdir = tmp_path_factory.mktemp("webhook")
    sa_kubeconfig = control_plane.kubeconfig(workdir / "sa.kubeconfig", token=token, user="eksmllint")
    (deployment,) = of_kind(docs, "Deployment")
    chart_args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    webhook_ca = trustme.CA()
    server = Webhook(workdir, webhook_ca, chart_args, sa_kubeconfig, CONTEXT_INTERVAL_S).start()

    admission = client.AdmissionregistrationV1Api(api)
    ca_pem = webhook_ca.cert_pem.bytes()
    (validating,) = of_kind(docs, "ValidatingWebhookConfiguration")
    (mutating,) = of_kind(docs, "MutatingWebhookConfiguration")
    admission.create_validating_webhook_configuration(point_at(validating, server.url, ca_pem))
    admission.create_mutating_webhook_configuration(point_at(mutating, server.url, ca_pem))
    state = {
        "plane": control_plane,
        "api": api,
        "server": server,
        "validating": validating,
        "mutating": mutating,
        "ca": webhook_ca,
        "token": token,
        "sa_kubeconfig": sa_kubeconfig,
    }
    try:
        wait_routed(api)
        yield state
    finally:  # no webhook left behind for the session's other modules
        admission.delete_validating_webhook_configuration(validating["metadata"]["name"])
        admission.delete_mutating_webhook_configuration(mutating["metadata"]["name"])
        server.stop()


def wait_routed(api, timeout: float = 15.0) -> None:
    """Webhook configurations reach the API server's admission chain asynchronously (an
    informer): wait until a bad object is judged."""
    custom = client.CustomObjectsApi(api)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            custom.create_namespaced_custom_object(
                "kubeflow.org", "v1", NS, "pytorchjobs", bad_job("probe"), dry_run="All"
            )
        except ApiException as err:
            if "EML604" in (err.body or ""):
                return
        time.sleep(0.2)
    raise AssertionError("the webhook configurations were not routed within the timeout")


def create_job(api, job: dict, **kw):
    ns = job["metadata"].get("namespace", NS)
    return client.CustomObjectsApi(api).create_namespaced_custom_object_with_http_info(
        "kubeflow.org", "v1", ns, "pytorchjobs", job, **kw
    )


WARNING = re.compile(r'299 - "((?:[^"\\]|\\.)*)"')


def warnings_of(headers) -> list[str]:
    """The texts of the ``Warning: 299 - "..."`` response headers (RFC 7234, as the API server
    sends admission warnings)."""
    return WARNING.findall(headers.get("Warning") or "")


def denial(err: ApiException) -> str:
    return json.loads(err.body)["message"]


# -- item 3: the webhook through the API server ---------------------------------------------------
def test_a_bad_pytorchjob_is_rejected_with_eksmllints_message(cluster):
    with pytest.raises(ApiException) as err:
        create_job(cluster["api"], bad_job())
    message = denial(err.value)
    assert message.startswith('admission webhook "validate.eksmllint.io" denied the request'), message
    assert "EML604" in message and "nproc_per_node" in message, message
    with pytest.raises(ApiException) as gone:
        client.CustomObjectsApi(cluster["api"]).get_namespaced_custom_object(
            "kubeflow.org", "v1", NS, "pytorchjobs", "nproc-4"
        )
    assert gone.value.status == 404


def test_a_warning_reaches_the_client_and_the_mutating_patch_is_stored(cluster):
    job = warn_job()
    _, status, headers = create_job(cluster["api"], job)
    assert status == 201
    warnings = warnings_of(headers)
    assert any(w.startswith("EML201 gang-missing") for w in warnings), warnings
    # the mutating webhook ran first and says so; EML301's fix is in, so validation is silent on it
    assert any(w.startswith("eksmllint mutated: EML301") for w in warnings), warnings
    assert not any(w.startswith("EML301") for w in warnings), warnings
    read = client.CustomObjectsApi(cluster["api"]).get_namespaced_custom_object(
        "kubeflow.org", "v1", NS, "pytorchjobs", job["metadata"]["name"]
    )
    spec = read["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]
    assert {"name": spec["volumes"][0]["name"], "mountPath": "/dev/shm"} in spec["containers"][0]["volumeMounts"]
    assert spec["volumes"][0]["emptyDir"]["medium"] == "Memory"
    # the object as the API server stores it (defaulted, with its metadata) lints clean for EML301
    codes = {f.code for f in lint_text(json.dumps(read), name="stored.json").active}
    assert "EML301" not in codes and "EML201" in codes
    assert "EML301" in {f.code for f in lint_text(json.dumps(job), name="sent.json").active}


def test_dry_run_is_judged_and_patched_without_side_effects(cluster):
    api = cluster["api"]
    with pytest.raises(ApiException) as err:
        create_job(api, bad_job("dry-bad"), dry_run="All")
    assert "EML604" in denial(err.value)
    answer, status, _ = create_job(api, warn_job("dry-good"), dry_run="All")
    assert status == 201
    spec = answer["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]
    assert spec["containers"][0]["volumeMounts"][0]["mountPath"] == "/dev/shm"  # the patch, in the answer
    with pytest.raises(ApiException) as gone:
        client.CustomObjectsApi(api).get_namespaced_custom_object("kubeflow.org", "v1", NS, "pytorchjobs", "dry-good")
    assert gone.value.status == 404


@pytest.mark.parametrize("namespace", [RELEASE_NS, OPT_OUT_NS, "kube-system"])
def test_the_charts_namespace_selector_exempts_what_it_says(cluster, namespace):
    hook = cluster["validating"]["webhooks"][0]
    excluded = {v for e in hook["namespaceSelector"]["matchExpressions"] for v in e["values"]}
    assert namespace in excluded or "disabled" in excluded  # what the chart says, read from it
    job = bad_job(f"exempt-{namespace}", namespace)
    _, status, _ = create_job(cluster["api"], job)
    assert status == 201  # never sent to the webhook, so the bad object is stored


def test_the_exempt_annotation_lets_an_object_through_with_a_warning(cluster):
    job = bad_job("annotated")
    job["metadata"]["annotations"] = {"eksmllint.io/exempt": "benchmarking the broken launch on purpose"}
    _, status, headers = create_job(cluster["api"], job)
    assert status == 201
    assert any("eksmllint.io/exempt" in w for w in warnings_of(headers)), headers


def _hook_to(cluster, name: str, url: str, namespace: str) -> dict:
    """The chart's validating webhook, renamed, aimed at ``url`` and scoped to ``namespace``."""
    config = point_at(cluster["validating"], url, cluster["ca"].cert_pem.bytes())
    config["metadata"] = {"name": name}
    for hook in config["webhooks"]:
        hook["name"] = hook["name"].replace("validate.", f"{name}.")
        hook["namespaceSelector"]["matchExpressions"].append(
            {"key": "kubernetes.io/metadata.name", "operator": "In", "values": [namespace]}
        )
    return config


def _create_pod(cluster, namespace: str) -> tuple[str | None, float]:
    """Create a clean Pod in ``namespace``: (the error message or None, seconds taken)."""
    pod = small_pod(f"p-{time.monotonic_ns()}", namespace)
    began = time.monotonic()
    try:
        client.CoreV1Api(cluster["api"]).create_namespaced_pod(namespace, pod)
        return None, time.monotonic() - began
    except ApiException as err:
        return denial(err), time.monotonic() - began


def _until_called(cluster, listener: Listener, namespace: str) -> tuple[str | None, float]:
    """Create Pods until the API server calls ``listener`` (its webhook configuration reaches the
    admission chain through an informer, not at once); the outcome of the call that reached it."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        before = listener.calls
        outcome = _create_pod(cluster, namespace)
        if listener.calls > before:
            return outcome
        time.sleep(0.2)
    raise AssertionError("the API server never called the webhook")


def _as_policy_says(policy: str, error: str | None) -> None:
    if policy == "Ignore":
        assert error is None, error  # admitted: the README's promise for failurePolicy Ignore
    else:
        assert error is not None and "failed calling webhook" in error, error


@contextlib.contextmanager
def _extra_hook(cluster, mode: str, namespace: str):
    """The chart's validating webhook once more, scoped to ``namespace`` and aimed at a
    :class:`Listener` in ``mode``; yields (listener, the chart's failurePolicy, timeoutSeconds)."""
    hook = cluster["validating"]["webhooks"][0]
    listener = Listener(cluster["ca"], mode)
    admission = client.AdmissionregistrationV1Api(cluster["api"])
    admission.create_validating_webhook_configuration(_hook_to(cluster, mode, listener.url, namespace))
    try:
        yield listener, hook["failurePolicy"], hook["timeoutSeconds"]
    finally:
        admission.delete_validating_webhook_configuration(mode)
        listener.close()


def test_a_webhook_that_is_down_behaves_as_the_charts_failure_policy_says(cluster):
    with _extra_hook(cluster, "close", DOWN_NS) as (listener, policy, timeout_s):
        _until_called(cluster, listener, DOWN_NS)
        listener.close()  # now nothing listens there: connection refused
        error, elapsed = _create_pod(cluster, DOWN_NS)
        _as_policy_says(policy, error)
        assert error is None or "connection refused" in error, error
        assert elapsed < timeout_s  # a refused connection fails at once, not after the timeout


def test_a_judgement_beyond_timeout_seconds_behaves_as_the_charts_failure_policy_says(cluster):
    with _extra_hook(cluster, "silent", SLOW_NS) as (listener, policy, timeout_s):
        error, elapsed = _until_called(cluster, listener, SLOW_NS)
        _as_policy_says(policy, error)
        assert timeout_s - 0.5 <= elapsed < timeout_s + 5, elapsed  # the API server waited timeoutSeconds


# -- the cluster-context watcher --------------------------------------------------------------------
def _judged(api, pod: dict) -> str | None:
    """The validating webhook's denial of ``pod`` (a dry-run create), or None when admitted."""
    try:
        client.CoreV1Api(api).create_namespaced_pod(NS, pod, dry_run="All")
        return None
    except ApiException as err:
        return denial(err)


def _follows(api, pod: dict, admitted: bool) -> float:
    """Seconds until the decision on ``pod`` is ``admitted`` (fails after FOLLOW_TIMEOUT_S)."""
    began = time.monotonic()
    while True:
        denied = _judged(api, pod)
        if (denied is None) == admitted:
            return time.monotonic() - began
        if time.monotonic() - began > FOLLOW_TIMEOUT_S:
            raise AssertionError(f"decision did not follow within {FOLLOW_TIMEOUT_S}s: {denied}")
        time.sleep(0.1)


def test_decisions_follow_nodepools_created_changed_and_deleted_in_the_api_server(cluster):
    """The server watches with the chart's RBAC; a Pod pinned to p5.48xlarge is denied (EML702)
    while no NodePool offers that type, admitted once one does, and so on."""
    api = cluster["api"]
    custom = client.CustomObjectsApi(api)
    custom.create_cluster_custom_object("karpenter.sh", "v1", "nodepools", nodepool("a100", "p4d.24xlarge"))
    pod = pinned_pod("pinned", "p5.48xlarge")
    _follows(api, pod, admitted=False)
    assert "EML702" in (_judged(api, pod) or "")
    h100 = nodepool("h100", "p5.48xlarge")
    custom.create_cluster_custom_object("karpenter.sh", "v1", "nodepools", h100)
    created = _follows(api, pod, admitted=True)
    stored = custom.get_cluster_custom_object("karpenter.sh", "v1", "nodepools", "h100")
    stored["spec"]["template"]["spec"]["requirements"][0]["values"] = ["g5.48xlarge"]
    custom.replace_cluster_custom_object("karpenter.sh", "v1", "nodepools", "h100", stored)
    changed = _follows(api, pod, admitted=False)
    stored = custom.get_cluster_custom_object("karpenter.sh", "v1", "nodepools", "h100")
    stored["spec"]["template"]["spec"]["requirements"][0]["values"] = ["p5.48xlarge"]
    custom.replace_cluster_custom_object("karpenter.sh", "v1", "nodepools", "h100", stored)
    _follows(api, pod, admitted=True)
    custom.delete_cluster_custom_object("karpenter.sh", "v1", "nodepools", "h100")
    deleted = _follows(api, pod, admitted=False)
    custom.delete_cluster_custom_object("karpenter.sh", "v1", "nodepools", "a100")
    # the README states this bound: the watch event, then one --context-interval
    assert max(created, changed, deleted) < FOLLOW_BOUND_S, (created, changed, deleted)


def test_the_server_runs_with_exactly_the_charts_rbac_and_fails_soft_on_an_absent_crd(cluster):
    from eksmllint.server.cluster import CLUSTER_KINDS, ApiStatusError, KubernetesTransport

    transport = KubernetesTransport(str(cluster["sa_kubeconfig"]))
    absent_group = ABSENT_CRD.split(".", 1)[1]
    for spec in CLUSTER_KINDS:
        if spec.group == absent_group and spec.plural == ABSENT_CRD.split(".", 1)[0]:
            with pytest.raises(ApiStatusError) as err:
                transport.list(spec)
            assert err.value.status == 404  # not installed: the watcher backs off, see below
        else:
            assert isinstance(transport.list(spec).get("items"), list), spec  # granted
    core = client.CoreV1Api(cluster["api"])
    sa_api = client.CoreV1Api(_token_client(cluster))
    with pytest.raises(ApiException) as forbidden:
        sa_api.list_secret_for_all_namespaces()
    assert forbidden.value.status == 403  # and nothing more than the chart grants
    assert core.list_namespace().items  # (the admin token can)
    log = cluster["server"].log.read_text(errors="replace")
    assert "cannot list Queue" in log and "HTTP 404" in log, log[-2000:]
    assert "HTTP 403" not in log, log[-2000:]
    with httpx.Client(verify=_trust(cluster["ca"])) as http:
        assert http.get(f"{cluster['server'].url}/readyz").status_code == 200


def _trust(ca: trustme.CA) -> ssl.SSLContext:
    ctx = ssl.create_default_context()
    ca.configure_trust(ctx)
    return ctx


def _token_client(cluster):
    return cluster["plane"].api_client(token=cluster["token"])


def test_the_watcher_recovers_from_a_compacted_resource_version(cluster, monkeypatch):
    """Watches restart from their last resourceVersion; after etcd compacted past it the API
    server answers 410 Gone and the watcher lists again, then follows new changes."""
    from eksmllint.server import cluster as watcher
    from eksmllint.server.cluster import CLUSTER_KINDS, ClusterContext, KubernetesTransport

    monkeypatch.setattr(watcher, "WATCH_TIMEOUT_S", 1)  # watches end (and restart) every second
    lists: list[str] = []
    gone: list[str] = []

    class Counting(KubernetesTransport):
        def list(self, spec):
            lists.append(spec.kind)
            return super().list(spec)

        def watch(self, spec, resource_version, timeout):
            try:
                for event in super().watch(spec, resource_version, timeout):
                    if event.get("type") == "ERROR":
                        gone.append(str((event.get("object") or {}).get("code")))
                    yield event
            except watcher.ApiStatusError as err:
                gone.append(str(err.status))
                raise

    (nodepools,) = [k for k in CLUSTER_KINDS if k.kind == "NodePool"]
    ctx = ClusterContext(Counting(str(cluster["sa_kubeconfig"])), (nodepools,))
    custom = client.CustomObjectsApi(cluster["api"])
    seen: dict[str, object] = {}

    def names() -> set[str | None]:
        fresh = ctx.poll()
        if fresh is not None:
            seen["last"] = fresh
        last = seen.get("last")
        return {r.name for r in last.resources} if last is not None else set()  # type: ignore[attr-defined]

    ctx.start()
    try:
        assert _eventually(lambda: ctx.ready())
        custom.create_cluster_custom_object("karpenter.sh", "v1", "nodepools", nodepool("before", "p4d.24xlarge"))
        assert _eventually(lambda: "before" in names())
        listed = lists.count("NodePool")
        core = client.CoreV1Api(cluster["api"])
        for i in range(3):  # move etcd's revision past the watcher's resourceVersion
            core.create_namespaced_config_map(NS, {"metadata": {"name": f"bump-{i}"}})
        cluster["plane"].compact_etcd()
        assert _eventually(lambda: lists.count("NodePool") > listed, 10), (lists, gone)
        assert "410" in gone, gone
        custom.create_cluster_custom_object("karpenter.sh", "v1", "nodepools", nodepool("after", "p5.48xlarge"))
        assert _eventually(lambda: {"before", "after"} <= names())
    finally:
        ctx.stop()
        for name in ("before", "after"):
            try:
                custom.delete_cluster_custom_object("karpenter.sh", "v1", "nodepools", name)
            except ApiException:
                pass


def _eventually(predicate, timeout: float = FOLLOW_TIMEOUT_S) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


# -- webhook-manifests' configurations --------------------------------------------------------------
def test_webhook_manifests_configurations_are_accepted_and_route_the_same(cluster):
    """Swap the chart's configurations for ``eksmllint webhook-manifests``' (same server), then
    put the chart's back."""
    api = cluster["api"]
    admission = client.AdmissionregistrationV1Api(api)
    ca_pem = cluster["ca"].cert_pem.bytes()
    docs = [d for d in yaml.safe_load_all(manifests.render(RELEASE_NS, manifests.DEFAULT_IMAGE, 2, ("EML301",))) if d]
    (validating,) = of_kind(docs, "ValidatingWebhookConfiguration")
    (mutating,) = of_kind(docs, "MutatingWebhookConfiguration")
    chart_name = cluster["validating"]["metadata"]["name"]
    admission.delete_validating_webhook_configuration(chart_name)
    admission.delete_mutating_webhook_configuration(chart_name)
    try:
        probe = bad_job("probe")
        assert _eventually(lambda: _admitted_dry(api, probe))  # no webhook left in the chain
        for config, create in (
            (validating, admission.create_validating_webhook_configuration),
            (mutating, admission.create_mutating_webhook_configuration),
        ):
            config = point_at(config, cluster["server"].url, ca_pem)
            config["metadata"]["name"] = "from-webhook-manifests"
            create(config)
        wait_routed(api)
        with pytest.raises(ApiException) as err:
            create_job(api, bad_job("manifests-bad"))
        assert "EML604" in denial(err.value)
        answer, _, headers = create_job(api, warn_job("manifests-warn"), dry_run="All")
        assert answer["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["volumes"]  # patched
        assert any("EML201" in w for w in warnings_of(headers))
    finally:
        for delete in (
            admission.delete_validating_webhook_configuration,
            admission.delete_mutating_webhook_configuration,
        ):
            try:
                delete("from-webhook-manifests")
            except ApiException:
                pass
        admission.create_validating_webhook_configuration(
            point_at(cluster["validating"], cluster["server"].url, ca_pem)
        )
        admission.create_mutating_webhook_configuration(point_at(cluster["mutating"], cluster["server"].url, ca_pem))
        wait_routed(api)


def _admitted_dry(api, job: dict) -> bool:
    try:
        create_job(api, job, dry_run="All")
        return True
    except ApiException:
        return False
