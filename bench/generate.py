"""Deterministic benchmark corpus: a realistic mix of training-platform manifests.

    python bench/generate.py --docs 10000 --out bench/out/corpus-10k

Writes many files of a few documents each (NodePools, EC2NodeClasses, PyTorchJobs, MPIJobs,
Volcano Jobs, RayClusters, Indexed Jobs, ConfigMaps, PVCs), about a third with problems.
"""

from __future__ import annotations

import argparse
import random
import shutil
from collections.abc import Callable, Iterator
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


def _mixed_doc(i: int, rnd: random.Random) -> tuple[str, int]:
    gen, n = rnd.choice(MIX)
    return gen(i, rnd), n


# --- the shapes real repositories have (issue 23) -------------------------------------------------
# Each shape is a function (documents wanted, random) -> iterator of (relative path, text, documents
# in it); :func:`generate` writes them until the count is reached.

REF_KINDS = ("ConfigMap", "Secret", "ServiceAccount", "PersistentVolumeClaim", "PriorityClass")


def _referencing_job(i: int, rnd: random.Random, ns: str, names: int) -> str:
    """A Job whose pod names objects created elsewhere (Terraform, another repository): most of the
    names are not in the run, and they look alike (the "did you mean" search's worst case)."""
    k = rnd.randrange(names)
    return f"""apiVersion: batch/v1
kind: Job
metadata:
  name: etl-{i}
  namespace: {ns}
spec:
  template:
    spec:
      restartPolicy: Never
      serviceAccountName: runner-{k:05d}
      priorityClassName: batch-{k % 50:03d}
      containers:
        - name: etl
          image: python:3.12-slim
          command: ["python", "etl.py"]
          envFrom:
            - configMapRef: {{name: train-config-{k:05d}}}
            - secretRef: {{name: db-credentials-{k:05d}}}
          resources:
            limits: {{cpu: "2", memory: 4Gi}}
          volumeMounts:
            - {{name: data, mountPath: /data}}
      volumes:
        - name: data
          persistentVolumeClaim: {{claimName: dataset-{k:05d}}}
"""


def _defined(kind: str, name: str, ns: str) -> str:
    body = {
        "ConfigMap": "data: {a: b}",
        "Secret": "type: Opaque\nstringData: {a: b}",
        "ServiceAccount": "automountServiceAccountToken: false",
        "PersistentVolumeClaim": "spec:\n  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 10Gi}}",
        "PriorityClass": "value: 1000",
    }[kind]
    meta = f"{{name: {name}}}" if kind == "PriorityClass" else f"{{name: {name}, namespace: {ns}}}"
    api = "scheduling.k8s.io/v1" if kind == "PriorityClass" else "v1"
    return f"apiVersion: {api}\nkind: {kind}\nmetadata: {meta}\n{body}\n"


def shape_external_refs(docs: int, rnd: random.Random) -> Iterator[tuple[str, str, int]]:
    """Jobs referencing ConfigMaps, Secrets, ServiceAccounts, PVCs and PriorityClasses, a tenth of
    which the run defines: the rest are dangling references (EML703 reports them)."""
    names = max(100, docs)
    i = 0
    while True:
        parts = []
        for _ in range(4):
            if rnd.random() < 0.1:
                kind = rnd.choice(REF_KINDS)
                stem = {
                    "ConfigMap": "train-config",
                    "Secret": "db-credentials",
                    "ServiceAccount": "runner",
                    "PersistentVolumeClaim": "dataset",
                    "PriorityClass": "batch",
                }[kind]
                parts.append(_defined(kind, f"{stem}-{rnd.randrange(names):05d}", "etl"))
            else:
                parts.append(_referencing_job(i, rnd, "etl", names))
            i += 1
        yield f"team-{i % 25:02d}/jobs-{i:06d}.yaml", "---\n".join(parts), len(parts)


def _pool(j: int) -> str:
    return f"""apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: pool-{j}
spec:
  template:
    metadata:
      labels: {{team: team-{j}}}
    spec:
      requirements:
        - key: node.kubernetes.io/instance-type
          operator: In
          values: ["{GPU_TYPES[j % len(GPU_TYPES)]}"]
        - key: topology.kubernetes.io/zone
          operator: In
          values: ["{ZONES[j % len(ZONES)]}"]
      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}
      taints:
        - {{key: team, value: team-{j}, effect: NoSchedule}}
  limits: {{nvidia.com/gpu: 512}}
  disruption: {{consolidationPolicy: WhenEmpty, consolidateAfter: 10m}}
"""


