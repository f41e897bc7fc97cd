"""The webhook's linting core, without a network: engine equivalence, patches, limits, context."""

from __future__ import annotations

import json
import os
import threading
import time

import builders as b
import jsonpatch
import pytest
from repository import ROOT

from eksmllint.config import Config
from eksmllint.core.context import LintRun
from eksmllint.core.engine import lint_loaded
from eksmllint.core.finding import Finding, Location, Severity, format_path
from eksmllint.core.registry import default_registry
from eksmllint.loader import LoadResult, load, parse_source
from eksmllint.resource import SourceFile
from eksmllint.server import admission as adm
from eksmllint.server.cluster import ApiStatusError, ClusterContext, KindSpec
from eksmllint.server.context import ContextSnapshot, ContextStore, DirectoryContext, wait_until
from eksmllint.server.linting import AdmissionLinter, is_exempt, to_ymap
from eksmllint.yamlpos import YList, YMap, to_plain

FIXTURES = ROOT / "fixtures" / "rules"

GPU_POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "trainer", "namespace": "ml"},
    "spec": {
        "restartPolicy": "Never",
        "containers": [
            {
                "name": "train",
                "image": "public.ecr.aws/pytorch/pytorch:2.3.1-cuda12.1-cudnn8-runtime",
                "command": ["torchrun", "--nproc_per_node=8", "train.py"],
                "resources": {"limits": {"nvidia.com/gpu": 8, "cpu": "90", "memory": "1000Gi"}},
            }
        ],
    },
}


@pytest.fixture(scope="module")
def registry():
    return default_registry()


@pytest.fixture(scope="module")
def linter(registry):
    return AdmissionLinter(Config(), registry, ["EML301"])


def _json_source(name: str, obj: dict) -> tuple[SourceFile, list]:
    src = SourceFile(name, json.dumps(obj), "json")
    resources, problems = parse_source(src)
    assert not problems
    return src, resources


def _key(f: Finding) -> tuple:
    return (f.code, str(f.severity), f.message, tuple(f.location.path), f.suppressed_by is None)


def _fixture_objects() -> list[tuple[str, list[dict]]]:
    groups = []
    for case in sorted(FIXTURES.iterdir()):
        for variant in ("bad", "good"):
            paths = (
                [case / f"{variant}.yaml"]
                if (case / f"{variant}.yaml").exists()
                else sorted((case / variant).glob("*.yaml"))
                if (case / variant).is_dir()
                else []
            )
            if not paths:
                continue
            loaded = load([str(p) for p in paths])
            objs = [to_plain(r.data) for r in loaded.resources]
            if objs:
                groups.append((f"{case.name}/{variant}", objs))
    return groups


FIXTURE_GROUPS = _fixture_objects()


@pytest.mark.parametrize("group", FIXTURE_GROUPS, ids=[g[0] for g in FIXTURE_GROUPS])
def test_same_findings_as_the_engine(group, registry, linter):
    """Each object admitted with the rest of its fixture as context: the webhook's restricted
    dispatch must find exactly what the engine finds (it only skips work whose findings the
    engine drops)."""
    _, objs = group
    for i, obj in enumerate(objs):
        others = [o for j, o in enumerate(objs) if j != i]
        ctx_files, ctx_res = [], []
        for j, o in enumerate(others):
            src, res = _json_source(f"<ctx-{j}>", o)
            ctx_files.append(src)
            ctx_res += res
        context = LoadResult(ctx_files, ctx_res) if others else None
        src, res = _json_source("<admission>", obj)
        expected = lint_loaded(LoadResult([src], res), Config(), registry, context=context, mode="webhook")
        snapshot = ContextSnapshot.build([context], 1) if context else None
        got = linter.lint(obj, snapshot)
        assert sorted(map(_key, got.findings)) == sorted(map(_key, expected.findings)), obj.get("kind")


def test_some_fixture_findings_are_compared():
    """The equivalence test above is not vacuous: it covers findings of many rules."""
    linter = AdmissionLinter(Config(), default_registry())
    codes = {f.code for _, objs in FIXTURE_GROUPS for o in objs for f in linter.lint(o).active}
    assert len(codes) >= 15


