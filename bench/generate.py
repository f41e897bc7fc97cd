"""Deterministic benchmark corpus: a realistic mix of training-platform manifests.

    python bench/generate.py --docs 10000 --out bench/out/corpus-10k

Writes many files of a few documents each (NodePools, EC2NodeClasses, PyTorchJobs, MPIJobs,
Volcano Jobs, RayClusters, Indexed Jobs, ConfigMaps, PVCs), about a third with problems.
"""

from __future__ import annotations

import argparse
import random
import shutil
from pathlib import Path

GPU_TYPES = ["p4d.24xlarge", "p5.48xlarge", "g5.12xlarge", "g6e.12xlarge", "p4de.24xlarge"]
ZONES = ["us-west-2a", "us-west-2b", "us-west-2c"]


def nodepool(i: int, rnd: random.Random) -> str:
    bad = rnd.random() < 0.3
    zones = ZONES if bad else [rnd.choice(ZONES)]
    itype = rnd.choice(GPU_TYPES)
    policy = "WhenEmptyOrUnderutilized" if bad else "WhenEmpty"
    zone_list = "".join(f"\n            - {z}" for z in zones)
    return f"""apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: gpu-pool-{i}
spec:
  template:
    metadata:
      labels:
        pool: gpu-pool-{i}
    spec:
      requirements:
        - key: node.kubernetes.io/instance-type
          operator: In
          values: ["{itype}"]
        - key: karpenter.sh/capacity-type
          operator: In
          values: ["on-demand"]
        - key: topology.kubernetes.io/zone
          operator: In
          values:{zone_list}
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: gpu-class-{i}
      expireAfter: Never
      taints:
        - key: nvidia.com/gpu
          value: "true"
          effect: NoSchedule
  limits:
    nvidia.com/gpu: 256
  disruption:
    consolidationPolicy: {policy}
    consolidateAfter: 10m
    budgets:
      - nodes: "0"
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: gpu-class-{i}
spec:
  amiFamily: {"AL2" if bad else "AL2023"}
  amiSelectorTerms:
    - alias: {"al2@latest" if bad else "al2023@v20250715"}
  role: KarpenterNodeRole-ml
  subnetSelectorTerms:
    - tags: {{karpenter.sh/discovery: ml}}
  securityGroupSelectorTerms:
    - tags: {{karpenter.sh/discovery: ml}}
  blockDeviceMappings:
    - deviceName: /dev/xvda
      ebs: {{volumeSize: 500Gi, volumeType: gp3, encrypted: {str(not bad).lower()}}}
"""


def container(rnd: random.Random, gpus: int, bad: bool, name: str = "pytorch") -> str:
    nproc = gpus * 2 if bad and rnd.random() < 0.5 else gpus
    shm = (
        ""
        if bad
        else """
              volumeMounts:
                - name: dshm
                  mountPath: /dev/shm"""
    )
    return f"""            - name: {name}
              image: {"pytorch/pytorch:latest" if bad else "pytorch/pytorch:2.3.0-cuda12.1-cudnn8-runtime"}
              command: ["torchrun", "--nproc_per_node={nproc}", "--nnodes=2", "train.py", "--bf16"]
              resources:
                limits:
                  nvidia.com/gpu: {gpus}
                  cpu: "40"
                  memory: 160Gi{shm}"""


def volumes(bad: bool) -> str:
    return (
        ""
        if bad
        else """
          volumes:
            - name: dshm
              emptyDir: {medium: Memory, sizeLimit: 32Gi}"""
    )


def pytorchjob(i: int, rnd: random.Random) -> str:
    bad = rnd.random() < 0.3
    gpus = rnd.choice([4, 8])
    sched = "" if bad else "\n  runPolicy:\n    schedulingPolicy:\n      minAvailable: 2"
    return f"""apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: pretrain-{i}
  namespace: training
spec:{sched}
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          nodeSelector: {{node.kubernetes.io/instance-type: p4d.24xlarge}}
          tolerations: [{{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}}]
          containers:
{container(rnd, gpus, bad)}{volumes(bad)}
    Worker:
      replicas: 1
      template:
        spec:
          nodeSelector: {{node.kubernetes.io/instance-type: p4d.24xlarge}}
          tolerations: [{{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}}]
          containers:
{container(rnd, gpus, bad)}{volumes(bad)}
"""


def volcano(i: int, rnd: random.Random) -> str:
    bad = rnd.random() < 0.3
    return f"""apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: vc-train-{i}
  namespace: training
spec:
  minAvailable: {1 if bad else 2}
  schedulerName: volcano
  queue: training
  policies:
    - event: PodEvicted
      action: RestartJob
  tasks:
    - name: worker
      replicas: 2
      template:
        spec:
          restartPolicy: Never
          tolerations: [{{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}}]
          containers:
{container(rnd, 8, bad)}{volumes(bad)}
"""


