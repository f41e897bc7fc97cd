"""The provisioner dimension of the shape matrix: each placement rule's defect, and its repair,
written once against abstract capacity and transplanted into every provisioner form eksmllint
models (``eksmllint/platform/provisioners.yaml``).

A cell is (rule, form): the bad case must fire the rule, the good case must leave it silent.
Cells that cannot apply say why (:data:`CASES` ``not_for``); ``python tests/matrix/provisioner_cells.py``
prints the table for the README. The manifests are written from the providers' documentation:
Karpenter NodePool / EC2NodeClass (karpenter.sh/docs/concepts/nodepools), EKS Auto Mode NodePool /
NodeClass (docs.aws.amazon.com/eks/latest/userguide/create-node-pool.html), SageMaker HyperPod
``ml.*`` instance types, EKS managed node group labels, Kueue LocalQueue / ClusterQueue /
ResourceFlavor (kueue.sigs.k8s.io/docs/concepts/).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import yaml

#: The provisioner forms, in table order, with how a pod aims at each.
FORMS: dict[str, str] = {
    "karpenter": "Karpenter NodePool + EC2NodeClass; pod selects karpenter.k8s.aws/instance-family",
    "eks-auto-mode": "EKS Auto Mode NodePool + NodeClass; pod selects eks.amazonaws.com/instance-family",
    "hyperpod": "SageMaker HyperPod node; pod selects node.kubernetes.io/instance-type: ml.<type>",
    "node-group": "managed node group; pod selects eks.amazonaws.com/nodegroup and the instance type",
    "kueue-flavor": "Kueue ResourceFlavor nodeLabels (LocalQueue -> ClusterQueue -> flavor); pod selects nothing",
}
NODEPOOL_FORMS = ("karpenter", "eks-auto-mode")


@dataclass(frozen=True)
class Capacity:
    """What the nodes are: one instance type, the pool's zones, capacity types, taints and limits."""

    instance_type: str = "p5.48xlarge"
    family: str = "p5"
    zones: tuple[str, ...] = ("us-west-2a",)
    capacity: tuple[str, ...] = ("on-demand",)
    taint: bool = False  # nvidia.com/gpu=true:NoSchedule (a NodePool's taint; a flavor's nodeTaints)
    gpu_limit: int | None = None


@dataclass(frozen=True)
class Job:
    """The training job: a PyTorchJob with ``workers`` pods, each with these requests."""

    gpus: int = 8
    efa: int = 32
    cpu: str = "96"
    workers: int = 2
    family: str | None = None  # the family the pod selects (default: the capacity's)
    zone: str | None = None
    tolerate: bool = True
    efa_plugin_types: tuple[str, ...] | None = None  # the EFA device plugin's instance types (None: no plugin)


POOL_ONLY = "no manifest of this form says it (the nodes come from {what}); the rule stays silent (open world)"
_WHAT = {
    "hyperpod": "a HyperPod instance group",
    "node-group": "a node group",
    "kueue-flavor": "whatever the flavor's labels select",
}


def _pool_only(subject: str, but: tuple[str, ...] = ()) -> dict[str, str]:
    return {form: f"{subject}: " + POOL_ONLY.format(what=_WHAT[form]) for form in _WHAT if form not in but}


@dataclass(frozen=True)
class Case:
    rule: str
    what: str
    bad: tuple[Capacity, Job]
    good: tuple[Capacity, Job]
    not_for: dict[str, str] = field(default_factory=dict)  # form -> why the cell cannot apply


