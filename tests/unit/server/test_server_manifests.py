"""deploy/: generated, schema-valid (kubernetes-validate strict for core kinds), lint-clean, hardened."""

from __future__ import annotations

import kubernetes_validate
import pytest
import yaml
from click.testing import CliRunner
from repository import ROOT

from eksmllint.cli import cli
from eksmllint.config import Config
from eksmllint.core.engine import lint_paths
from eksmllint.core.finding import Severity
from eksmllint.server import manifests
from eksmllint.server.cluster import CLUSTER_KINDS

DEPLOY = ROOT / "deploy"
K8S_VERSION = "1.33"
CRD_GROUPS = ("cert-manager.io/",)


def docs_of(text: str) -> list[dict]:
    return [d for d in yaml.safe_load_all(text) if d]


def by_kind(docs: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for d in docs:
        out.setdefault(d["kind"], []).append(d)
    return out


@pytest.fixture(scope="module")
def deploy_docs() -> list[dict]:
    return [d for p in sorted(DEPLOY.glob("*.yaml")) for d in docs_of(p.read_text())]


def test_deploy_dir_is_the_generated_output():
    """One source of truth: regenerate with `eksmllint webhook-manifests --output-dir deploy`."""
    files = manifests.manifest_files()
    assert sorted(p.name for p in DEPLOY.glob("*.yaml")) == sorted(files)
    for name, docs in files.items():
        assert (DEPLOY / name).read_text() == manifests.dump(docs), name


def test_core_kinds_pass_kubernetes_validate_strict():
    every = docs_of(manifests.render(mutate=("EML301",)))  # deploy/ plus the mutating webhook
    core = [d for d in every if not d["apiVersion"].startswith(CRD_GROUPS)]
    assert {d["kind"] for d in core} >= {
        "Namespace",
        "ServiceAccount",
        "ClusterRole",
        "ClusterRoleBinding",
        "Deployment",
        "PodDisruptionBudget",
        "Service",
        "ValidatingWebhookConfiguration",
        "MutatingWebhookConfiguration",
    }
    for d in core:
        kubernetes_validate.validate(d, K8S_VERSION, strict=True)  # raises on any problem


def test_kubernetes_validate_strict_would_catch_a_mistake(deploy_docs):
    (dep,) = [d for d in deploy_docs if d["kind"] == "Deployment"]
    broken = yaml.safe_load(yaml.safe_dump(dep))
    broken["spec"]["template"]["spec"]["containers"][0]["readOnlyRootFS"] = True
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, K8S_VERSION, strict=True)


def test_deploy_dir_lints_clean_with_eksmllint():
    result = lint_paths([str(DEPLOY)], Config())
    assert not [f for f in result.active if f.severity >= Severity.WARNING], result.active
    r = CliRunner().invoke(cli, ["lint", str(DEPLOY)])
    assert r.exit_code == 0, r.output


def test_the_mutating_webhook_is_registered_only_with_mutate(deploy_docs):
    assert "MutatingWebhookConfiguration" not in by_kind(deploy_docs)  # the default: validate only
    (dep,) = by_kind(deploy_docs)["Deployment"]
    assert not [a for a in dep["spec"]["template"]["spec"]["containers"][0]["args"] if a.startswith("--mutate")]
    r = CliRunner().invoke(cli, ["webhook-manifests", "--mutate", "EML301", "--mutate", "shm-missing,EML301"])
    assert r.exit_code == 0, r.output
    kinds = by_kind(docs_of(r.output))
    assert len(kinds["MutatingWebhookConfiguration"]) == 1
    assert (
        "--mutate=EML301,shm-missing,EML301"
        in kinds["Deployment"][0]["spec"]["template"]["spec"]["containers"][0]["args"]
    )
    r = CliRunner().invoke(cli, ["webhook-manifests", "--mutate", "EML999"])
    assert r.exit_code == 2 and "EML999" in r.output


def test_webhook_configurations():
    kinds = by_kind(docs_of(manifests.render(mutate=("EML301",))))
    (vwc,) = kinds["ValidatingWebhookConfiguration"]
    (mwc,) = kinds["MutatingWebhookConfiguration"]
    for cfg, path in ((vwc, "/validate"), (mwc, "/mutate")):
        assert cfg["metadata"]["annotations"]["cert-manager.io/inject-ca-from"] == "eksmllint/eksmllint-serving"
        (hook,) = cfg["webhooks"]
        assert hook["admissionReviewVersions"] == ["v1"]
        assert hook["sideEffects"] == "None"
        assert 1 <= hook["timeoutSeconds"] <= 5
        assert hook["failurePolicy"] in ("Ignore", "Fail") and hook["matchPolicy"] in ("Equivalent", "Exact")
        assert hook["clientConfig"]["service"] == {
            "namespace": "eksmllint",
            "name": "eksmllint",
            "path": path,
            "port": 443,
        }
        (names,) = [
            e for e in hook["namespaceSelector"]["matchExpressions"] if e["key"] == "kubernetes.io/metadata.name"
        ]
        assert names["operator"] == "NotIn" and set(names["values"]) == {"eksmllint", "kube-system", "cert-manager"}
        resources = {(g, r) for rule in hook["rules"] for g in rule["apiGroups"] for r in rule["resources"]}
        assert {
            ("kubeflow.org", "pytorchjobs"),
            ("kubeflow.org", "mpijobs"),
            ("batch.volcano.sh", "jobs"),
            ("ray.io", "rayclusters"),
            ("jobset.x-k8s.io", "jobsets"),
            ("batch", "jobs"),
            ("", "pods"),
        } <= resources
    assert all(rule["operations"] == ["CREATE", "UPDATE"] for rule in vwc["webhooks"][0]["rules"])
    # fixes touch fields that are immutable after creation: the mutating webhook sees CREATE only
    assert all(rule["operations"] == ["CREATE"] for rule in mwc["webhooks"][0]["rules"])
    assert mwc["webhooks"][0]["reinvocationPolicy"] == "IfNeeded"
    # the time budget the server is started with stays below the webhook timeout
    (dep,) = kinds["Deployment"]
    args = dep["spec"]["template"]["spec"]["containers"][0]["args"]
    budget = float(next(a for a in args if a.startswith("--time-budget=")).split("=", 1)[1])
    assert budget < vwc["webhooks"][0]["timeoutSeconds"]


