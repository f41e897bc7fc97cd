"""Manifests and a lint helper shared by the scheduling (7xx) and storage (9xx) rule tests."""

from __future__ import annotations

import json

from builders import said

from eksmllint.config import Config
from eksmllint.core.engine import lint_text

NODEPOOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: {name}
spec:
  template:
    spec:
      requirements:
        - key: node.kubernetes.io/instance-type
          operator: In
          values: [{types}]
        - key: topology.kubernetes.io/zone
          operator: In
          values: ["us-west-2a"]
{capacity}{taints}      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: default
"""
GPU_TAINT = """\
      taints:
        - key: nvidia.com/gpu
          value: "true"
          effect: NoSchedule
"""


def pool(name: str, types: str, tainted: bool = True, capacity: str | None = None) -> str:
    """A NodePool of instance ``types`` in us-west-2a; ``capacity``: a karpenter.sh/capacity-type
    requirement (``"In [reserved, on-demand]"``), none when None."""
    extra = ""
    if capacity is not None:
        op, _, values = capacity.partition(" ")
        extra = f"        - key: karpenter.sh/capacity-type\n          operator: {op}\n          values: {values}\n"
    return NODEPOOL.format(name=name, types=types, capacity=extra, taints=GPU_TAINT if tainted else "")


def job(name: str, body: str, namespace: str | None = "ml", kind: str = "Job", api: str = "batch/v1") -> str:
    ns = f"\n  namespace: {namespace}" if namespace else ""
    spec = "\n".join("      " + line if line else line for line in body.strip("\n").splitlines())
    return f"""\
apiVersion: {api}
kind: {kind}
metadata:
  name: {name}{ns}
spec:
  template:
    spec:
{spec}
"""


def fsx_class(name: str, **parameters: str) -> str:
    """An FSx for Lustre StorageClass with these (string) parameters."""
    params = "".join(f"  {k}: {json.dumps(v)}\n" for k, v in parameters.items())
    return (
        f"apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: {name}\n"
        f"provisioner: fsx.csi.aws.com\n" + (f"parameters:\n{params}" if params else "")
    )


def pvc(name: str, storage_class: str, size: str | None = None, namespace: str = "ml") -> str:
    """A PersistentVolumeClaim of ``storage_class`` (requesting ``size`` when given)."""
    text = (
        f"apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: {name}\n  namespace: {namespace}\n"
        f"spec:\n  storageClassName: {storage_class}\n"
    )
    return text + (f"  resources:\n    requests:\n      storage: {size}\n" if size else "")


GPU_POD = """\
restartPolicy: Never
containers:
  - name: c
    image: example.com/train:1.0
    resources:
      limits:
        nvidia.com/gpu: 1
"""
CPU_POD = """\
restartPolicy: Never
containers:
  - name: c
    image: example.com/launcher:1.0
"""


def docs(*parts: str) -> str:
    return "---\n".join(parts)


def findings(text: str, code: str, cfg: Config | None = None):
    cfg = (cfg or Config()).model_copy(update={"select": (code,)})
    result = lint_text(text, cfg, name="test.yaml")
    assert not [f for f in result.active if f.code == "EML000"], [said(f) for f in result.active]
    return [f for f in result.active if f.code == code]


# Malformed documents of every kind these families read: no rule may crash (an EML000 finding).
MALFORMED = [
    "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: p}\nspec: {template: {spec: {taints: 3, requirements: [1, {key: 5}]}}}\n",
    "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: n}\nspec: {amiFamily: 7, amiSelectorTerms: [x, {alias: 3}], blockDeviceMappings: [1, {ebs: 2}, {ebs: {encrypted: [1]}}]}\n",
    "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: s}\nprovisioner: fsx.csi.aws.com\nparameters: {deploymentType: [1], perUnitStorageThroughput: {a: 1}}\n",
    "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c}\nspec: {storageClassName: s, resources: {requests: {storage: lots}}}\n",
    "apiVersion: fsx.services.k8s.aws/v1alpha1\nkind: FileSystem\nmetadata: {name: f}\nspec: {lustreConfiguration: 5, storageCapacity: x}\n",
    "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: ml}\nspec: {template: {spec: {nodeSelector: {topology.kubernetes.io/zone: z}, tolerations: 5, affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [1, {matchExpressions: [2, {key: k}]}]}}}, volumes: [1, {persistentVolumeClaim: 2}, {persistentVolumeClaim: {claimName: c}}, {ephemeral: 3}], containers: [{name: c, args: [--output_dir, /x], env: [1, {name: CKPT_DIR, value: 3}], volumeMounts: [1, {name: 2, mountPath: 3}]}]}}}\n",
    "apiVersion: batch/v1\nkind: Job\nmetadata: {name: d, namespace: ml}\nspec: {template: {spec: {nodeSelector: {karpenter.k8s.aws/capacity-reservation-type: [x]}, resourceClaims: [1, {name: 3}, {name: null}], containers: [{name: c, resources: {claims: 4}}]}}}\n",
    "apiVersion: batch/v1\nkind: Job\nmetadata: {name: e, namespace: ml}\nspec: {template: {spec: {resourceClaims: 7, affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: karpenter.k8s.aws/capacity-reservation-id, operator: Exists}]}]}}}, containers: [{name: c}]}}}\n",
]