BASE = (Capacity(), Job())
CASES: tuple[Case, ...] = (
    Case(
        "EML101",
        "EFA pool spans two zones",
        (replace(BASE[0], zones=("us-west-2a", "us-west-2b")), BASE[1]),
        BASE,
        _pool_only("the zones the nodes span"),
    ),
    Case("EML102", "64 EFA interfaces on p5.48xlarge (32)", (BASE[0], replace(BASE[1], efa=64)), BASE),
    Case("EML103", "two-node job on p5.48xlarge requests no EFA", (BASE[0], replace(BASE[1], efa=0)), BASE),
    Case(
        "EML105",
        "the EFA device plugin runs on p4d.24xlarge only",
        (BASE[0], replace(BASE[1], efa_plugin_types=("p4d.24xlarge",))),
        (BASE[0], replace(BASE[1], efa_plugin_types=("p4d.24xlarge", "p5.48xlarge"))),
    ),
    Case(
        "EML106",
        "the pool allows spot",
        (replace(BASE[0], capacity=("spot", "on-demand")), BASE[1]),
        BASE,
        _pool_only("the capacity type of the nodes"),
    ),
    Case("EML602", "16 GPUs per pod on p5.48xlarge (8)", (BASE[0], replace(BASE[1], gpus=16)), BASE),
    Case("EML603", "400 CPUs per pod on p5.48xlarge (192)", (BASE[0], replace(BASE[1], cpu="400")), BASE),
    Case(
        "EML607",
        "the pool's nvidia.com/gpu limit (8) is below the job's 16",
        (replace(BASE[0], gpu_limit=8), BASE[1]),
        (replace(BASE[0], gpu_limit=64), BASE[1]),
        _pool_only("a limit on the capacity"),
    ),
    Case("EML609", "each pod of the collective uses 4 of 8 GPUs", (BASE[0], replace(BASE[1], gpus=4, efa=16)), BASE),
    Case(
        "EML701",
        "the pool (Kueue: the flavor's nodeTaints) taints its nodes, the pod does not tolerate it",
        (replace(BASE[0], taint=True), replace(BASE[1], tolerate=False)),
        (replace(BASE[0], taint=True), BASE[1]),
        _pool_only("the taints of the nodes", but=("kueue-flavor",)),
    ),
    Case(
        "EML702",
        "the pod needs a p5 GPU node, the pool launches c6i only",
        (replace(BASE[0], instance_type="c6i.32xlarge", family="c6i"), replace(BASE[1], family="p5", efa=0)),
        BASE,
        _pool_only("the set of pools that could serve the pod"),
    ),
    Case(
        "EML705",
        "the pod selects us-west-2b, the pool launches in us-west-2a",
        (BASE[0], replace(BASE[1], zone="us-west-2b")),
        (BASE[0], replace(BASE[1], zone="us-west-2a")),
        _pool_only("the zones the nodes span"),
    ),
)


# --- rendering --------------------------------------------------------------------------------
_GPU_TAINT = {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}


def _selector(form: str, cap: Capacity, job: Job) -> dict[str, str]:
    family = job.family or cap.family
    sel: dict[str, str] = {}
    if form == "karpenter":
        sel["karpenter.k8s.aws/instance-family"] = family
    elif form == "eks-auto-mode":
        sel["eks.amazonaws.com/instance-family"] = family
    elif form == "hyperpod":
        sel["node.kubernetes.io/instance-type"] = "ml." + cap.instance_type
    elif form == "node-group":
        sel["eks.amazonaws.com/nodegroup"] = "train"
        sel["node.kubernetes.io/instance-type"] = cap.instance_type
    if job.zone:
        sel["topology.kubernetes.io/zone"] = job.zone
    return sel


def _pool(form: str, cap: Capacity) -> list[dict]:
    ns = "karpenter.k8s.aws" if form == "karpenter" else "eks.amazonaws.com"
    reqs = [
        {"key": f"{ns}/instance-family", "operator": "In", "values": [cap.family]},
        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": [cap.instance_type]},
        {"key": "topology.kubernetes.io/zone", "operator": "In", "values": list(cap.zones)},
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": list(cap.capacity)},
    ]
    ref = (
        {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "train"}
        if form == "karpenter"
        else {"group": "eks.amazonaws.com", "kind": "NodeClass", "name": "train"}
    )
    tspec: dict = {"nodeClassRef": ref, "requirements": reqs, "expireAfter": "Never"}
    if cap.taint:
        tspec["taints"] = [_GPU_TAINT]
    spec: dict = {
        "template": {"spec": tspec},
        "disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "10m", "budgets": [{"nodes": "0"}]},
    }
    if cap.gpu_limit is not None:
        spec["limits"] = {"nvidia.com/gpu": cap.gpu_limit}
    pool = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "train"}, "spec": spec}
    subnets = [{"tags": {"karpenter.sh/discovery": "ml"}}]
    if form == "karpenter":
        node_class = {
            "apiVersion": "karpenter.k8s.aws/v1",
            "kind": "EC2NodeClass",
            "metadata": {"name": "train"},
            "spec": {
                "role": "KarpenterNodeRole-ml",
                "amiSelectorTerms": [{"alias": "al2023@latest"}],
                "subnetSelectorTerms": subnets,
                "securityGroupSelectorTerms": subnets,
            },
        }
    else:
        node_class = {
            "apiVersion": "eks.amazonaws.com/v1",
            "kind": "NodeClass",
            "metadata": {"name": "train"},
            "spec": {"role": "AmazonEKSAutoNodeRole", "subnetSelectorTerms": subnets},
        }
    return [pool, node_class]