def mpijob(i: int, rnd: random.Random) -> str:
    bad = rnd.random() < 0.3
    slots = 8
    np_ = 16 if not bad else 32
    return f"""apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: nccl-tests-{i}
  namespace: training
spec:
  slotsPerWorker: {slots}
  runPolicy:
    cleanPodPolicy: Running
    schedulingPolicy:
      minAvailable: 3
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
            - name: launcher
              image: public.ecr.aws/hpc-cloud/nccl-tests:v2.13.8
              command: ["mpirun", "-np", "{np_}", "all_reduce_perf", "-b", "8", "-e", "2G"]
              resources:
                limits: {{cpu: "2", memory: 4Gi}}
    Worker:
      replicas: 2
      template:
        spec:
          containers:
            - name: worker
              image: public.ecr.aws/hpc-cloud/nccl-tests:v2.13.8
              resources:
                limits:
                  nvidia.com/gpu: {slots}
                  vpc.amazonaws.com/efa: 4
                  cpu: "90"
                  memory: 1000Gi
              volumeMounts:
                - name: dshm
                  mountPath: /dev/shm
          volumes:
            - name: dshm
              emptyDir: {{medium: Memory, sizeLimit: 64Gi}}
"""


def raycluster(i: int, rnd: random.Random) -> str:
    return f"""apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: ray-{i}
  namespace: training
spec:
  headGroupSpec:
    rayStartParams: {{num-cpus: "0"}}
    template:
      spec:
        containers:
          - name: ray-head
            image: rayproject/ray-ml:2.9.0-py310-gpu
            resources:
              limits: {{cpu: "8", memory: 32Gi}}
  workerGroupSpecs:
    - groupName: gpu
      replicas: {rnd.choice([1, 2, 4])}
      minReplicas: 1
      maxReplicas: 8
      rayStartParams: {{}}
      template:
        spec:
          containers:
            - name: ray-worker
              image: rayproject/ray-ml:2.9.0-py310-gpu
              resources:
                limits: {{nvidia.com/gpu: 8, cpu: "90", memory: 900Gi}}
"""


def indexed(i: int, rnd: random.Random) -> str:
    bad = rnd.random() < 0.3
    mode = "" if bad else "\n  completionMode: Indexed"
    return f"""apiVersion: batch/v1
kind: Job
metadata:
  name: trn-{i}
  namespace: training
spec:{mode}
  completions: 2
  parallelism: 2
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: trainer
          image: 763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training-neuronx:2.1.2-neuronx-py310-sdk2.20.0-ubuntu20.04
          command: ["torchrun", "--nproc_per_node=32", "--nnodes=2", "--node_rank=$(JOB_COMPLETION_INDEX)", "train.py"]
          env:
            - name: JOB_COMPLETION_INDEX
              valueFrom:
                fieldRef: {{fieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}
          resources:
            limits: {{aws.amazon.com/neuron: 16, cpu: "120", memory: 450Gi}}
      nodeSelector: {{node.kubernetes.io/instance-type: trn1.32xlarge}}
"""


def configmap(i: int, rnd: random.Random) -> str:
    return f"""apiVersion: v1
kind: ConfigMap
metadata:
  name: train-config-{i}
  namespace: training
data:
  config.yaml: |
    learning_rate: {rnd.choice(["1e-4", "2e-5"])}
    warmup_ratio: 0.03
"""


def pvc(i: int, rnd: random.Random) -> str:
    return f"""apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data-{i}
  namespace: training
spec:
  accessModes: [ReadWriteMany]
  storageClassName: fsx-lustre
  resources:
    requests:
      storage: 1200Gi
"""


# (generator, documents it yields)
MIX = [
    (nodepool, 2),
    (pytorchjob, 1),
    (mpijob, 1),
    (volcano, 1),
    (raycluster, 1),
    (indexed, 1),
    (configmap, 1),
    (pvc, 1),
]


def generate(docs: int, out: Path, seed: int = 20261202, docs_per_file: int = 4) -> int:
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    rnd = random.Random(seed)
    written = file_no = 0
    while written < docs:
        parts = []
        count = 0
        while count < docs_per_file and written + count < docs:
            gen, n = rnd.choice(MIX)
            parts.append(gen(written + count, rnd))
            count += n
        folder = out / f"team-{file_no % 25:02d}"
        folder.mkdir(exist_ok=True)
        (folder / f"manifests-{file_no:05d}.yaml").write_text("---\n".join(parts), encoding="utf-8")
        written += count
        file_no += 1
    return written


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seed", type=int, default=20261202)
    args = ap.parse_args()
    n = generate(args.docs, args.out, args.seed)
    print(f"wrote {n} documents to {args.out}")


if __name__ == "__main__":
    main()
