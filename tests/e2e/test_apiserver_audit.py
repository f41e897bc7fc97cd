"""``eksmllint audit`` against a real kube-apiserver (issue 24): objects created by the test, read
back through paged lists, reported in every format, and the same findings as ``lint`` on the
same objects exported to files."""

from __future__ import annotations

import json

import builders as b
import pytest
from click.testing import CliRunner

from eksmllint import audit
from eksmllint.cli import cli
from eksmllint.formatters import FORMATTERS

pytestmark = [pytest.mark.apiserver, pytest.mark.slow]

kubernetes = pytest.importorskip("kubernetes", reason="the kubernetes client (test extras) is not installed")
from kubernetes import client  # noqa: E402

NS, OTHER_NS = "audit-ml", "audit-other"
#: Namespaces the webhook never judges (in case another module left a webhook registered).
OPT_OUT = {"eksmllint.io/webhook": "disabled"}
GPU_LIMITS = {"nvidia.com/gpu": "8", "cpu": "90", "memory": "1000Gi"}  # strings: the client validates Pods


def job(name: str, nproc: int, labels: dict | None = None) -> dict:
    worker = b.replica(
        2,
        b.pod_template(
            b.container("pytorch", command=["torchrun", f"--nproc_per_node={nproc}", "t.py"], limits=GPU_LIMITS)
        ),
    )
    out = b.pytorchjob(name, None, worker, namespace=NS)
    if labels:
        out["metadata"]["labels"] = labels
    return out