def test_to_ymap_keeps_data_and_is_iterative():
    deep: dict = {}
    cur = deep
    for _ in range(5000):  # deeper than the recursion limit
        cur["a"] = {}
        cur = cur["a"]
    data = to_ymap({"x": [1, {"y": None}], "deep": deep})
    assert isinstance(data, YMap) and isinstance(data["x"], YList) and isinstance(data["x"][1], YMap)
    assert data["x"][1]["y"] is None and data.pos["x"] == (1, 1)


def test_gpu_pod_warns_shm_and_patch_fixes_it_idempotently(linter):
    lint = linter.lint(GPU_POD)
    assert "EML301" in {f.code for f in lint.active}
    m = linter.mutate(GPU_POD)
    assert m.patch and not m.errors
    patched = jsonpatch.apply_patch(GPU_POD, m.patch)
    assert patched == m.patched
    spec = patched["spec"]
    (vol,) = [v for v in spec["volumes"] if v.get("emptyDir", {}).get("medium") == "Memory"]
    assert {"name": vol["name"], "mountPath": "/dev/shm"} in spec["containers"][0]["volumeMounts"]
    assert "EML301" not in {f.code for f in linter.lint(patched).active}
    assert linter.mutate(patched).patch == []  # re-invoked: nothing left to do
    assert GPU_POD["spec"].get("volumes") is None  # the request object is not modified


def test_mutate_without_codes_is_empty(registry):
    assert AdmissionLinter(Config(), registry).mutate(GPU_POD).patch == []


def test_mutate_codes_are_checked(registry):
    with pytest.raises(ValueError, match="no such rule"):
        AdmissionLinter(Config(), registry, ["EML999"])
    with pytest.raises(ValueError, match="no safe fix"):
        AdmissionLinter(Config(), registry, ["EML702"])
    assert AdmissionLinter(Config(), registry, ["shm"]).mutate_codes >= {"EML301", "EML302"}


def test_ignore_annotation_and_severity_override(registry):
    pod = json.loads(json.dumps(GPU_POD))
    pod["metadata"]["annotations"] = {"eksmllint.io/ignore": "EML301 # shm comes from the image"}
    lint = AdmissionLinter(Config(), registry).lint(pod)
    assert "EML301" not in {f.code for f in lint.active}
    assert "EML301" in {f.code for f in lint.findings if f.suppressed_by}
    cfg = Config.model_validate({"severity": {"EML301": "error"}})
    assert {f.severity for f in AdmissionLinter(cfg, registry).lint(GPU_POD).active if f.code == "EML301"} == {
        Severity.ERROR
    }


def test_request_namespace_fills_a_missing_one(linter):
    pod = json.loads(json.dumps(GPU_POD))
    del pod["metadata"]["namespace"]
    lint = linter.lint(pod, namespace="team-a")
    assert {f.resource.namespace for f in lint.active if f.resource} == {"team-a"}


@pytest.mark.parametrize(
    "value,expected", [("true", "true"), ("  reason x ", "reason x"), ("false", None), ("", None), (True, None)]
)
def test_exemption_annotation(value, expected):
    assert is_exempt({"metadata": {"annotations": {"eksmllint.io/exempt": value}}}) == expected
    assert is_exempt({"metadata": "junk"}) is None


def test_format_path():
    assert (
        format_path(("spec", "containers", 0, "resources", "limits", "nvidia.com/gpu"))
        == "spec.containers[0].resources.limits[nvidia.com/gpu]"
    )
    assert format_path(()) == "<object>"


def _finding(i: int, msg: str = "m") -> Finding:
    return Finding("EML301", "shm-missing", Severity.WARNING, msg, Location("<admission>", path=("spec", i)))


def test_warnings_stay_within_api_server_limits():
    many = [_finding(i, "x" * 400 + "\n\x00") for i in range(100)]
    out = adm.warnings_for(many)
    assert all(len(w) <= adm.WARNING_MAX for w in out)
    assert sum(len(w) for w in out) <= adm.WARNINGS_TOTAL
    assert out[-1].startswith("eksmllint: ") and "more finding(s) not shown" in out[-1]
    assert not any(ch in w for w in out for ch in "\n\x00")
    few = adm.warnings_for([_finding(1), _finding(2)])
    assert few == ["EML301 shm-missing at spec[1]: m", "EML301 shm-missing at spec[2]: m"]


