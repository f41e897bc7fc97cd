"""Objects the tests build from (conftest puts tests/ on sys.path): Kubernetes objects as plain dicts,
small by default, each part overridable; ``manifest`` writes them as one YAML stream.

Tests that assert line numbers keep their own literal YAML text: a builder's layout is not theirs
to pin."""

from __future__ import annotations

from typing import Any

import yaml

PYTORCH_IMAGE = "763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training:2.3.0-gpu-py311-cu121-ubuntu20.04-ec2"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
CAPACITY_TYPE = "karpenter.sh/capacity-type"


def manifest(*objects: dict[str, Any]) -> str:
    """The objects as one YAML stream (``---`` between documents), keys in the order built."""
    return yaml.safe_dump_all(objects, sort_keys=False)


def container(
    name: str = "train",
    image: str = PYTORCH_IMAGE,
    *,
    command: list[str] | None = None,
    gpus: int | None = None,
    limits: dict[str, Any] | None = None,
    **fields: Any,
) -> dict[str, Any]:
    """A container; ``gpus`` adds an ``nvidia.com/gpu`` limit (to ``limits`` when given)."""
    out: dict[str, Any] = {"name": name, "image": image}
    if command is not None:
        out["command"] = command
    limits = dict(limits or {})
    if gpus is not None:
        limits["nvidia.com/gpu"] = gpus
    if limits:
        out["resources"] = {"limits": limits}
    out.update(fields)
    return out