def test_deployment_is_hardened(deploy_docs):
    kinds = by_kind(deploy_docs)
    (dep,) = kinds["Deployment"]
    assert dep["spec"]["replicas"] >= 2
    pod = dep["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    (c,) = pod["containers"]
    sc = c["securityContext"]
    assert sc["runAsNonRoot"] is True and sc["readOnlyRootFilesystem"] is True
    assert sc["allowPrivilegeEscalation"] is False and sc["capabilities"]["drop"] == ["ALL"]
    assert c["resources"]["requests"] and c["resources"]["limits"]
    assert c["readinessProbe"]["httpGet"]["path"] == "/readyz" and c["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert c["readinessProbe"]["httpGet"]["scheme"] == "HTTPS"
    assert ":" in c["image"] and not c["image"].endswith(":latest")
    (pdb,) = kinds["PodDisruptionBudget"]
    assert pdb["spec"]["selector"] == dep["spec"]["selector"] and pdb["spec"]["minAvailable"] >= 1
    (svc,) = kinds["Service"]
    assert svc["spec"]["selector"] == dep["spec"]["selector"]["matchLabels"]
    mounts = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
    vols = {v["name"]: v for v in pod["volumes"]}
    tls_secret = vols[mounts["/etc/eksmllint/tls"]]["secret"]["secretName"]
    (serving,) = [d for d in kinds["Certificate"] if not d["spec"].get("isCA")]
    assert serving["spec"]["secretName"] == tls_secret
    assert "eksmllint.eksmllint.svc" in serving["spec"]["dnsNames"]


def test_rbac_is_read_only_on_the_context_kinds(deploy_docs):
    (role,) = by_kind(deploy_docs)["ClusterRole"]
    granted = {(g, r) for rule in role["rules"] for g in rule["apiGroups"] for r in rule["resources"]}
    assert granted == {(k.group, k.plural) for k in CLUSTER_KINDS}
    assert all(rule["verbs"] == ["get", "list", "watch"] for rule in role["rules"])
    assert not {r for _, r in granted} & {"secrets", "configmaps", "*"}


def test_webhook_manifests_for_another_namespace():
    r = CliRunner().invoke(cli, ["webhook-manifests", "--namespace", "ml-platform"])
    assert r.exit_code == 0, r.output
    docs = docs_of(r.output)
    kinds = by_kind(docs)
    assert kinds["Namespace"][0]["metadata"]["name"] == "ml-platform"
    namespaced = [
        d
        for d in docs
        if d["kind"]
        not in (
            "Namespace",
            "ClusterRole",
            "ClusterRoleBinding",
            "ValidatingWebhookConfiguration",
            "MutatingWebhookConfiguration",
        )
    ]
    assert {d["metadata"]["namespace"] for d in namespaced} == {"ml-platform"}
    hook = kinds["ValidatingWebhookConfiguration"][0]
    assert hook["metadata"]["annotations"]["cert-manager.io/inject-ca-from"] == "ml-platform/eksmllint-serving"
    assert hook["webhooks"][0]["clientConfig"]["service"]["namespace"] == "ml-platform"
    values = hook["webhooks"][0]["namespaceSelector"]["matchExpressions"][0]["values"]
    assert set(values) == {"ml-platform", "kube-system", "cert-manager"}
    assert kinds["ClusterRoleBinding"][0]["subjects"][0]["namespace"] == "ml-platform"
    assert (
        "eksmllint.ml-platform.svc"
        in next(c for c in kinds["Certificate"] if not c["spec"].get("isCA"))["spec"]["dnsNames"]
    )
    for d in docs:
        if not d["apiVersion"].startswith(CRD_GROUPS):
            kubernetes_validate.validate(d, K8S_VERSION, strict=True)


def test_webhook_manifests_rejects_bad_namespaces():
    r = CliRunner().invoke(cli, ["webhook-manifests", "--namespace", "Bad_Name"])
    assert r.exit_code == 2 and "not a valid namespace" in r.output


def test_webhook_manifests_output_dir(tmp_path):
    r = CliRunner().invoke(
        cli, ["webhook-manifests", "--output-dir", str(tmp_path), "--image", "registry.example/eksmllint:1.2.3"]
    )
    assert r.exit_code == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(manifests.manifest_files())
    assert "registry.example/eksmllint:1.2.3" in (tmp_path / "deployment.yaml").read_text()


def test_dockerfile_runs_unprivileged_without_a_shell():
    text = (DEPLOY / "Dockerfile").read_text()
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]
    user = [line for line in lines if line.startswith("USER ")][-1]
    assert user.split()[1].split(":")[0] not in ("0", "root")
    entry = [line for line in lines if line.startswith("ENTRYPOINT ")][-1]
    assert entry.startswith('ENTRYPOINT ["') and "serve" in entry  # exec form: SIGTERM reaches the server
    runs = [line for line in lines if line.startswith(("RUN ", "CMD "))]
    assert runs and all(line.split(" ", 1)[1].startswith("[") for line in runs)  # no /bin/sh -c anywhere
    assert ".[cluster]" in text