def test_denial_message_lists_code_slug_and_path():
    f = Finding(
        "EML601",
        "accelerator-limits",
        Severity.ERROR,
        "request without limit",
        Location("<admission>", path=("spec", "containers", 0, "resources", "requests", "nvidia.com/gpu")),
    )
    text = adm.denial_message("Pod ml/x", [f] * 25, Severity.ERROR)
    assert "EML601 accelerator-limits at spec.containers[0].resources.requests[nvidia.com/gpu]" in text
    assert "and 5 more" in text


@pytest.mark.parametrize(
    "body,status,fragment",
    [
        (b"", 400, "empty"),
        (b"\xff", 400, "UTF-8"),
        (b"{", 400, "not valid JSON"),
        (b"[]", 400, "JSON object"),
        (b'{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{}}', 400, "apiVersion"),
        (b'{"apiVersion":"admission.k8s.io/v1","kind":"Pod"}', 400, "AdmissionReview"),
        (b'{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}', 400, "request"),
        (
            b'{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"a","operation":"PATCH"}}',
            400,
            "operation",
        ),
        (
            b'{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"a","operation":"CREATE"}}',
            400,
            "object is required",
        ),
        (
            b'{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"","operation":"CREATE","object":{}}}',
            400,
            "uid",
        ),
        (b"[" * 100000, 400, "nested"),
    ],
)
def test_parse_review_rejects(body, status, fragment):
    with pytest.raises(adm.AdmissionError) as info:
        adm.parse_review(body)
    assert info.value.status == status and fragment in info.value.message


# -- context -------------------------------------------------------------------------------------
def pool_yaml(name: str, itype: str) -> str:
    return b.manifest(b.nodepool(name, b.requirement(b.INSTANCE_TYPE, itype)))


def test_directory_context_reloads_and_skips_configmap_internals(tmp_path):
    # The layout the kubelet gives a ConfigMap volume: real files in ..<ts>/, symlinks above.
    real = tmp_path / "..2026_01_01_00_00_00.000000001"
    real.mkdir()
    (real / "pools.yaml").write_text(pool_yaml("a", "p4d.24xlarge"))
    os.symlink(real.name, tmp_path / "..data")
    os.symlink("..data/pools.yaml", tmp_path / "pools.yaml")
    store = ContextStore([DirectoryContext(str(tmp_path))], interval=0.05)
    assert store.refresh() and store.ready()
    assert store.snapshot.counts == {"NodePool": 1} and len(store.snapshot.nodepool_views) == 1
    assert not store.refresh()  # nothing changed
    # An update: a new timestamped directory, then the ..data symlink flips to it.
    new = tmp_path / "..2026_01_01_00_00_01.000000001"
    new.mkdir()
    (new / "pools.yaml").write_text(pool_yaml("a", "p4d.24xlarge") + "---\n" + pool_yaml("b", "p5.48xlarge"))
    os.symlink(new.name, tmp_path / "..data_tmp")
    os.replace(tmp_path / "..data_tmp", tmp_path / "..data")
    generation = store.snapshot.generation
    store.start()
    try:
        assert wait_until(lambda: store.snapshot.generation > generation, 5)
        assert store.snapshot.counts == {"NodePool": 2}
    finally:
        store.stop()


def test_same_object_from_two_sources_is_kept_once(tmp_path):
    a = load_result_of(pool_yaml("a", "p4d.24xlarge"))
    b = load_result_of(pool_yaml("a", "p5.48xlarge"))
    snap = ContextSnapshot.build([a, b], 1)
    (pool,) = snap.resources
    assert pool.get(("spec", "template", "spec", "requirements", 0, "values", 0)) == "p5.48xlarge"


def load_result_of(text: str) -> LoadResult:
    src = SourceFile("<t>", text, "yaml")
    res, _ = parse_source(src)
    return LoadResult([src], res)


def test_context_changes_decisions(tmp_path, linter):
    pod = json.loads(json.dumps(GPU_POD))
    pod["spec"]["nodeSelector"] = {"node.kubernetes.io/instance-type": "g6.xlarge"}
    assert "EML702" not in {f.code for f in linter.lint(pod).active}  # no context: silent
    (tmp_path / "pools.yaml").write_text(pool_yaml("a", "p4d.24xlarge"))
    store = ContextStore([DirectoryContext(str(tmp_path))])
    store.refresh()
    assert "EML702" in {f.code for f in linter.lint(pod, store.snapshot).active}