def shape_nodepools(docs: int, rnd: random.Random) -> Iterator[tuple[str, str, int]]:
    """Hundreds of NodePools (one per team, own label and taint; 50-500) and thousands of pod
    templates, each selecting one team's pool (or, for a fifth, none: placed against every pool)."""
    pools = min(500, max(50, docs // 20))
    yield "platform/nodeclass.yaml", _ec2nodeclass(), 1
    for j in range(0, pools - 1, 4):
        chunk = [_pool(k) for k in range(j, min(j + 4, pools - 1))]
        yield f"platform/pools-{j:05d}.yaml", "---\n".join(chunk), len(chunk)
    i = 0
    while True:
        parts = []
        for _ in range(4):
            team = rnd.randrange(pools - 1)
            pinned = rnd.random() < 0.8
            select = (
                f"\n          nodeSelector: {{team: team-{team}}}"
                f"\n          tolerations: [{{key: team, operator: Equal, value: team-{team}, effect: NoSchedule}}]"
                if pinned
                else ""
            )
            parts.append(
                f"""apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {{name: job-{i}, namespace: team-{team}}}
spec:
  pytorchReplicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:{select}
          containers:
{container(rnd, 8, rnd.random() < 0.3)}
"""
            )
            i += 1
        yield f"team-{i % 25:02d}/jobs-{i:06d}.yaml", "---\n".join(parts), len(parts)


def _ec2nodeclass() -> str:
    return """apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: default
spec:
  amiSelectorTerms: [{alias: al2023@v20250715}]
  role: KarpenterNodeRole-ml
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: ml}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: ml}}]
"""


def shape_namespaces(docs: int, rnd: random.Random) -> Iterator[tuple[str, str, int]]:
    """Hundreds of namespaces (one per 25 documents), each with its Namespace, ServiceAccount,
    ConfigMap and jobs; some jobs name a ConfigMap of another namespace (EML704)."""
    spaces = max(10, -(-docs // 25))
    i = 0
    for n in range(spaces):
        ns = f"team-{n:04d}"
        parts = [
            f"apiVersion: v1\nkind: Namespace\nmetadata: {{name: {ns}}}\n",
            _defined("ServiceAccount", "trainer", ns),
            _defined("ConfigMap", f"settings-{n:04d}", ns),
        ]
        for _ in range(22):
            other = rnd.randrange(spaces) if rnd.random() < 0.1 else n
            parts.append(
                f"""apiVersion: batch/v1
kind: Job
metadata: {{name: etl-{i}, namespace: {ns}}}
spec:
  template:
    spec:
      restartPolicy: Never
      serviceAccountName: trainer
      containers:
        - name: etl
          image: python:3.12-slim
          command: ["python", "etl.py"]
          envFrom: [{{configMapRef: {{name: settings-{other:04d}}}}}]
          resources:
            limits: {{cpu: "2", memory: 4Gi}}
"""
            )
            i += 1
        yield f"{ns}/all.yaml", "---\n".join(parts), len(parts)


def shape_lists(docs: int, rnd: random.Random) -> Iterator[tuple[str, str, int]]:
    """`kind: List` files of 250 items each (what `kubectl get -o yaml` writes)."""
    i = 0
    while True:
        items: list[str] = []
        while len(items) < 250:
            doc, n = _mixed_doc(i, rnd)
            for part in doc.split("---\n"):
                items.append(
                    "\n".join(("  - " if k == 0 else "    ") + line for k, line in enumerate(part.strip().splitlines()))
                )
            i += n
        yield f"dump/list-{i:06d}.yaml", "apiVersion: v1\nkind: List\nitems:\n" + "\n".join(items) + "\n", len(items)


def shape_small_files(docs: int, rnd: random.Random) -> Iterator[tuple[str, str, int]]:
    """One document a file (a NodePool with its EC2NodeClass: two)."""
    i = 0
    while True:
        doc, n = _mixed_doc(i, rnd)
        i += n
        yield f"team-{i % 25:02d}/m-{i:06d}.yaml", doc, n


def shape_large_files(docs: int, rnd: random.Random) -> Iterator[tuple[str, str, int]]:
    """1,000 documents a file."""
    i = 0
    while True:
        parts = []
        start = i
        while i - start < 1000:
            doc, n = _mixed_doc(i, rnd)
            parts.append(doc)
            i += n
        yield f"big/all-{start:06d}.yaml", "---\n".join(parts), i - start


def shape_helm(docs: int, rnd: random.Random) -> Iterator[tuple[str, str, int]]:
    """`helm template` output: one stream per release, `# Source:` comments, chart labels, a
    Deployment, Service, ServiceAccount, ConfigMap and a PyTorchJob per component."""
    r = 0
    while True:
        parts = []
        release = f"rel-{r}"
        for c in range(8):
            name = f"{release}-c{c}"
            labels = f"{{app.kubernetes.io/name: {name}, app.kubernetes.io/managed-by: Helm, helm.sh/chart: trainer-1.4.{r % 7}}}"
            parts.append(
                f"# Source: trainer/templates/serviceaccount.yaml\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: {name}\n  namespace: ml\n  labels: {labels}\n"
            )
            parts.append(
                f'# Source: trainer/templates/configmap.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: ml\n  labels: {labels}\ndata:\n  lr: "1e-4"\n'
            )
            parts.append(
                f"""# Source: trainer/templates/service.yaml
apiVersion: v1
kind: Service
metadata:
  name: {name}
  namespace: ml
  labels: {labels}
spec:
  selector: {{app.kubernetes.io/name: {name}}}
  ports: [{{port: 29500, targetPort: 29500}}]
"""
            )
            parts.append(
                f"""# Source: trainer/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}-serve
  namespace: ml
  labels: {labels}
spec:
  replicas: 2
  selector: {{matchLabels: {{app.kubernetes.io/name: {name}}}}}
  template:
    metadata: {{labels: {labels}}}
    spec:
      serviceAccountName: {name}
      containers:
        - name: server
          image: vllm/vllm-openai:v0.6.3
          args: ["--model", "/models/llama", "--tensor-parallel-size", "{rnd.choice([1, 4, 8])}"]
          envFrom: [{{configMapRef: {{name: {name}}}}}]
          resources:
            limits: {{nvidia.com/gpu: 8, cpu: "32", memory: 256Gi}}
"""
            )
            parts.append(
                "# Source: trainer/templates/job.yaml\n"
                + pytorchjob(r * 8 + c, rnd).replace("namespace: training", "namespace: ml")
            )
        r += 1
        yield f"rendered/{release}.yaml", "---\n".join(parts) + "---\n", len(parts)


def shape_slurm(docs: int, rnd: random.Random) -> Iterator[tuple[str, str, int]]:
    """Slurm batch scripts with 20 steps each (one document a script)."""
    i = 0
    while True:
        nodes = rnd.choice([1, 2, 4, 8])
        gpus = rnd.choice([4, 8])
        steps = "\n".join(
            f"srun --nodes={nodes} --ntasks-per-node=1 torchrun --nnodes={nodes} --nproc_per_node={gpus} "
            f"--rdzv_backend=c10d --rdzv_endpoint=$MASTER_ADDR:29500 train.py --stage {s}"
            for s in range(20)
        )
        text = f"""#!/bin/bash
#SBATCH --job-name=pretrain-{i}
#SBATCH --nodes={nodes}
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node={gpus}
#SBATCH --exclusive
set -euo pipefail
export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
export NCCL_DEBUG=WARN
{steps}
"""
        i += 1
        yield f"slurm/team-{i % 25:02d}/train-{i:06d}.sbatch", text, 1


def shape_mixed(docs: int, rnd: random.Random, docs_per_file: int = 4) -> Iterator[tuple[str, str, int]]:
    """The corpus of issues 7-16: NodePool + EC2NodeClass pairs, PyTorchJobs, MPIJobs, Volcano Jobs,
    RayClusters, Indexed Jobs, ConfigMaps, PVCs, a third with problems, 4 documents a file."""
    written = file_no = 0
    while True:
        parts = []
        count = 0
        while count < docs_per_file and written + count < docs:
            doc, n = _mixed_doc(written + count, rnd)
            parts.append(doc)
            count += n
        yield f"team-{file_no % 25:02d}/manifests-{file_no:05d}.yaml", "---\n".join(parts), count
        written += count
        file_no += 1


SHAPES: dict[str, Callable[[int, random.Random], Iterator[tuple[str, str, int]]]] = {
    "mixed": shape_mixed,
    "external-refs": shape_external_refs,
    "nodepools": shape_nodepools,
    "namespaces": shape_namespaces,
    "lists": shape_lists,
    "small-files": shape_small_files,
    "large-files": shape_large_files,
    "helm": shape_helm,
    "slurm": shape_slurm,
}


def generate(docs: int, out: Path, seed: int = 20261202, shape: str = "mixed") -> int:
    """Write about ``docs`` documents of ``shape`` under ``out`` (replaced); returns how many
    (the last file may overshoot by a few). Same arguments, same bytes."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    rnd = random.Random(seed)
    written = 0
    for rel, text, n in SHAPES[shape](docs, rnd):
        if written >= docs:
            break
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written += n
    return written


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seed", type=int, default=20261202)
    ap.add_argument("--shape", choices=sorted(SHAPES), default="mixed")
    args = ap.parse_args()
    n = generate(args.docs, args.out, args.seed, args.shape)
    print(f"wrote {n} documents ({args.shape}) to {args.out}")


if __name__ == "__main__":
    main()
