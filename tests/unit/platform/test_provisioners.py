"""The provisioner table (eksmllint/platform/provisioners.yaml) and what placement reads from it:
nodeClassRef by group + kind + name, Auto Mode labels, HyperPod ``ml.*`` types, the open world."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from builders import container, manifest, nodepool, pod_template, requirement, said
from pydantic import ValidationError

from eksmllint.config import Config
from eksmllint.core.engine import lint_text
from eksmllint.platform.provisioners import DATA, ProvisionerTable, provisioners


def findings(text: str, *codes: str) -> list:
    result = lint_text(text, Config().model_copy(update={"select": (*codes, "EML000")}), name="t.yaml")
    assert not [f for f in result.active if f.code == "EML000"], [f.message for f in result.active]
    return [f for f in result.active if f.code in codes]


def auto_pool(name: str, *reqs: dict[str, Any], node_class: str = "default", **template: Any) -> dict[str, Any]:
    spec = {
        "nodeClassRef": {"group": "eks.amazonaws.com", "kind": "NodeClass", "name": node_class},
        "requirements": list(reqs),
        **template,
    }
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": name},
        "spec": {"template": {"spec": spec}},
    }


def gpu_job(selector: dict[str, str], gpus: int = 8, efa: int = 0, name: str = "train") -> dict[str, Any]:
    res = {"nvidia.com/gpu": gpus, **({"vpc.amazonaws.com/efa": efa} if efa else {})}
    tpl = pod_template(container(limits=res), nodeSelector=selector, restartPolicy="Never")
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": {"template": tpl},
    }


# --- the table --------------------------------------------------------------------------------
def test_every_row_cites_a_source_and_nodepool_forms_name_their_node_class():
    table = provisioners()
    assert table.default.name == "karpenter"
    for p in table.provisioners.values():
        assert p.source.startswith("http"), p.name
        if p.kind == "nodepool":
            assert p.node_class is not None
    assert table.by_node_class("eks.amazonaws.com", "NodeClass").name == "eks-auto-mode"
    assert table.by_node_class("karpenter.k8s.aws", "EC2NodeClass").name == "karpenter"
    assert table.by_node_class(None, None).name == "karpenter"  # a v1beta1 pool names only the class
    assert table.by_node_class("karpenter.azure.com", "AKSNodeClass") is None


@pytest.mark.parametrize(
    ("edit", "error"),
    [
        (lambda d: d["provisioners"]["eks-auto-mode"].pop("node-class"), "names its node-class"),
        (lambda d: d["provisioners"]["fargate"].pop("why"), "says why"),
        (
            lambda d: d["provisioners"]["eks-auto-mode"].update(
                {"node-class": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass"}}
            ),
            "claimed by",
        ),
        (lambda d: d["provisioners"]["karpenter"].update({"colour": "blue"}), "colour"),
    ],
)
def test_a_malformed_table_is_refused(edit, error):
    data = yaml.safe_load(DATA.read_text(encoding="utf-8"))
    edit(data)
    with pytest.raises(ValidationError, match=error):
        ProvisionerTable.model_validate(data)


def test_an_alias_is_one_data_row():
    """Auto Mode's instance labels are rows of label-aliases, read by the catalogue's matching."""
    from eksmllint.catalogue import LABEL_ALIASES, get_catalogue

    assert LABEL_ALIASES["eks.amazonaws.com/instance-gpu-name"] == "karpenter.k8s.aws/instance-gpu-name"
    names = {it.name for it in get_catalogue().matching([("eks.amazonaws.com/instance-family", "In", ("p5",))])}
    assert "p5.48xlarge" in names


# --- reproductions from issue 21 ------------------------------------------------------------------
def test_auto_mode_pool_is_not_matched_by_name_to_an_ec2nodeclass():
    """A false EML101 on a public repository: an Auto Mode pool resolved by name to an unrelated
    EC2NodeClass whose efa-only interfaces made it 'a pool for EFA training by its own definition'."""
    efa_class = {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": "default"},
        "spec": {
            "amiSelectorTerms": [{"alias": "al2023@latest"}],
            "networkInterfaces": [{"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"}]
            + [{"networkCardIndex": i, "deviceIndex": 1, "interfaceType": "efa-only"} for i in range(1, 4)],
        },
    }
    pool = auto_pool("gpu", requirement("node.kubernetes.io/instance-type", "p5.48xlarge"))
    assert findings(manifest(pool, efa_class), "EML101") == []
    karpenter = nodepool("gpu", requirement("node.kubernetes.io/instance-type", "p5.48xlarge"))
    assert findings(manifest(karpenter, efa_class), "EML101"), "the same pool under Karpenter is judged"


def test_auto_mode_pool_beside_a_karpenter_pool_is_no_false_taint_finding():
    """A false EML701: a pod selecting a Karpenter label cannot land on an Auto Mode pool (its nodes
    carry eks.amazonaws.com/instance-* instead), so that pool's taint is not what keeps it Pending."""
    auto = auto_pool(
        "auto-gpu",
        requirement("eks.amazonaws.com/instance-category", "p"),
        taints=[{"key": "nvidia.com/gpu", "effect": "NoSchedule"}],
    )
    karpenter = nodepool("g5", requirement("node.kubernetes.io/instance-type", "g5.2xlarge"))
    job = gpu_job({"karpenter.k8s.aws/instance-family": "p5"})
    found = findings(manifest(auto, karpenter, job), "EML701", "EML702")
    assert [f.code for f in found] == ["EML702"]
    assert "auto-gpu" not in found[0].message, "only the Karpenter pools are the pod's relevant set"