class FakeTransport:
    """Lists from ``items``; each watch call replays the next scripted batch, then ends."""

    def __init__(self, items: dict[str, list[dict]], scripts: dict[str, list]) -> None:
        self.items = items
        self.scripts = scripts
        self.lists = 0
        self.lock = threading.Lock()

    def list(self, spec: KindSpec) -> dict:
        with self.lock:
            self.lists += 1
        if spec.plural == "queues":
            raise ApiStatusError(404, "the server could not find the requested resource")
        return {"items": list(self.items.get(spec.plural, [])), "metadata": {"resourceVersion": "1"}}

    def watch(self, spec: KindSpec, resource_version: str, timeout: int):
        script = self.scripts.get(spec.plural) or []
        if script:
            batch = script.pop(0)
            if isinstance(batch, Exception):
                raise batch
            yield from batch
        time.sleep(0.05)


def _np(name: str, rv: str = "1") -> dict:
    return {
        "metadata": {"name": name, "resourceVersion": rv, "managedFields": [{"manager": "x"}]},
        "spec": {"template": {"spec": {"requirements": []}}},
    }


def test_cluster_context_lists_watches_and_relists():
    kinds = (
        KindSpec("NodePool", "karpenter.sh", "v1", "nodepools"),
        KindSpec("Queue", "scheduling.volcano.sh", "v1beta1", "queues"),
    )
    transport = FakeTransport(
        {"nodepools": [_np("a")]},
        {
            "nodepools": [
                [
                    {"type": "ADDED", "object": _np("b", "2")},
                    {"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "3"}}},
                    {"type": "DELETED", "object": _np("a", "4")},
                ],
                ApiStatusError(410, "too old"),
            ]
        },
    )
    cluster = ClusterContext(transport, kinds)
    store = ContextStore([cluster], interval=0.05)
    cluster.start()
    store.start()
    try:
        assert wait_until(store.ready, 5)  # the 404 kind does not block readiness
        assert wait_until(lambda: transport.lists >= 3, 5)  # the 410 made it list again
        assert wait_until(lambda: {r.name for r in store.snapshot.resources} == {"a"}, 5)
        pool = store.snapshot.resources[0]
        assert pool.kind == "NodePool" and pool.api_version == "karpenter.sh/v1"
        assert "managedFields" not in pool.metadata
        assert len(store.snapshot.nodepool_views) == 1
    finally:
        store.stop()


def test_kubernetes_transport_against_a_fake_api_server(tmp_path):
    """The real client code path (list with _preload_content=False, watch streams) against a
    loopback HTTP server that speaks just enough of the Kubernetes API."""
    pytest.importorskip("kubernetes")
    import http.server

    from eksmllint.server.cluster import CLUSTER_KINDS, KubernetesTransport

    seen: list[str] = []

    class Api(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):  # quiet
            return

        def do_GET(self):
            seen.append(self.path)
            path, _, query = self.path.partition("?")
            if path == "/apis/karpenter.sh/v1/nodepools" and "watch=true" in query:
                events = [
                    {
                        "type": "ADDED",
                        "object": {
                            "apiVersion": "karpenter.sh/v1",
                            "kind": "NodePool",
                            "metadata": {"name": "b", "resourceVersion": "7"},
                        },
                    }
                ]
                body = "".join(json.dumps(e) + "\n" for e in events).encode()
            elif path == "/apis/karpenter.sh/v1/nodepools":
                body = json.dumps(
                    {
                        "kind": "NodePoolList",
                        "metadata": {"resourceVersion": "5"},
                        "items": [{"metadata": {"name": "a"}, "spec": {}}],
                    }
                ).encode()
            elif path == "/api/v1/persistentvolumeclaims":
                body = json.dumps(
                    {
                        "kind": "PersistentVolumeClaimList",
                        "metadata": {"resourceVersion": "9"},
                        "items": [{"metadata": {"name": "data", "namespace": "ml"}}],
                    }
                ).encode()
            else:
                self.send_response(404)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b'{"kind":"Status","code":404}')
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Api)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        kubeconfig = tmp_path / "kubeconfig"
        kubeconfig.write_text(
            json.dumps(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "current-context": "t",
                    "clusters": [{"name": "t", "cluster": {"server": f"http://127.0.0.1:{httpd.server_address[1]}"}}],
                    "users": [{"name": "t", "user": {"token": "x"}}],
                    "contexts": [{"name": "t", "context": {"cluster": "t", "user": "t"}}],
                }
            )
        )
        transport = KubernetesTransport(str(kubeconfig))
        specs = {k.plural: k for k in CLUSTER_KINDS}
        listed = transport.list(specs["nodepools"])
        assert listed["metadata"]["resourceVersion"] == "5" and listed["items"][0]["metadata"]["name"] == "a"
        assert transport.list(specs["persistentvolumeclaims"])["items"][0]["metadata"]["name"] == "data"
        events = list(transport.watch(specs["nodepools"], "5", 5))
        assert [e["type"] for e in events] == ["ADDED"]
        assert any("resourceVersion=5" in p and "watch=true" in p for p in seen)
        with pytest.raises(ApiStatusError) as info:
            transport.list(specs["queues"])
        assert info.value.status == 404
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_several_context_directories_add_up(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "p.yaml").write_text(pool_yaml("a", "p4d.24xlarge"))
    (tmp_path / "b" / "p.yaml").write_text(pool_yaml("b", "p5.48xlarge"))
    store = ContextStore([DirectoryContext(str(tmp_path / "a")), DirectoryContext(str(tmp_path / "b"))])
    store.refresh()
    assert sorted(r.name for r in store.snapshot.resources) == ["a", "b"]


