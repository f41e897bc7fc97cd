"""charts/eksmllint (issue 15): rendered by Helm's own Go template engine (helm-python-sdk bundles
Helm's SDK as a shared library: no helm binary, no network), the output is strict-schema valid,
lint-clean with eksmllint, and every value the chart offers lands where it should."""

from __future__ import annotations

import base64

import kubernetes_validate
import pytest
import yaml
from click.testing import CliRunner
from repository import ROOT

from eksmllint.cli import cli
from eksmllint.cli.serve import serve_command
from eksmllint.config import Config
from eksmllint.core.engine import lint_paths
from eksmllint.core.finding import Severity
from eksmllint.server import manifests

helm = pytest.importorskip(
    "helm_python",
    reason="helm-python-sdk (Helm's SDK for Python, in the test extras) is not installed: the chart cannot be rendered",
)

CHART = ROOT / "charts" / "eksmllint"
K8S_VERSION = "1.33"
CRD_GROUPS = ("cert-manager.io/", "monitoring.coreos.com/")
NAMESPACE = "ml-platform"
CA_BUNDLE = base64.b64encode(b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n").decode()
CASES = {
    "defaults": {},
    "provided-secret": {"tls": {"certManager": {"enabled": False}, "secretName": "my-tls", "caBundle": CA_BUNDLE}},
    "everything": {
        "replicaCount": 3,
        "podDisruptionBudget": {"minAvailable": 2},
        "priorityClassName": "system-cluster-critical",
        "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "platform", "effect": "NoSchedule"}],
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "webhook": {"failurePolicy": "Ignore", "timeoutSeconds": 10, "excludeNamespaces": ["monitoring"]},
        "server": {
            "mutate": ["EML301", "EML305"],
            "audit": True,
            "exemptAnnotation": False,
            "timeBudget": 8,
            "failureMode": "closed",
            "onTimeout": "admit",
            "ownerControllers": ["system:serviceaccount:training:my-operator"],
            "maxConnections": 1000,
            "platform": {"karpenter": "1.8", "neuron-sdk": "2.24"},
        },
        "serviceMonitor": {"enabled": True, "labels": {"release": "prometheus"}},
    },
}


def render(values: dict) -> list[dict]:
    with helm.Chart.load(str(CHART)) as chart:
        out = chart.render(values, name="eksmllint", namespace=NAMESPACE, is_install=True)
    return [d for text in out.values() for d in yaml.safe_load_all(text) if d]


def kinds_of(docs: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for d in docs:
        out.setdefault(d["kind"], []).append(d)
    return out


def container(docs: list[dict]) -> dict:
    (dep,) = kinds_of(docs)["Deployment"]
    (c,) = dep["spec"]["template"]["spec"]["containers"]
    return c


@pytest.mark.parametrize("case", sorted(CASES))
def test_rendered_chart_is_strictly_valid_and_lint_clean(case, tmp_path):
    docs = render(CASES[case])
    for d in docs:
        if not d["apiVersion"].startswith(CRD_GROUPS):
            kubernetes_validate.validate(d, K8S_VERSION, strict=True)  # raises on any problem
    out = tmp_path / "rendered.yaml"
    out.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    result = lint_paths([str(out)], Config())
    assert not [f for f in result.active if f.severity >= Severity.WARNING], result.active
    r = CliRunner().invoke(cli, ["lint", str(out)])
    assert r.exit_code == 0, r.output


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_server_accepts_every_argument_the_chart_passes(case):
    args = container(render(CASES[case]))["args"]
    ctx = serve_command.make_context("serve", list(args))  # click raises on an unknown flag or value
    assert ctx.params["tls_cert"] == "/etc/eksmllint/tls/tls.crt"
    platform = CASES[case].get("server", {}).get("platform", {})
    assert ctx.params["platform"] == tuple(f"{k}={v}" for k, v in sorted(platform.items()))


def test_defaults_match_webhook_manifests():
    docs = render({})
    kinds = kinds_of(docs)
    assert "MutatingWebhookConfiguration" not in kinds and "ServiceMonitor" not in kinds
    ours = kinds_of([d for d in yaml.safe_load_all(manifests.render(NAMESPACE)) if d])
    assert container(docs)["securityContext"] == container([ours["Deployment"][0]])["securityContext"]
    assert kinds["ClusterRole"][0]["rules"] == ours["ClusterRole"][0]["rules"]
    (vwc,) = kinds["ValidatingWebhookConfiguration"]
    (hook,) = vwc["webhooks"]
    (theirs,) = ours["ValidatingWebhookConfiguration"][0]["webhooks"]
    assert hook["rules"] == theirs["rules"] and hook["namespaceSelector"] == theirs["namespaceSelector"]
    assert (
        hook["failurePolicy"] == theirs["failurePolicy"] == "Fail"  # issue 22: see values.yaml
        and vwc["metadata"]["annotations"]["cert-manager.io/inject-ca-from"] == f"{NAMESPACE}/eksmllint-serving"
    )
    assert {c["spec"]["secretName"] for c in kinds["Certificate"] if not c["spec"].get("isCA")} == {"eksmllint-tls"}


def test_values_land_where_they_should():
    kinds = kinds_of(render(CASES["everything"]))
    (dep,) = kinds["Deployment"]
    pod = dep["spec"]["template"]["spec"]
    assert dep["spec"]["replicas"] == 3 and kinds["PodDisruptionBudget"][0]["spec"]["minAvailable"] == 2
    assert pod["priorityClassName"] == "system-cluster-critical"
    assert pod["tolerations"][0]["key"] == "dedicated" and pod["nodeSelector"] == {"kubernetes.io/os": "linux"}
    args = container([dep])["args"]
    assert {
        "--audit",
        "--no-exempt-annotation",
        "--mutate=EML301,EML305",
        "--failure-mode=closed",
        "--on-timeout=admit",
        "--owner-controller=system:serviceaccount:training:my-operator",
        "--time-budget=8",
        "--max-connections=1000",
    } <= set(args)
    for kind, path in (("ValidatingWebhookConfiguration", "/validate"), ("MutatingWebhookConfiguration", "/mutate")):
        (cfg,) = kinds[kind]
        (hook,) = cfg["webhooks"]
        assert hook["failurePolicy"] == "Ignore" and hook["timeoutSeconds"] == 10
        assert hook["clientConfig"]["service"]["path"] == path
        (names,) = [
            e for e in hook["namespaceSelector"]["matchExpressions"] if e["key"] == "kubernetes.io/metadata.name"
        ]
        assert names["operator"] == "NotIn" and set(names["values"]) == {
            NAMESPACE,
            "kube-system",
            "cert-manager",
            "monitoring",
        }
    assert all(r["operations"] == ["CREATE"] for r in kinds["MutatingWebhookConfiguration"][0]["webhooks"][0]["rules"])
    (sm,) = kinds["ServiceMonitor"]
    assert sm["metadata"]["labels"]["release"] == "prometheus"
    (endpoint,) = sm["spec"]["endpoints"]
    assert endpoint["scheme"] == "https" and endpoint["path"] == "/metrics"
    assert endpoint["tlsConfig"]["ca"]["secret"] == {"name": "eksmllint-tls", "key": "ca.crt"}


def test_a_provided_tls_secret_replaces_cert_manager():
    kinds = kinds_of(render(CASES["provided-secret"]))
    assert "Certificate" not in kinds and "Issuer" not in kinds
    (vwc,) = kinds["ValidatingWebhookConfiguration"]
    assert "annotations" not in vwc["metadata"]
    assert vwc["webhooks"][0]["clientConfig"]["caBundle"] == CA_BUNDLE
    pod = kinds["Deployment"][0]["spec"]["template"]["spec"]
    assert {v["name"]: v for v in pod["volumes"]}["tls"]["secret"]["secretName"] == "my-tls"


@pytest.mark.parametrize(
    "values,fragment",
    [
        ({"server": {"timeBudget": 5}}, "timeBudget must be below"),
        ({"tls": {"certManager": {"enabled": False}}}, "caBundle is required"),
    ],
)
def test_inconsistent_values_are_refused(values, fragment):
    with pytest.raises(helm.HelmError, match=fragment):
        render(values)


def test_helm_lint_passes():
    report = helm.lint(str(CHART), strict=True, namespace=NAMESPACE)
    assert not report["errors"], report
    assert not [m for m in report["messages"] if m["severity"] >= 2], report


def test_chart_data_is_the_generated_output():
    """The chart reads the webhook rules and RBAC from this file; regenerate with
    `python -m eksmllint.server.manifests charts/eksmllint/files/generated.yaml`."""
    assert (CHART / "files" / "generated.yaml").read_text() == manifests.dump_chart_data()