@pytest.fixture(scope="module")
def objects(control_plane, tmp_path_factory):
    api = control_plane.api_client()
    core, custom = client.CoreV1Api(api), client.CustomObjectsApi(api)
    for ns in (NS, OTHER_NS):
        core.create_namespace({"metadata": {"name": ns, "labels": OPT_OUT}})
    bad = custom.create_namespaced_custom_object(
        "kubeflow.org", "v1", NS, "pytorchjobs", job("nproc-4", 4, {"team": "llm"})
    )
    custom.create_namespaced_custom_object("kubeflow.org", "v1", NS, "pytorchjobs", job("no-gang", 8))
    # a Pod the PyTorchJob's controller would have made: judged through its owner, left out
    owned = b.pod("nproc-4-worker-0", b.container("pytorch", limits=GPU_LIMITS), namespace=NS)
    owned["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "kubeflow.org/v1",
            "kind": "PyTorchJob",
            "name": "nproc-4",
            "uid": bad["metadata"]["uid"],
            "controller": True,
        }
    ]
    core.create_namespaced_pod(NS, owned)
    core.create_namespaced_pod(
        OTHER_NS,
        b.pod("lonely", b.container("train", command=["python", "t.py"], limits=GPU_LIMITS), namespace=OTHER_NS),
    )
    pinned = b.pod("pinned", b.container("train", command=["python", "t.py"], limits=GPU_LIMITS), namespace=OTHER_NS)
    pinned["spec"]["nodeSelector"] = {b.INSTANCE_TYPE: "p5.48xlarge"}
    core.create_namespaced_pod(OTHER_NS, pinned)
    custom.create_cluster_custom_object(
        "karpenter.sh",
        "v1",
        "nodepools",
        b.nodepool(
            "audit-gpu",
            b.requirement(b.INSTANCE_TYPE, "p4d.24xlarge"),
            disruption={"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "5m"},
        ),
    )
    kubeconfig = control_plane.kubeconfig(tmp_path_factory.mktemp("audit") / "kubeconfig")
    yield {"kubeconfig": kubeconfig, "plane": control_plane, "api": api}
    custom.delete_cluster_custom_object("karpenter.sh", "v1", "nodepools", "audit-gpu")


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def audit_json(objects, *args: str) -> list[dict]:
    code, out, err = run("audit", "--kubeconfig", str(objects["kubeconfig"]), "--format", "json", *args)
    assert code in (0, 1), err
    return json.loads(out)["findings"]


def ours(findings: list[dict]) -> list[dict]:
    """Findings on this module's objects (other modules share the control plane)."""
    mine = {NS, OTHER_NS}
    return [f for f in findings if (f["resource"] or {}).get("namespace") in mine or "audit-gpu" in f["file"]]


def key(f: dict, file: str) -> tuple:
    return (f["code"], file, tuple(f["path"]), f["line"], f["message"], json.dumps(f["resource"], sort_keys=True))


def test_audit_names_the_object_and_the_field(objects):
    found = ours(audit_json(objects))
    by_code = {f["code"]: f for f in found}
    eml604 = by_code["EML604"]
    assert eml604["file"] == f"PyTorchJob/{NS}/nproc-4.yaml"
    assert eml604["resource"] == {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "namespace": NS,
        "name": "nproc-4",
    }
    assert eml604["path"][:3] == ["spec", "pytorchReplicaSpecs", "Worker"] and "command" in eml604["path"]
    files = {f["file"] for f in found}
    assert "Pod/audit-other/lonely.yaml" in files  # EML301 on a Pod of its own
    assert "NodePool/audit-gpu.yaml" in files  # cluster-scoped: Kind/name
    assert not any("nproc-4-worker-0" in f for f in files)  # the controller's Pod: judged through its owner


def test_audit_reports_what_lint_reports_on_the_exported_objects(objects, tmp_path):
    exported = tmp_path / "export"
    from_audit = audit_json(objects, "--export", str(exported))
    code, out, err = run("lint", str(exported / "objects"), "--context", str(exported / "context"), "--format", "json")
    assert code in (0, 1), err
    from_lint = json.loads(out)["findings"]
    prefix = str(exported / "objects") + "/"
    lint_keys = sorted(key(f, f["file"].split(prefix, 1)[-1] if prefix in f["file"] else f["file"]) for f in from_lint)
    assert sorted(key(f, f["file"]) for f in from_audit) == lint_keys
    assert len(ours(from_audit)) >= 4  # EML604, EML201 (twice), EML301s, EML501: not a vacuous match


def test_namespace_and_selector_choose_what_is_judged(objects):
    in_ns = audit_json(objects, "--namespace", NS)
    # NodePools are context now: their findings come only moved onto a judged object's file
    # (naming the NodePool's place, as lint --context does)
    assert in_ns and {f["resource"]["namespace"] for f in in_ns if "[at " not in f["message"]} == {NS}
    assert all(f["file"].endswith(".yaml") and f"/{NS}/" in f["file"] for f in in_ns if "[at " in f["message"])
    selected = audit_json(objects, "--selector", "team=llm")
    assert selected and {f["resource"]["name"] for f in selected if "[at " not in f["message"]} == {"nproc-4"}


def test_context_paths_join_the_clusters_objects(objects, tmp_path):
    """A Pod pinned to p5.48xlarge has no NodePool in the cluster (EML702); a NodePool kept in
    git and given with --context is where it lands."""
    assert any(f["code"] == "EML702" for f in audit_json(objects, "--namespace", OTHER_NS))
    pool = b.nodepool(
        "h100-from-git",
        b.requirement(b.INSTANCE_TYPE, "p5.48xlarge"),
        disruption={"consolidationPolicy": "WhenEmpty", "consolidateAfter": "Never"},
    )
    (tmp_path / "pools.yaml").write_text(b.manifest(pool))
    with_context = audit_json(objects, "--namespace", OTHER_NS, "--context", str(tmp_path / "pools.yaml"))
    assert not any(f["code"] == "EML702" for f in with_context), with_context


def test_paged_lists_read_everything_and_report_progress(objects, monkeypatch):
    reader = audit.ClusterReader(str(objects["kubeconfig"]))
    whole = audit.read_cluster(reader)
    monkeypatch.setattr(audit, "PAGE_SIZE", 1)
    calls: list[tuple[int, int]] = []
    paged = audit.read_cluster(reader, progress=lambda done, total: calls.append((done, total)))
    assert paged.documents == whole.documents and len(paged.documents) >= 5
    assert len(calls) >= len(paged.documents)  # one report per page
    assert all(done <= total for done, total in calls) and [d for d, _ in calls] == sorted(d for d, _ in calls)
    assert any(total > done for done, total in calls)  # the estimate (remainingItemCount) was used


@pytest.mark.parametrize("fmt", sorted(FORMATTERS))
def test_every_lint_format(objects, fmt, tmp_path):
    report = tmp_path / f"report.{fmt}"
    code, out, err = run(
        "audit", "--kubeconfig", str(objects["kubeconfig"]), "--namespace", NS, "--format", fmt, "--output", str(report)
    )
    assert code == 1, err  # EML604 is an error
    text = report.read_text()
    assert "EML604" in text and f"PyTorchJob/{NS}/nproc-4.yaml" in text, text[:2000]
    assert "EML604" in out  # the terminal gets the text report


def test_forbidden_kinds_are_an_error_not_a_silent_gap(objects, tmp_path):
    core = client.CoreV1Api(objects["api"])
    core.create_namespaced_service_account(NS, {"metadata": {"name": "nobody"}})
    token = core.create_namespaced_service_account_token(
        "nobody", NS, {"spec": {"audiences": ["https://kubernetes.default.svc"]}}
    ).status.token
    kubeconfig = objects["plane"].kubeconfig(tmp_path / "nobody", token=token, user="nobody")
    code, _, err = run("audit", "--kubeconfig", str(kubeconfig))
    assert code == 2
    assert "cannot list pods" in err and "403" in err, err


def test_no_cluster_is_a_clear_error(tmp_path):
    missing = tmp_path / "no-such-kubeconfig"
    code, _, err = run("audit", "--kubeconfig", str(missing))
    assert code == 1 or code == 2
    assert "no cluster credentials" in err and "Traceback" not in err, err