def test_an_update_replaces_the_stored_version_in_the_context(linter):
    ctx = ContextSnapshot.build(
        [load_result_of(pool_yaml("a", "p4d.24xlarge") + "---\n" + pool_yaml("b", "p5.48xlarge"))],
        1,
    )
    updated = {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": "a"},
        "spec": {
            "template": {
                "spec": {
                    "requirements": [
                        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["g5.48xlarge"]}
                    ]
                }
            }
        },
    }
    from eksmllint.yamlpos import to_plain as plain

    src = SourceFile("<admission>", "", "json")
    from eksmllint.resource import Document, Resource

    data = to_ymap(updated)
    doc = Document(src, 0, data, 1)
    res = Resource(doc, data)
    run = LintRun.over(ctx.views.without(res.key), [res], [src], linter.linter.settings)
    assert [r.name for r in run.resources] == ["a", "b"] and run.resources[0] is res
    assert [v.name for v in run.nodepools] == ["a", "b"] and run.nodepools[0].resource is res
    assert [r.name for r in run.by_kind["NodePool"]] == ["a", "b"]
    assert plain(run.nodepools[0].resource.data) == updated
    # a different object leaves the snapshot's lists as they are (no per-request copy)
    other = Resource(Document(src, 0, to_ymap(GPU_POD), 1), to_ymap(GPU_POD))
    run2 = LintRun.over(ctx.views.without(other.key), [other], [src], linter.linter.settings)
    assert run2.by_kind["NodePool"] is ctx.views.by_kind["NodePool"]
    assert len(run2.resources) == 3 and [w.resource for w in run2.workloads] == [other]


# --- run-dependent caches never outlive a request ------------------------------------------------
DS_JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: t5-ft, namespace: training}
spec:
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {node.kubernetes.io/instance-type: p3.2xlarge}
      containers:
        - name: trainer
          image: repo/trainer:1.0
          workingDir: /cfg
          command: ["deepspeed", "t5.py", "--deepspeed_config", "ds.json"]
          resources: {limits: {nvidia.com/gpu: 1, cpu: "7", memory: 48Gi}}
          volumeMounts: [{name: cfg, mountPath: /cfg}]
      volumes: [{name: cfg, configMap: {name: ds-cfg}}]
"""


def _ds_configmap(precision: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "ds-cfg", "namespace": "training"},
        "data": {"ds.json": json.dumps({precision: {"enabled": True}})},
    }


@pytest.mark.parametrize("order", [("fp16", "bf16"), ("bf16", "fp16")])
def test_context_workloads_do_not_carry_one_requests_answer_into_the_next(order):
    # The snapshot's containers are shared by every request's run; the precision of the mounted
    # DeepSpeed config is the admitted ConfigMap's, so each request must be judged on its own.
    src = SourceFile("ctx.yaml", DS_JOB, "yaml")
    resources, problems = parse_source(src)
    snapshot = ContextSnapshot.build([LoadResult([src], resources, problems)], 1)
    linter = AdmissionLinter(Config(), default_registry())
    for precision in order:
        found = [f for f in linter.lint(_ds_configmap(precision), snapshot, "training").active if f.code == "EML402"]
        assert bool(found) == (precision == "bf16"), precision  # V100 has no bf16