def test_auto_mode_labels_are_read_as_the_catalogue_keys():
    auto = auto_pool("auto-gpu", requirement("eks.amazonaws.com/instance-family", "g5"))
    job = gpu_job({"eks.amazonaws.com/instance-gpu-name": "h100"})
    [f] = findings(manifest(auto, job), "EML702")
    assert "auto-gpu" in said(f) and "EKS Auto Mode" in said(f)
    assert findings(manifest(auto, gpu_job({"eks.amazonaws.com/instance-gpu-name": "a10g"})), "EML702") == []


def test_hyperpod_ml_type_gets_efa_and_device_math_beside_nodepools():
    """A pod pinned to ml.p5en.48xlarge is judged on the EC2 twin, NodePools in the run or not."""
    job = gpu_job({"node.kubernetes.io/instance-type": "ml.p5en.48xlarge"}, gpus=16, efa=64)
    pool = nodepool("g5", requirement("node.kubernetes.io/instance-type", "g5.2xlarge"))
    for text in (manifest(job), manifest(pool, job)):
        codes = sorted({f.code for f in findings(text, "EML102", "EML602", "EML702")})
        assert codes == ["EML102", "EML602"], codes


def test_a_pod_aimed_at_an_unmodelled_form_is_said_once_and_not_judged():
    hp = {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": "hp"},
        "spec": {
            "template": {
                "spec": {
                    "nodeClassRef": {
                        "group": "karpenter.sagemaker.amazonaws.com",
                        "kind": "HyperpodNodeClass",
                        "name": "x",
                    },
                    "requirements": [requirement("node.kubernetes.io/instance-type", operator="Exists")],
                }
            }
        },
    }
    hp2 = {**hp, "metadata": {"name": "hp2"}}
    cpu = nodepool("cpu", requirement("karpenter.k8s.aws/instance-category", "c"))
    job = gpu_job({})
    found = findings(manifest(hp, hp2, cpu, job), "EML004", "EML702")
    assert [f.code for f in found] == ["EML004"], "the GPU pod may land on the HyperPod pools: no EML702"
    assert found[0].message.startswith("not judged: NodePools hp, hp2")
