"""Tests of the 0xx input rules (EML002 schema-invalid, EML003 api-deprecated, EML004 unknown-kind)
beyond their fixtures: severities, fixes, option handling, and one verdict per object."""

from __future__ import annotations

from builders import said

from eksmllint.config import parse_config
from eksmllint.core.engine import lint_text
from eksmllint.core.finding import SetValue, Severity
from eksmllint.platform import components


def lint(text: str, *codes: str, **cfg):
    result = lint_text(text, parse_config({"select": list(codes)} | cfg, "test"), name="m.yaml")
    assert not [f for f in result.findings if f.code in ("EML000", "EML001")]
    return [f for f in result.active if f.code in codes]


def _ops(finding):
    return finding.fix.ops if finding.fix else ()


# --- EML002 / EML003 / EML004 ---------------------------------------------------------------


def test_api_deprecated_severity_and_fix():
    removed = lint("apiVersion: batch/v1beta1\nkind: CronJob\nmetadata: {name: a}\n", "EML003")
    assert removed[0].severity is Severity.ERROR
    assert _ops(removed[0]) == (SetValue(("apiVersion",), "batch/v1"),)
    pdb = lint("apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: a}\n", "EML003")
    assert pdb[0].severity is Severity.ERROR and pdb[0].fix is None  # not a pure rename
    mpi = lint("apiVersion: kubeflow.org/v1\nkind: MPIJob\nmetadata: {name: a}\n", "EML003")
    assert mpi[0].severity is Severity.WARNING and mpi[0].fix is None
    # Karpenter v1beta1 is served up to Kubernetes 1.31 (Karpenter 1.0), not from 1.32.
    np = "apiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata: {name: a}\n"
    assert lint(np, "EML003", **{"kubernetes-version": "1.31"})[0].severity is Severity.WARNING
    assert lint(np, "EML003", **{"kubernetes-version": "1.32"})[0].severity is Severity.ERROR


def test_schema_rules_give_one_verdict_per_object():
    codes = ("EML002", "EML003", "EML004")
    removed = lint("apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: a}\n", *codes)
    assert [f.code for f in removed] == ["EML003"]
    invented = lint("apiVersion: slinky.slurm.net/v1alpha1\nkind: SlurmCluster\nmetadata: {name: a}\n", *codes)
    assert [f.code for f in invented] == ["EML004"] and "deprecated" in said(invented[0])
    typo = lint("apiVersion: v1\nkind: ConfigMapp\nmetadata: {name: a}\n", *codes)
    assert [f.code for f in typo] == ["EML002"] and "did you mean ConfigMap" in said(typo[0])


def test_schema_invalid_missing_api_version_and_out_of_range_version():
    found = lint("kind: ConfigMap\nmetadata: {name: a}\n", "EML002")
    assert len(found) == 1 and "no apiVersion" in said(found[0])
    old = lint(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\nbogus: 1\n", "EML002", **{"kubernetes-version": "1.20"}
    )
    assert len(old) == 1 and "bogus" in said(old[0])  # validated against the nearest bundled schema


def test_unknown_kind_ignore_groups_option():
    argo = "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: a}\n"
    assert not lint(argo, "EML004")
    found = lint(argo, "EML004", rules={"EML004": {"ignore-groups": []}})
    assert len(found) == 1 and found[0].severity is Severity.INFO


CLUSTER_QUEUE = (
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: cq}\nspec:\n  namespaceSelector: {}\n"
)


def test_kueue_v1beta1_follows_the_platform_kueue_release():
    codes = ("EML002", "EML003", "EML004")
    default = lint(CLUSTER_QUEUE, *codes)
    assert [f.code for f in default] == ["EML003"] and default[0].severity is Severity.WARNING
    assert f"Kueue {components()['kueue'].newest} (assumed; set platform.kueue)" in said(default[0])
    # before v0.15 v1beta2 is not served: v1beta1 is the current API, nothing to say
    assert not lint(CLUSTER_QUEUE, *codes, platform={"kueue": "0.14"})
    deprecated = lint(CLUSTER_QUEUE, *codes, platform={"kueue": "0.15"})
    assert deprecated[0].severity is Severity.WARNING and "Kueue 0.15 (from the config)" in said(deprecated[0])
    removed = lint(CLUSTER_QUEUE, *codes, platform={"kueue": "v0.20.1"})
    assert [f.code for f in removed] == ["EML003"] and removed[0].severity is Severity.ERROR
    assert "no longer served (removed in Kueue v0.20)" in said(removed[0])


# --- EML008 dra-devices-not-counted ---------------------------------------------------------


def claim_template(device_class: str, api: str = "resource.k8s.io/v1") -> str:
    request = (
        f"exactly: {{deviceClassName: {device_class}, count: 8}}"
        if api.endswith("/v1")
        else f"deviceClassName: {device_class}"
    )
    return f"""apiVersion: {api}
kind: ResourceClaimTemplate
metadata: {{name: devices, namespace: ml}}
spec:
  spec:
    devices:
      requests:
        - name: devs
          {request}
---
"""


def claiming_job(limits: str = "", refer: bool = True) -> str:
    claims = "\n            claims: [{name: devs}]" if refer else ""
    return f"""apiVersion: batch/v1
kind: Job
metadata: {{name: train, namespace: ml}}
spec:
  template:
    spec:
      restartPolicy: Never
      resourceClaims:
        - name: devs
          resourceClaimTemplateName: devices
      containers:
        - name: trainer
          image: trainer:1.0
          resources:{claims}
            limits:
              cpu: "8"{limits}
"""


def test_dra_claims_for_devices_are_said_to_be_uncounted():
    found = lint(claim_template("gpu.nvidia.com") + claiming_job(), "EML008", **{"kubernetes-version": "1.34"})
    assert len(found) == 1 and found[0].severity is Severity.INFO
    assert "'devs': template devices, gpu.nvidia.com" in said(found[0]) and "requests (none)" in said(found[0])
    assert found[0].location.path == ("spec", "template", "spec", "resourceClaims", 0)
    # resource.k8s.io/v1beta1 names the class on the request itself
    beta = claim_template("neuron.aws.com", "resource.k8s.io/v1beta1") + claiming_job()
    assert len(lint(beta, "EML008", **{"kubernetes-version": "1.33"})) == 1
    # the template is not in the run: its class is unknown, so nothing is said (precision first)
    assert not lint(claiming_job(), "EML008")


def test_dra_claims_for_other_things_or_unused_claims_are_silent():
    gpus = "\n              nvidia.com/gpu: 4"
    channel = claim_template("compute-domain-default-channel.nvidia.com") + claiming_job(gpus)
    assert not lint(channel, "EML008", **{"kubernetes-version": "1.34"})
    assert not lint(claiming_job(gpus), "EML008")  # class unknown, devices counted from the plugin
    assert not lint(claim_template("gpu.nvidia.com") + claiming_job(refer=False), "EML008")  # no container uses it