def _kueue(cap: Capacity) -> list[dict]:
    api = "kueue.x-k8s.io/v1beta1"
    return [
        {
            "apiVersion": api,
            "kind": "ResourceFlavor",
            "metadata": {"name": "p5"},
            "spec": {
                "nodeLabels": {"node.kubernetes.io/instance-type": cap.instance_type},
                **({"nodeTaints": [_GPU_TAINT]} if cap.taint else {}),
            },
        },
        {
            "apiVersion": api,
            "kind": "ClusterQueue",
            "metadata": {"name": "train"},
            "spec": {
                "namespaceSelector": {},
                "resourceGroups": [
                    {
                        "coveredResources": ["nvidia.com/gpu"],
                        "flavors": [{"name": "p5", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 64}]}],
                    }
                ],
            },
        },
        {
            "apiVersion": api,
            "kind": "LocalQueue",
            "metadata": {"name": "train", "namespace": "ml"},
            "spec": {"clusterQueue": "train"},
        },
    ]


def _job(form: str, cap: Capacity, job: Job) -> dict:
    resources = {"nvidia.com/gpu": job.gpus, "cpu": job.cpu, "memory": "512Gi"}
    if job.efa:
        resources["vpc.amazonaws.com/efa"] = job.efa
    pod: dict = {
        "containers": [
            {
                "name": "pytorch",
                "image": "public.ecr.aws/example/train:1.0",
                "command": ["torchrun", f"--nnodes={job.workers}", f"--nproc-per-node={job.gpus}", "train.py"],
                "resources": {"requests": resources, "limits": resources},
                "volumeMounts": [{"name": "shm", "mountPath": "/dev/shm"}],
            }
        ],
        "volumes": [{"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "64Gi"}}],
    }
    sel = _selector(form, cap, job)
    if sel:
        pod["nodeSelector"] = sel
    if job.tolerate:
        pod["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    meta: dict = {"name": "train", "namespace": "ml"}
    if form == "kueue-flavor":
        meta["labels"] = {"kueue.x-k8s.io/queue-name": "train"}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": meta,
        "spec": {
            "pytorchReplicaSpecs": {
                "Worker": {"replicas": job.workers, "restartPolicy": "OnFailure", "template": {"spec": pod}}
            }
        },
    }


def _efa_plugin(types: tuple[str, ...]) -> dict:
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": list(types)}
                        ]
                    }
                ]
            }
        }
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "aws-efa-k8s-device-plugin", "namespace": "kube-system"},
        "spec": {
            "selector": {"matchLabels": {"name": "efa"}},
            "template": {
                "metadata": {"labels": {"name": "efa"}},
                "spec": {
                    "affinity": affinity,
                    "tolerations": [{"operator": "Exists"}],
                    "containers": [
                        {
                            "name": "plugin",
                            "image": "602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/aws-efa-k8s-device-plugin:v0.5.6",
                        }
                    ],
                },
            },
        },
    }


def render(form: str, cap: Capacity, job: Job) -> str:
    """The manifests of one cell: the capacity in ``form``'s shape, the job aimed at it."""
    docs: list[dict] = []
    if form in NODEPOOL_FORMS:
        docs += _pool(form, cap)
    elif form == "kueue-flavor":
        docs += _kueue(cap)
    if job.efa_plugin_types is not None:
        docs.append(_efa_plugin(job.efa_plugin_types))
    docs.append(_job(form, cap, job))
    return yaml.safe_dump_all(docs, sort_keys=False)


def cells() -> list[tuple[Case, str]]:
    """Every (case, form) cell that applies."""
    return [(case, form) for case in CASES for form in FORMS if form not in case.not_for]


def markdown() -> str:
    """The rule x provisioner table: ✓ where the rule is judged (bad fires, good silent), else why not."""
    head = "| rule | defect | " + " | ".join(FORMS) + " |"
    rows = [head, "|" + "---|" * (len(FORMS) + 2)]
    notes: dict[str, int] = {}
    for case in CASES:
        marks = []
        for form in FORMS:
            why = case.not_for.get(form)
            if why is None:
                marks.append("✓")
            else:
                n = notes.setdefault(why.split(":")[0], len(notes) + 1)
                marks.append(f"— ({n})")
        rows.append(f"| {case.rule} | {case.what} | " + " | ".join(marks) + " |")
    legend = [
        f"({n}) {subject}: no manifest of this form says it; the rule stays silent (open world)"
        for subject, n in notes.items()
    ]
    forms = [f"- **{name}**: {how}" for name, how in FORMS.items()]
    size = f"{len(CASES)} rules x {len(FORMS)} forms = {len(CASES) * len(FORMS)} cells, {len(cells())} judged (bad and good each)"
    return "\n".join([*forms, "", *rows, "", *legend, "", size])


if __name__ == "__main__":
    print(markdown())
