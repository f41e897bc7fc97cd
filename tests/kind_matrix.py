"""The kind dimension of the shape matrix: one pod template, wrapped as every workload kind.

Each base below is written from its operator's documentation (CRD field names and shapes: Kubernetes
workload API reference; kubeflow/training-operator ``*_types.go``; kubeflow/trainer
``trainjob_types.go``/``trainingruntime_types.go``; kubernetes-sigs/jobset and lws API types;
ray-project/kuberay ``raycluster_types.go``/``rayjob_types.go``; volcano-sh ``batch/v1alpha1``;
aws/sagemaker-hyperpod-cli ``hyperpod_pytorch_job_unified_config.py``; SlinkyProject/slurm-operator
``nodeset_types.go``; kubeflow/katib ``experiment_types.go``), **not** from eksmllint's kinds table:
the matrix checks that the table and the rules agree with how the operators really write their
objects. ``wrap(template, pods)`` returns the documents of one workload whose ``pods`` pods (where
the kind can say so) run ``template``; helper pods (a launcher, a Ray head) ask for no devices.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

NAME = "matrix"
NS = "training"

#: A pod that only starts work elsewhere (MPI launcher, Ray head): small, no accelerators.
_HELPER = {
    "spec": {
        "containers": [
            {
                "name": "helper",
                "image": "public.ecr.aws/docker/library/python:3.12-slim",
                "command": ["sleep", "60"],
                "resources": {"limits": {"cpu": "1", "memory": "2Gi"}},
            }
        ]
    }
}


def _t(template: dict) -> dict:
    return copy.deepcopy(template)


def pod(template: dict, pods: int, ns: str = NS) -> list[dict]:
    return [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {**template.get("metadata", {}), "name": NAME, "namespace": ns},
            "spec": _t(template)["spec"],
        }
    ]


def job(template: dict, pods: int, ns: str = NS) -> list[dict]:
    spec: dict = {"template": _t(template), "backoffLimit": 0}
    if pods > 1:
        spec.update(parallelism=pods, completions=pods, completionMode="Indexed")
    return [{"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": NAME, "namespace": ns}, "spec": spec}]


def pytorchjob(template: dict, pods: int, ns: str = NS) -> list[dict]:
    specs = {"Master": {"replicas": 1, "restartPolicy": "OnFailure", "template": _t(template)}}
    if pods > 1:
        specs["Worker"] = {"replicas": pods - 1, "restartPolicy": "OnFailure", "template": _t(template)}
    return [
        {
            "apiVersion": "kubeflow.org/v1",
            "kind": "PyTorchJob",
            "metadata": {"name": NAME, "namespace": ns},
            "spec": {"pytorchReplicaSpecs": specs},
        }
    ]


def _kubeflow(kind: str, key: str, roles: tuple[str, ...]) -> Callable[..., list[dict]]:
    def wrap(template: dict, pods: int, ns: str = NS) -> list[dict]:
        first, *rest = roles
        specs = {first: {"replicas": 1 if rest and pods > 1 else pods, "template": _t(template)}}
        if rest and pods > 1:
            specs[rest[0]] = {"replicas": pods - 1, "template": _t(template)}
        return [
            {
                "apiVersion": "kubeflow.org/v1",
                "kind": kind,
                "metadata": {"name": NAME, "namespace": ns},
                "spec": {key: specs},
            }
        ]

    return wrap


def mpijob(template: dict, pods: int, ns: str = NS) -> list[dict]:
    return [
        {
            "apiVersion": "kubeflow.org/v2beta1",
            "kind": "MPIJob",
            "metadata": {"name": NAME, "namespace": ns},
            "spec": {
                "slotsPerWorker": 1,
                "mpiReplicaSpecs": {
                    "Launcher": {"replicas": 1, "template": copy.deepcopy(_HELPER)},
                    "Worker": {"replicas": pods, "template": _t(template)},
                },
            },
        }
    ]


def _runtime(template: dict, kind: str = "ClusterTrainingRuntime", ns: str = NS) -> dict:
    node = _t(template)
    node.setdefault("metadata", {}).setdefault("labels", {})["trainer.kubeflow.org/trainjob-ancestor-step"] = "trainer"
    meta = (
        {"name": "matrix-runtime"} if kind == "ClusterTrainingRuntime" else {"name": "matrix-runtime", "namespace": ns}
    )
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": kind,
        "metadata": meta,
        "spec": {
            "mlPolicy": {"numNodes": 1, "torch": {}},
            "template": {"spec": {"replicatedJobs": [{"name": "node", "template": {"spec": {"template": node}}}]}},
        },
    }


def trainjob(template: dict, pods: int, ns: str = NS) -> list[dict]:
    return [
        _runtime(template, ns=ns),
        {
            "apiVersion": "trainer.kubeflow.org/v1alpha1",
            "kind": "TrainJob",
            "metadata": {"name": NAME, "namespace": ns},
            "spec": {"runtimeRef": {"name": "matrix-runtime"}, "trainer": {"numNodes": pods}},
        },
    ]


def runtime(template: dict, pods: int, ns: str = NS) -> list[dict]:
    doc = _runtime(template, "TrainingRuntime", ns)
    doc["metadata"]["name"] = NAME
    doc["spec"]["mlPolicy"]["numNodes"] = pods
    jobs = doc["spec"]["template"]["spec"]["replicatedJobs"]
    jobs[0]["template"]["spec"]["parallelism"] = pods
    return [doc]


def jobset(template: dict, pods: int, ns: str = NS) -> list[dict]:
    return [
        {
            "apiVersion": "jobset.x-k8s.io/v1alpha2",
            "kind": "JobSet",
            "metadata": {"name": NAME, "namespace": ns},
            "spec": {
                "replicatedJobs": [
                    {
                        "name": "workers",
                        "replicas": 1,
                        "template": {
                            "spec": {
                                "parallelism": pods,
                                "completions": pods,
                                "backoffLimit": 0,
                                "completionMode": "Indexed",
                                "template": _t(template),
                            }
                        },
                    }
                ]
            },
        }
    ]


def leaderworkerset(template: dict, pods: int, ns: str = NS) -> list[dict]:
    return [
        {
            "apiVersion": "leaderworkerset.x-k8s.io/v1",
            "kind": "LeaderWorkerSet",
            "metadata": {"name": NAME, "namespace": ns},
            "spec": {"replicas": 1, "leaderWorkerTemplate": {"size": pods, "workerTemplate": _t(template)}},
        }
    ]


def _ray_cluster(template: dict, pods: int) -> dict:
    head = copy.deepcopy(_HELPER)
    return {
        "headGroupSpec": {"rayStartParams": {}, "template": head},
        "workerGroupSpecs": [
            {
                "groupName": "gpu",
                "replicas": pods,
                "minReplicas": pods,
                "maxReplicas": pods,
                "rayStartParams": {},
                "template": _t(template),
            }
        ],
    }


def raycluster(template: dict, pods: int, ns: str = NS) -> list[dict]:
    return [
        {
            "apiVersion": "ray.io/v1",
            "kind": "RayCluster",
            "metadata": {"name": NAME, "namespace": ns},
            "spec": _ray_cluster(template, pods),
        }
    ]


def rayjob(template: dict, pods: int, ns: str = NS) -> list[dict]:
    return [
        {
            "apiVersion": "ray.io/v1",
            "kind": "RayJob",
            "metadata": {"name": NAME, "namespace": ns},
            "spec": {"entrypoint": "python train.py", "rayClusterSpec": _ray_cluster(template, pods)},
        }
    ]


def volcano(template: dict, pods: int, ns: str = NS) -> list[dict]:
    return [
        {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "Job",
            "metadata": {"name": NAME, "namespace": ns},
            "spec": {
                "schedulerName": "volcano",
                "minAvailable": pods,
                "tasks": [{"name": "worker", "replicas": pods, "template": _t(template)}],
            },
        }
    ]


def hyperpod(template: dict, pods: int, ns: str = NS) -> list[dict]:
    return [
        {
            "apiVersion": "sagemaker.amazonaws.com/v1",
            "kind": "HyperPodPyTorchJob",
            "metadata": {"name": NAME, "namespace": ns},
            "spec": {
                "nprocPerNode": "auto",
                "replicaSpecs": [{"name": "pods", "replicas": pods, "template": _t(template)}],
            },
        }
    ]


def nodeset(template: dict, pods: int, ns: str = NS) -> list[dict]:
    return [
        {
            "apiVersion": "slinky.slurm.net/v1beta1",
            "kind": "NodeSet",
            "metadata": {"name": NAME, "namespace": ns},
            "spec": {"controllerRef": {"name": "slurm"}, "replicas": pods, "template": _t(template)},
        }
    ]


def katib(template: dict, pods: int, ns: str = NS) -> list[dict]:
    trial = pytorchjob(template, pods, ns)[0]
    del trial["metadata"]
    return [
        {
            "apiVersion": "kubeflow.org/v1beta1",
            "kind": "Experiment",
            "metadata": {"name": NAME, "namespace": ns},
            "spec": {
                "objective": {"type": "minimize", "objectiveMetricName": "loss"},
                "algorithm": {"algorithmName": "random"},
                "parameters": [
                    {"name": "lr", "parameterType": "double", "feasibleSpace": {"min": "0.01", "max": "0.1"}}
                ],
                "trialTemplate": {"primaryContainerName": "pytorch", "trialParameters": [], "trialSpec": trial},
            },
        }
    ]


def _service(kind: str) -> Callable[..., list[dict]]:
    def wrap(template: dict, pods: int, ns: str = NS) -> list[dict]:
        spec: dict = {"selector": {"matchLabels": {"app": NAME}}, "template": _t(template)}
        spec["template"].setdefault("metadata", {}).setdefault("labels", {})["app"] = NAME
        if kind != "DaemonSet":
            spec["replicas"] = pods
        return [{"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": NAME, "namespace": ns}, "spec": spec}]

    return wrap


#: Kind label (the README table's column) -> base.
BASES: dict[str, Callable[..., list[dict]]] = {
    "Pod": pod,
    "Job (Indexed)": job,
    "Deployment": _service("Deployment"),
    "StatefulSet": _service("StatefulSet"),
    "DaemonSet": _service("DaemonSet"),
    "PyTorchJob": pytorchjob,
    "TFJob": _kubeflow("TFJob", "tfReplicaSpecs", ("Worker",)),
    "MPIJob": mpijob,
    "JAXJob": _kubeflow("JAXJob", "jaxReplicaSpecs", ("Worker",)),
    "XGBoostJob": _kubeflow("XGBoostJob", "xgbReplicaSpecs", ("Master", "Worker")),
    "PaddleJob": _kubeflow("PaddleJob", "paddleReplicaSpecs", ("Worker",)),
    "TrainJob": trainjob,
    "TrainingRuntime": runtime,
    "JobSet": jobset,
    "LeaderWorkerSet": leaderworkerset,
    "RayCluster": raycluster,
    "RayJob": rayjob,
    "Volcano Job": volcano,
    "HyperPodPyTorchJob": hyperpod,
    "NodeSet": nodeset,
    "Katib Experiment": katib,
}
