"""Issue 14 premises: EML603 honours the EC2NodeClass kubelet block (allocatable as Karpenter
computes it with maxPods / kubeReserved / systemReserved / evictionHard)."""

from __future__ import annotations

import textwrap

import pytest
from builders import said

from eksmllint.catalogue import get_catalogue, kubelet_allocatable
from eksmllint.config import Config
from eksmllint.core.engine import lint_text


def lint(text: str, code: str):
    result = lint_text(textwrap.dedent(text), Config(select=(code,)))
    return [f for f in result.active if f.code in (code, "EML000")]


RUN = """\
apiVersion: batch/v1
kind: Job
metadata: {name: ft, namespace: training}
spec:
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {node.kubernetes.io/instance-type: g5.xlarge}
      containers:
        - name: c
          image: nvcr.io/nvidia/pytorch:24.05-py3
          resources: {limits: {nvidia.com/gpu: 1, cpu: "3", memory: MEMORY}}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: a10g}
spec:
  template:
    spec:
      requirements:
        - {key: node.kubernetes.io/instance-type, operator: In, values: [g5.xlarge]}
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: gpu}
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: gpu}
spec:
  amiSelectorTerms: [{alias: al2023@latest}]
  role: KarpenterNodeRole
  subnetSelectorTerms: [{tags: {k: v}}]
  securityGroupSelectorTerms: [{tags: {k: v}}]
  KUBELET
"""


@pytest.mark.parametrize(
    "memory, kubelet, reported",
    [
        ("14000Mi", "", False),  # default allocatable 14162Mi
        ("14500Mi", "", True),
        # small reserves give more: capacity 15155Mi - 100Mi - 50Mi = 15005Mi
        ("14500Mi", "kubelet: {kubeReserved: {memory: 100Mi}, evictionHard: {memory.available: 50Mi}}", False),
        # a large system reserve gives less: 14162Mi - 4096Mi
        ("12000Mi", "kubelet: {systemReserved: {memory: 4Gi}}", True),
        ("12000Mi", "kubelet: {systemReserved: {memory: $(RESERVE)}}", False),  # not literal: unknown
        ("14800Mi", "kubelet: {maxPods: 8}", True),  # 50 pods fewer: +550Mi = 14712Mi
        ("14700Mi", "kubelet: {maxPods: 8}", False),
    ],
)
def test_eml603_uses_the_ec2nodeclass_kubelet_block(memory, kubelet, reported):
    found = lint(RUN.replace("MEMORY", memory).replace("KUBELET", kubelet), "EML603")
    assert bool(found) == reported, [said(f) for f in found]
    if found and kubelet:
        assert "kubelet settings" in said(found[0])


def test_kubelet_allocatable_defaults_reproduce_every_catalogue_row():
    for it in get_catalogue().all():
        assert kubelet_allocatable(it, None) == (it.allocatable_cpu_millis, it.allocatable_memory_mib)
        assert kubelet_allocatable(it, {}) == (it.allocatable_cpu_millis, it.allocatable_memory_mib)


def test_kubelet_allocatable_overrides():
    g5 = get_catalogue().get("g5.xlarge")  # 4 vCPU, 16 GiB, 58 pods
    assert kubelet_allocatable(g5, {"maxPods": 8})[1] == g5.allocatable_memory_mib + 11 * 50
    assert kubelet_allocatable(g5, {"podsPerCore": 2})[1] == g5.allocatable_memory_mib + 11 * 50
    assert kubelet_allocatable(g5, {"kubeReserved": {"cpu": "500m"}})[0] == 3500
    assert kubelet_allocatable(g5, {"systemReserved": {"cpu": "1"}})[0] == g5.allocatable_cpu_millis - 1000
    # 5% of the 15155Mi left after the VM overhead, instead of 100Mi
    assert kubelet_allocatable(g5, {"evictionHard": {"memory.available": "5%"}})[1] == 15155 - 893 - 758
    assert kubelet_allocatable(g5, {"maxPods": "many"}) == (None, None)


# --- EML106: capacity types ---------------------------------------------------------------------
POOL_AND_JOB = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: gpu}
spec:
  template:
    spec:
      requirements:
        - {key: node.kubernetes.io/instance-type, operator: In, values: [p5.48xlarge]}
        REQS
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: gpu}
---
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: pt, namespace: t}
spec:
  pytorchReplicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          nodeSelector: {node.kubernetes.io/instance-type: p5.48xlarge}
          containers:
            - name: pytorch
              image: img:1
              command: ["torchrun", "--nproc_per_node=8", "t.py"]
              resources: {limits: {nvidia.com/gpu: 8, vpc.amazonaws.com/efa: 32}}
"""
CT = "karpenter.sh/capacity-type"
IR = "karpenter.k8s.aws/capacity-reservation-interruptible"


@pytest.mark.parametrize(
    "reqs, expected",
    [
        (f"- {{key: {CT}, operator: In, values: [on-demand]}}", None),
        (f"- {{key: {CT}, operator: In, values: [reserved, on-demand]}}", None),  # ODCRs, Capacity Blocks
        (
            f"- {{key: {CT}, operator: In, values: [reserved]}}\n        - {{key: {IR}, operator: In, values: ['true']}}",
            "interruptible capacity reservations",
        ),
        (
            f"- {{key: {CT}, operator: In, values: [on-demand]}}\n        - {{key: {IR}, operator: In, values: ['true']}}",
            None,
        ),  # interruptible label, but reserved capacity is not allowed
        ("", "no karpenter.sh/capacity-type requirement"),
    ],
)
def test_eml106_reserved_and_interruptible_reservations(reqs, expected):
    found = lint(POOL_AND_JOB.replace("REQS", reqs), "EML106")
    assert [expected in said(f) for f in found] == ([True] if expected else [])
    if expected == "interruptible capacity reservations":
        assert found[0].fix is None  # dropping spot would not help