def pod_template(*containers: dict[str, Any], labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    """A pod template (``metadata`` only when labelled); ``spec`` fields follow the containers."""
    template: dict[str, Any] = {"metadata": {"labels": labels}} if labels else {}
    template["spec"] = {**spec, "containers": list(containers or [container()])}
    return template


def _object(api: str, kind: str, name: str, namespace: str | None, spec: dict[str, Any]) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if namespace:
        metadata["namespace"] = namespace
    return {"apiVersion": api, "kind": kind, "metadata": metadata, "spec": spec}


def pod(name: str = "p", *containers: dict[str, Any], namespace: str | None = "ml", **spec: Any) -> dict[str, Any]:
    return _object("v1", "Pod", name, namespace, pod_template(*containers, **spec)["spec"])


def job(
    name: str = "j", template: dict[str, Any] | None = None, *, namespace: str | None = None, **spec: Any
) -> dict[str, Any]:
    """A batch/v1 Job: ``spec`` fields (parallelism, completionMode, ...) before the template."""
    return _object("batch/v1", "Job", name, namespace, {**spec, "template": template or pod_template()})


def replica(replicas: int, template: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """One replica spec of a Kubeflow job (Master, Worker, Launcher)."""
    return {"replicas": replicas, **fields, "template": template}


def pytorchjob(
    name: str = "p",
    master: dict[str, Any] | None = None,
    worker: dict[str, Any] | None = None,
    *,
    namespace: str | None = None,
    **spec: Any,
) -> dict[str, Any]:
    """A PyTorchJob with a Master and a Worker replica spec (each omitted when None)."""
    specs = {role: r for role, r in (("Master", master), ("Worker", worker)) if r is not None}
    return _object("kubeflow.org/v1", "PyTorchJob", name, namespace, {**spec, "pytorchReplicaSpecs": specs})


def mpijob(
    name: str = "m", launcher: dict[str, Any] | None = None, worker: dict[str, Any] | None = None, **spec: Any
) -> dict[str, Any]:
    specs = {role: r for role, r in (("Launcher", launcher), ("Worker", worker)) if r is not None}
    return _object("kubeflow.org/v2beta1", "MPIJob", name, None, {**spec, "mpiReplicaSpecs": specs})


def requirement(key: str, *values: str, operator: str = "In") -> dict[str, Any]:
    return {"key": key, "operator": operator, "values": list(values)}


def nodepool(
    name: str = "gpu",
    *requirements: dict[str, Any],
    node_class: str = "default",
    template: dict[str, Any] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    """A Karpenter v1 NodePool: ``template`` fields (taints, expireAfter, ...) after the node class
    reference, ``spec`` fields (disruption, limits, ...) after the template."""
    template_spec: dict[str, Any] = {"requirements": list(requirements)}
    template_spec["nodeClassRef"] = {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": node_class}
    template_spec.update(template or {})
    return _object("karpenter.sh/v1", "NodePool", name, None, {"template": {"spec": template_spec}, **spec})


def ec2nodeclass(name: str = "default", *ami_terms: dict[str, Any], **spec: Any) -> dict[str, Any]:
    """An EC2NodeClass selecting its AMI by ``ami_terms`` (default: the al2023@latest alias)."""
    terms = list(ami_terms) or [{"alias": "al2023@latest"}]
    return _object("karpenter.k8s.aws/v1", "EC2NodeClass", name, None, {"amiSelectorTerms": terms, **spec})


# A small platform: a tainted GPU pool and its node class, a PyTorchJob that tolerates the taint
# and mounts a PVC and a ConfigMap, a Job that does not tolerate it, a device plugin, and two
# objects nothing refers to.
PLATFORM = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: gpu
spec:
  template:
    spec:
      requirements:
        - key: node.kubernetes.io/instance-type
          operator: In
          values: ["p4d.24xlarge"]
        - key: karpenter.sh/capacity-type
          operator: In
          values: ["on-demand"]
      taints:
        - key: nvidia.com/gpu
          value: "true"
          effect: NoSchedule
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: gpu-class
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: gpu-class
spec:
  amiFamily: AL2023
  amiSelectorTerms: [{alias: al2023@v20250715}]
  role: KarpenterNodeRole
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: fsx
provisioner: fsx.csi.aws.com
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: ckpt
  namespace: train
spec:
  storageClassName: fsx
  accessModes: [ReadWriteMany]
  resources:
    requests:
      storage: 1200Gi
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: nccl-env
  namespace: train
data:
  NCCL_DEBUG: WARN
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: "odd \\"quoted\\" [name] #1 <b>"
  namespace: train
data: {}
---
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: llama
  namespace: train
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
          containers:
            - name: pytorch
              image: public.ecr.aws/pytorch/pytorch:2.3.1
              envFrom: [{configMapRef: {name: nccl-env}}]
              resources:
                limits: {nvidia.com/gpu: 8, cpu: "90", memory: 1000Gi}
              volumeMounts: [{name: ckpt, mountPath: /ckpt}]
          volumes:
            - name: ckpt
              persistentVolumeClaim: {claimName: ckpt}
    Worker:
      replicas: 3
      template:
        spec:
          tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
          containers:
            - name: pytorch
              image: public.ecr.aws/pytorch/pytorch:2.3.1
              resources:
                limits: {nvidia.com/gpu: 8, cpu: "90", memory: 1000Gi}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: eval
  namespace: train
spec:
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {karpenter.sh/nodepool: gpu}
      containers:
        - name: eval
          image: public.ecr.aws/pytorch/pytorch:2.3.1
          resources:
            limits: {nvidia.com/gpu: 1, cpu: "4", memory: 32Gi}
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: nvidia-device-plugin
  namespace: kube-system
spec:
  selector: {matchLabels: {app: nvidia-device-plugin}}
  template:
    metadata:
      labels: {app: nvidia-device-plugin}
    spec:
      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
      containers:
        - name: plugin
          image: nvcr.io/nvidia/k8s-device-plugin:v0.17.0
---
apiVersion: v1
kind: Namespace
metadata:
  name: train
"""


def said(finding) -> str:
    """What a finding says in full: its one-line message, then its detail (why and how), for
    assertions that look for a phrase wherever the rule put it."""
    return f"{finding.message} {finding.detail}" if finding.detail else finding.message
