"""Manifests and objects the tests build from (conftest puts tests/ on sys.path)."""

from __future__ import annotations

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
