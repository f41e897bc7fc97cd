"""Tests for the CRD models (EML002 on known CRDs).

Fixtures are written here from the upstream field lists; the real-world corpus is only
read (never copied) by the false-positive test at the bottom.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eksmllint.models import (
    KNOWN_CRD_KINDS,
    EC2NodeClass,
    ModelIssue,
    MPIJobV1,
    MPIJobV2,
    NodePool,
    PyTorchJob,
    model_for,
    validate_crd,
)
from eksmllint.models.common import MAX_ISSUES, format_path

POD = {"spec": {"containers": [{"name": "main", "image": "busybox"}]}}
JOB_TEMPLATE = {"spec": {"completionMode": "Indexed", "template": POD}}

# ----------------------------------------------------------------------------- fixtures


def _obj(api_version: str, kind: str, spec: Any = None, **extra: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}}
    if spec is not None:
        doc["spec"] = spec
    doc.update(extra)
    return doc


def nodepool() -> dict[str, Any]:
    return _obj(
        "karpenter.sh/v1",
        "NodePool",
        {
            "template": {
                "metadata": {"labels": {"team": "ml"}},
                "spec": {
                    "requirements": [
                        {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["p5"]},
                        {"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "Gt", "values": ["0"]},
                        {
                            "key": "node.kubernetes.io/instance-type",
                            "operator": "In",
                            "values": ["p5.48xlarge", "p5e.48xlarge"],
                            "minValues": 1,
                        },
                    ],
                    "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "gpu"},
                    "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}],
                    "expireAfter": "Never",
                    "terminationGracePeriod": "48h",
                },
            },
            "disruption": {
                "consolidationPolicy": "WhenEmpty",
                "consolidateAfter": "300s",
                "budgets": [
                    {"nodes": "0", "reasons": ["Underutilized", "Drifted"]},
                    {"nodes": "10%", "schedule": "0 9 * * mon-fri", "duration": "8h"},
                ],
            },
            "limits": {"cpu": 1000, "memory": "4000Gi", "nvidia.com/gpu": 64},
            "weight": 50,
        },
    )


def ec2nodeclass() -> dict[str, Any]:
    return _obj(
        "karpenter.k8s.aws/v1",
        "EC2NodeClass",
        {
            "role": "KarpenterNodeRole-ml",
            "amiSelectorTerms": [{"alias": "al2023@v20240807"}],
            "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "ml"}}, {"id": "subnet-0123"}],
            "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "ml"}}, {"name": "ml-sg"}],
            "instanceStorePolicy": "RAID0",
            "metadataOptions": {
                "httpEndpoint": "enabled",
                "httpProtocolIPv6": "disabled",
                "httpPutResponseHopLimit": 1,
                "httpTokens": "required",
            },
            "blockDeviceMappings": [
                {
                    "deviceName": "/dev/xvda",
                    "rootVolume": True,
                    "ebs": {
                        "volumeSize": "200Gi",
                        "volumeType": "gp3",
                        "iops": 10000,
                        "throughput": 500,
                        "encrypted": True,
                        "kmsKeyID": "k",
                    },
                }
            ],
            "kubelet": {"maxPods": 110, "systemReserved": {"cpu": "500m"}, "imageGCHighThresholdPercent": 85},
            "tags": {"team": "ml"},
            "associatePublicIPAddress": False,
        },
    )


def _replica(n: int, container: str) -> dict[str, Any]:
    return {
        "replicas": n,
        "restartPolicy": "OnFailure",
        "template": {"spec": {"containers": [{"name": container, "image": "img"}]}},
    }


def pytorchjob() -> dict[str, Any]:
    return _obj(
        "kubeflow.org/v1",
        "PyTorchJob",
        {
            "nprocPerNode": "8",
            "elasticPolicy": {
                "rdzvBackend": "c10d",
                "minReplicas": 1,
                "maxReplicas": 4,
                "maxRestarts": 3,
                "rdzvConf": [{"key": "timeout", "value": "900"}],
            },
            "runPolicy": {
                "cleanPodPolicy": "None",
                "ttlSecondsAfterFinished": 600,
                "schedulingPolicy": {"minAvailable": 3, "queue": "q", "minResources": {"nvidia.com/gpu": 24}},
            },
            "pytorchReplicaSpecs": {"Master": _replica(1, "pytorch"), "Worker": _replica(2, "pytorch")},
        },
    )


def fixtures() -> dict[tuple[str, str], dict[str, Any]]:
    """One valid document per known (apiVersion, kind)."""
    f: dict[tuple[str, str], dict[str, Any]] = {}

    def add(doc: dict[str, Any]) -> None:
        f[(doc["apiVersion"], doc["kind"])] = doc

    add(nodepool())
    add(ec2nodeclass())
    add(
        _obj(
            "karpenter.sh/v1beta1",
            "NodePool",
            {
                "template": {
                    "spec": {
                        "nodeClassRef": {
                            "apiVersion": "karpenter.k8s.aws/v1beta1",
                            "kind": "EC2NodeClass",
                            "name": "default",
                        },
                        "requirements": [],
                    }
                },
                "disruption": {"consolidationPolicy": "WhenUnderutilized", "expireAfter": "720h"},
            },
        )
    )
    add(
        _obj(
            "karpenter.k8s.aws/v1beta1",
            "EC2NodeClass",
            {
                "amiFamily": "Ubuntu",
                "role": "r",
                "subnetSelectorTerms": [{"tags": {"a": "b"}}],
                "securityGroupSelectorTerms": [{"tags": {"a": "b"}}],
            },
        )
    )
    add(pytorchjob())
    add(
        _obj(
            "kubeflow.org/v1",
            "TFJob",
            {
                "successPolicy": "AllWorkers",
                "runPolicy": {"cleanPodPolicy": "Running"},
                "tfReplicaSpecs": {
                    "PS": _replica(1, "tensorflow"),
                    "Worker": _replica(2, "tensorflow"),
                    "Chief": _replica(1, "tensorflow"),
                },
            },
        )
    )
    add(
        _obj(
            "kubeflow.org/v1",
            "MPIJob",
            {
                "slotsPerWorker": 8,
                "mainContainer": "mpi",
                "runPolicy": {"cleanPodPolicy": "Running"},
                "mpiReplicaSpecs": {"Launcher": _replica(1, "mpi"), "Worker": _replica(2, "mpi")},
            },
        )
    )
    add(
        _obj(
            "kubeflow.org/v2beta1",
            "MPIJob",
            {
                "slotsPerWorker": 8,
                "runLauncherAsWorker": False,
                "sshAuthMountPath": "/home/mpiuser/.ssh",
                "launcherCreationPolicy": "WaitForWorkersReady",
                "mpiImplementation": "OpenMPI",
                "runPolicy": {"cleanPodPolicy": "Running", "suspend": False, "managedBy": "kubeflow.org/mpi-operator"},
                "mpiReplicaSpecs": {"Launcher": _replica(1, "launcher"), "Worker": _replica(2, "worker")},
            },
        )
    )
    add(
        _obj(
            "kubeflow.org/v1",
            "XGBoostJob",
            {"xgbReplicaSpecs": {"Master": _replica(1, "xgboost"), "Worker": _replica(2, "xgboost")}},
        )
    )
    add(
        _obj(
            "kubeflow.org/v1",
            "PaddleJob",
            {
                "elasticPolicy": {"minReplicas": 1, "maxReplicas": 2},
                "paddleReplicaSpecs": {"Worker": _replica(2, "paddle")},
            },
        )
    )
    add(_obj("kubeflow.org/v1", "JAXJob", {"jaxReplicaSpecs": {"Worker": _replica(2, "jax")}}))
    add(
        _obj(
            "trainer.kubeflow.org/v1alpha1",
            "TrainJob",
            {
                "runtimeRef": {
                    "name": "torch-distributed",
                    "apiGroup": "trainer.kubeflow.org",
                    "kind": "ClusterTrainingRuntime",
                },
                "trainer": {
                    "numNodes": 2,
                    "numProcPerNode": 8,
                    "image": "img",
                    "command": ["torchrun", "train.py"],
                    "resourcesPerNode": {"limits": {"nvidia.com/gpu": 8}},
                    "env": [{"name": "NCCL_DEBUG", "value": "WARN"}],
                },
                "initializer": {"dataset": {"storageUri": "hf://tatsu-lab/alpaca"}},
                "suspend": False,
            },
        )
    )
    runtime_spec = {
        "mlPolicy": {"numNodes": 1, "torch": {"numProcPerNode": "auto"}},
        "podGroupPolicy": {"coscheduling": {"scheduleTimeoutSeconds": 120}},
        "template": {"spec": {"replicatedJobs": [{"name": "node", "template": JOB_TEMPLATE}]}},
    }
    add(_obj("trainer.kubeflow.org/v1alpha1", "TrainingRuntime", copy.deepcopy(runtime_spec)))
    add(_obj("trainer.kubeflow.org/v1alpha1", "ClusterTrainingRuntime", copy.deepcopy(runtime_spec)))
    add(
        _obj(
            "batch.volcano.sh/v1alpha1",
            "Job",
            {
                "schedulerName": "volcano",
                "minAvailable": 3,
                "queue": "training",
                "maxRetry": 3,
                "plugins": {
                    "svc": ["--publish-not-ready-addresses"],
                    "env": [],
                    "pytorch": ["--master=master", "--port=23456"],
                },
                "policies": [
                    {"event": "PodEvicted", "action": "RestartJob"},
                    {"events": ["PodFailed", "TaskFailed"], "action": "AbortJob", "timeout": "5m"},
                ],
                "tasks": [
                    {
                        "name": "master",
                        "replicas": 1,
                        "template": POD,
                        "policies": [{"event": "TaskCompleted", "action": "CompleteJob"}],
                    },
                    {
                        "name": "worker",
                        "replicas": 2,
                        "minAvailable": 2,
                        "template": POD,
                        "topologyPolicy": "best-effort",
                        "dependsOn": {"name": ["master"], "iteration": "any"},
                    },
                ],
                "networkTopology": {"mode": "hard", "highestTierAllowed": 1},
            },
        )
    )
    add(
        _obj(
            "scheduling.volcano.sh/v1beta1",
            "Queue",
            {"weight": 1, "reclaimable": False, "capability": {"cpu": 512, "nvidia.com/gpu": 64}},
        )
    )
    add(
        _obj(
            "scheduling.volcano.sh/v1beta1",
            "PodGroup",
            {
                "minMember": 3,
                "queue": "training",
                "minTaskMember": {"worker": 2},
                "minResources": {"nvidia.com/gpu": "24"},
            },
        )
    )
    add(
        _obj(
            "scheduling.x-k8s.io/v1alpha1",
            "PodGroup",
            {"minMember": 3, "scheduleTimeoutSeconds": 60, "minResources": {"cpu": "3"}},
        )
    )
    ray_spec = {
        "rayVersion": "2.46.0",
        "enableInTreeAutoscaling": True,
        "autoscalerOptions": {"upscalingMode": "Default", "idleTimeoutSeconds": 60},
        "headGroupSpec": {"rayStartParams": {"dashboard-host": "0.0.0.0", "num-cpus": "0"}, "template": POD},
        "workerGroupSpecs": [
            {
                "groupName": "gpu",
                "replicas": 2,
                "minReplicas": 0,
                "maxReplicas": 4,
                "numOfHosts": 1,
                "rayStartParams": {"num-gpus": "8"},
                "template": POD,
            }
        ],
    }
    add(_obj("ray.io/v1", "RayCluster", copy.deepcopy(ray_spec)))
    add(
        _obj(
            "ray.io/v1",
            "RayJob",
            {
                "entrypoint": "python train.py",
                "shutdownAfterJobFinishes": True,
                "ttlSecondsAfterFinished": 60,
                "submissionMode": "K8sJobMode",
                "runtimeEnvYAML": "pip:\n  - torch\n",
                "backoffLimit": 0,
                "entrypointNumGpus": 0,
                "rayClusterSpec": copy.deepcopy(ray_spec),
            },
        )
    )
    add(
        _obj(
            "ray.io/v1",
            "RayService",
            {"serveConfigV2": "applications: []\n", "rayClusterConfig": copy.deepcopy(ray_spec)},
        )
    )
    add(
        _obj(
            "jobset.x-k8s.io/v1alpha2",
            "JobSet",
            {
                "network": {"enableDNSHostnames": True, "publishNotReadyAddresses": True},
                "successPolicy": {"operator": "All", "targetReplicatedJobs": ["workers"]},
                "failurePolicy": {
                    "maxRestarts": 3,
                    "restartStrategy": "Recreate",
                    "rules": [{"action": "FailJobSet", "onJobFailureReasons": ["PodFailurePolicy"]}],
                },
                "replicatedJobs": [
                    {"name": "driver", "replicas": 1, "template": JOB_TEMPLATE},
                    {
                        "name": "workers",
                        "replicas": 2,
                        "template": JOB_TEMPLATE,
                        "dependsOn": [{"name": "driver", "status": "Ready"}],
                    },
                ],
            },
        )
    )
    add(
        _obj(
            "leaderworkerset.x-k8s.io/v1",
            "LeaderWorkerSet",
            {
                "replicas": 2,
                "startupPolicy": "LeaderCreated",
                "rolloutStrategy": {
                    "type": "RollingUpdate",
                    "rollingUpdateConfiguration": {"maxUnavailable": 1, "maxSurge": "25%"},
                },
                "leaderWorkerTemplate": {
                    "size": 4,
                    "restartPolicy": "RecreateGroupOnPodRestart",
                    "leaderTemplate": POD,
                    "workerTemplate": POD,
                },
            },
        )
    )
    rg = [
        {
            "coveredResources": ["cpu", "nvidia.com/gpu"],
            "flavors": [
                {
                    "name": "p5",
                    "resources": [
                        {"name": "cpu", "nominalQuota": 192},
                        {"name": "nvidia.com/gpu", "nominalQuota": 8, "borrowingLimit": "8"},
                    ],
                }
            ],
        }
    ]
    add(
        _obj(
            "kueue.x-k8s.io/v1beta1",
            "ClusterQueue",
            {
                "cohort": "ml",
                "namespaceSelector": {},
                "queueingStrategy": "BestEffortFIFO",
                "admissionChecks": ["prov"],
                "resourceGroups": copy.deepcopy(rg),
            },
        )
    )
    add(
        _obj(
            "kueue.x-k8s.io/v1beta2",
            "ClusterQueue",
            {
                "cohortName": "ml",
                "namespaceSelector": {},
                "stopPolicy": "None",
                "preemption": {"reclaimWithinCohort": "Any"},
                "resourceGroups": copy.deepcopy(rg),
            },
        )
    )
    for v in ("v1beta1", "v1beta2"):
        add(_obj(f"kueue.x-k8s.io/{v}", "LocalQueue", {"clusterQueue": "cq"}))
        add(
            _obj(
                f"kueue.x-k8s.io/{v}",
                "ResourceFlavor",
                {
                    "nodeLabels": {"node.kubernetes.io/instance-type": "p5.48xlarge"},
                    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                },
            )
        )
    for v in ("v1alpha1", "v1beta1", "v1beta2"):
        levels = [{"nodeLabel": "topology.k8s.aws/network-node-layer-1"}, {"nodeLabel": "kubernetes.io/hostname"}]
        add(_obj(f"kueue.x-k8s.io/{v}", "Topology", {"levels": levels}))
    for v, kinds in (
        ("v1beta1", ("Controller", "NodeSet", "LoginSet", "Accounting", "RestApi", "Token")),
        ("v1alpha1", ("Controller", "NodeSet", "LoginSet", "Accounting", "RestApi", "Token", "Cluster")),
    ):
        for k in kinds:
            add(_obj(f"slinky.slurm.net/{v}", k, {"anything": {"goes": [1, 2]}}))
    return f


FIXTURES = fixtures()

# --------------------------------------------------------------------------- basic API


def test_every_known_kind_has_a_fixture() -> None:
    # Adding a model without a valid example (or the reverse) should fail here.
    assert set(FIXTURES) == set(KNOWN_CRD_KINDS)


def test_lazy_model_table_agrees_with_the_modules() -> None:
    # models/__init__ names each pair's module and class statically (so importing the package
    # builds no pydantic model); the modules' own MODELS/KINDS declarations are the truth.
    import importlib
    import pkgutil

    import eksmllint.models as package
    from eksmllint.models.common import KubeObject

    declared: dict[tuple[str, str], tuple[str, str]] = {}
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"eksmllint.models.{info.name}")
        for model in getattr(module, "MODELS", ()):
            assert issubclass(model, KubeObject)
            for pair in model.KINDS:
                assert pair not in declared, f"two models for {pair}"
                declared[pair] = (info.name, model.__name__)
    assert declared == package._MODEL_TABLE


def test_importing_the_package_builds_no_model() -> None:
    import subprocess
    import sys

    code = (
        "import sys, eksmllint.models as m; "
        "assert not [n for n in sys.modules if n.startswith('eksmllint.models.') and n != 'eksmllint.models.common'], sorted(sys.modules); "
        "m.model_for('karpenter.sh/v1', 'NodePool'); "
        "assert 'eksmllint.models.karpenter' in sys.modules and 'eksmllint.models.kubeflow' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("pair", sorted(FIXTURES), ids=lambda p: f"{p[0]}/{p[1]}")
def test_valid_manifest_passes(pair: tuple[str, str]) -> None:
    doc = FIXTURES[pair]
    assert validate_crd(copy.deepcopy(doc)) == []
    model = model_for(*pair)
    assert model is not None
    model.model_validate(copy.deepcopy(doc))  # typed access works on valid documents


def test_unknown_kinds_return_none() -> None:
    assert validate_crd({"apiVersion": "v1", "kind": "Pod"}) is None
    assert model_for("v1", "Pod") is None
    # The seed's Slinky kinds do not exist upstream: no model is invented for them.
    for kind in ("SlurmCluster", "SlurmNodeSet"):
        assert model_for("slinky.slurm.net/v1alpha1", kind) is None
        assert validate_crd({"apiVersion": "slinky.slurm.net/v1alpha1", "kind": kind, "spec": {}}) is None
    assert ("slinky.slurm.net/v1alpha1", "SlurmCluster") not in KNOWN_CRD_KINDS


def test_mpijob_versions_have_separate_models() -> None:
    assert model_for("kubeflow.org/v1", "MPIJob") is MPIJobV1
    assert model_for("kubeflow.org/v2beta1", "MPIJob") is MPIJobV2


def test_typed_access_uses_snake_case() -> None:
    np = NodePool.model_validate(nodepool())
    assert np.spec.disruption is not None
    assert np.spec.disruption.consolidation_policy == "WhenEmpty"
    assert np.spec.template.spec.node_class_ref.name == "gpu"
    assert np.spec.limits == {"cpu": 1000, "memory": "4000Gi", "nvidia.com/gpu": 64}
    pj = PyTorchJob.model_validate(pytorchjob())
    assert pj.spec.pytorch_replica_specs["Worker"].replicas == 2
    assert pj.spec.run_policy is not None and pj.spec.run_policy.clean_pod_policy == "None"
    # populate_by_name: snake_case names are accepted too.
    assert (
        NodePool.model_validate(
            {"api_version": "karpenter.sh/v1", "kind": "NodePool", "spec": nodepool()["spec"]}
        ).api_version
        == "karpenter.sh/v1"
    )


# ------------------------------------------------------------------ error reporting


def _paths(issues: list[ModelIssue] | None) -> list[tuple[str | int, ...]]:
    assert issues is not None
    return [i.path for i in issues]


def test_typo_reported_at_path() -> None:
    doc = FIXTURES[("kubeflow.org/v2beta1", "MPIJob")]
    doc = copy.deepcopy(doc)
    doc["spec"]["slotPerWorker"] = doc["spec"].pop("slotsPerWorker")
    issues = validate_crd(doc)
    assert issues == [ModelIssue(("spec", "slotPerWorker"), 'unknown field "spec.slotPerWorker"')]


def test_typo_inside_list_and_map_paths() -> None:
    doc = copy.deepcopy(FIXTURES[("batch.volcano.sh/v1alpha1", "Job")])
    doc["spec"]["tasks"][1]["minAvaliable"] = 1
    assert _paths(validate_crd(doc)) == [("spec", "tasks", 1, "minAvaliable")]
    pj = pytorchjob()
    pj["spec"]["pytorchReplicaSpecs"]["Worker"]["restartpolicy"] = "Never"
    issues = validate_crd(pj)
    assert _paths(issues) == [("spec", "pytorchReplicaSpecs", "Worker", "restartpolicy")]
    assert issues is not None and issues[0].message == 'unknown field "spec.pytorchReplicaSpecs.Worker.restartpolicy"'


def test_field_of_other_mpijob_version_is_unknown() -> None:
    doc = copy.deepcopy(FIXTURES[("kubeflow.org/v1", "MPIJob")])
    doc["spec"]["launcherCreationPolicy"] = "AtStartup"
    assert _paths(validate_crd(doc)) == [("spec", "launcherCreationPolicy")]


def test_enum_violation_message() -> None:
    doc = nodepool()
    doc["spec"]["disruption"]["consolidationPolicy"] = "WhenUnderutilized"  # the v1beta1 name
    issues = validate_crd(doc)
    assert issues == [
        ModelIssue(
            ("spec", "disruption", "consolidationPolicy"),
            '"spec.disruption.consolidationPolicy": must be one of WhenEmpty, '
            'WhenEmptyOrUnderutilized, Balanced (got "WhenUnderutilized")',
        )
    ]


@pytest.mark.parametrize(
    ("pair", "path", "value"),
    [
        (("kubeflow.org/v1", "PyTorchJob"), ("spec", "runPolicy", "cleanPodPolicy"), "Always"),
        (("jobset.x-k8s.io/v1alpha2", "JobSet"), ("spec", "failurePolicy", "restartStrategy"), "Restart"),
        (("batch.volcano.sh/v1alpha1", "Job"), ("spec", "policies", 0, "action"), "RestartJobs"),
        (("batch.volcano.sh/v1alpha1", "Job"), ("spec", "policies", 0, "event"), "PodFail"),
        (("kubeflow.org/v2beta1", "MPIJob"), ("spec", "mpiImplementation"), "OpenMpi"),
        (("karpenter.k8s.aws/v1", "EC2NodeClass"), ("spec", "amiFamily"), "Ubuntu"),
        (("ray.io/v1", "RayCluster"), ("spec", "autoscalerOptions", "upscalingMode"), "Fast"),
        (("kueue.x-k8s.io/v1beta2", "ClusterQueue"), ("spec", "stopPolicy"), "Drain"),
    ],
)
def test_enum_violations(pair: tuple[str, str], path: tuple[str | int, ...], value: str) -> None:
    doc = copy.deepcopy(FIXTURES[pair])
    node: Any = doc
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    issues = validate_crd(doc)
    assert _paths(issues) == [path]
    assert issues is not None and "must be one of" in issues[0].message and f'(got "{value}")' in issues[0].message


def test_missing_required_field() -> None:
    doc = nodepool()
    del doc["spec"]["template"]["spec"]["nodeClassRef"]["group"]
    assert validate_crd(doc) == [
        ModelIssue(
            ("spec", "template", "spec", "nodeClassRef", "group"),
            'missing required field "spec.template.spec.nodeClassRef.group"',
        )
    ]


@pytest.mark.parametrize(
    ("pair", "path"),
    [
        (("karpenter.k8s.aws/v1", "EC2NodeClass"), ("spec", "amiSelectorTerms")),
        (("karpenter.k8s.aws/v1", "EC2NodeClass"), ("spec", "subnetSelectorTerms")),
        (("karpenter.k8s.aws/v1", "EC2NodeClass"), ("spec", "securityGroupSelectorTerms")),
        (("kubeflow.org/v1", "PyTorchJob"), ("spec", "pytorchReplicaSpecs")),
        (("kubeflow.org/v2beta1", "MPIJob"), ("spec", "mpiReplicaSpecs")),
        (("trainer.kubeflow.org/v1alpha1", "TrainJob"), ("spec", "runtimeRef")),
        (("ray.io/v1", "RayCluster"), ("spec", "headGroupSpec")),
        (("jobset.x-k8s.io/v1alpha2", "JobSet"), ("spec", "replicatedJobs", 0, "template")),
        (("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet"), ("spec", "leaderWorkerTemplate", "workerTemplate")),
        (
            ("kueue.x-k8s.io/v1beta2", "ClusterQueue"),
            ("spec", "resourceGroups", 0, "flavors", 0, "resources", 0, "nominalQuota"),
        ),
    ],
)
def test_missing_required_fields(pair: tuple[str, str], path: tuple[str | int, ...]) -> None:
    doc = copy.deepcopy(FIXTURES[pair])
    node: Any = doc
    for part in path[:-1]:
        node = node[part]
    del node[path[-1]]
    issues = validate_crd(doc)
    assert issues is not None
    assert ModelIssue(path, f'missing required field "{format_path(path)}"') in issues


def test_ec2nodeclass_role_xor_instance_profile() -> None:
    doc = ec2nodeclass()
    doc["spec"]["instanceProfile"] = "profile"
    issues = validate_crd(doc)
    assert _paths(issues) == [("spec",)]
    assert issues is not None and "exactly one of role, instanceProfile" in issues[0].message
    del doc["spec"]["instanceProfile"], doc["spec"]["role"]
    assert _paths(validate_crd(doc)) == [("spec",)]


def test_wrong_type_string_where_int() -> None:
    doc = copy.deepcopy(FIXTURES[("kubeflow.org/v2beta1", "MPIJob")])
    doc["spec"]["slotsPerWorker"] = "8"
    assert validate_crd(doc) == [
        ModelIssue(("spec", "slotsPerWorker"), '"spec.slotsPerWorker": expected integer (got string "8")')
    ]


@pytest.mark.parametrize(
    ("pair", "path", "value", "expected"),
    [
        (
            ("kubeflow.org/v1", "PyTorchJob"),
            ("spec", "pytorchReplicaSpecs", "Worker", "replicas"),
            "2",
            "expected integer",
        ),
        (("kubeflow.org/v1", "PyTorchJob"), ("spec", "nprocPerNode"), 8, "expected string"),  # CRD type string
        (
            ("ray.io/v1", "RayCluster"),
            ("spec", "workerGroupSpecs", 0, "rayStartParams", "num-gpus"),
            8,
            "expected string",
        ),
        (("ray.io/v1", "RayCluster"), ("spec", "enableInTreeAutoscaling"), "true", "expected boolean"),
        (("karpenter.sh/v1", "NodePool"), ("spec", "weight"), True, "expected integer"),
        (("karpenter.sh/v1", "NodePool"), ("spec", "limits", "nvidia.com/gpu"), "lots", "expected a quantity"),
        (("karpenter.sh/v1", "NodePool"), ("spec", "disruption", "budgets", 0, "nodes"), 0, "must be a node count"),
        (("karpenter.sh/v1", "NodePool"), ("spec", "disruption", "consolidateAfter"), "5 min", "must be a duration"),
        (("jobset.x-k8s.io/v1alpha2", "JobSet"), ("spec", "replicatedJobs"), {"name": "x"}, "expected a list"),
        (
            ("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet"),
            ("spec", "rolloutStrategy", "rollingUpdateConfiguration", "maxSurge"),
            1.5,
            "expected integer or string",
        ),
    ],
)
def test_wrong_types(pair: tuple[str, str], path: tuple[str | int, ...], value: Any, expected: str) -> None:
    doc = copy.deepcopy(FIXTURES[pair])
    node: Any = doc
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    issues = validate_crd(doc)
    assert _paths(issues) == [path]
    assert issues is not None and expected in issues[0].message


def test_replica_type_keys_checked_case_insensitively() -> None:
    doc = pytorchjob()
    specs = doc["spec"]["pytorchReplicaSpecs"]
    specs["worker"] = specs.pop("Worker")  # the operator normalises the case: valid
    assert validate_crd(doc) == []
    specs["Wroker"] = specs.pop("worker")
    issues = validate_crd(doc)
    assert issues == [
        ModelIssue(
            ("spec", "pytorchReplicaSpecs", "Wroker"),
            'unknown replica type "spec.pytorchReplicaSpecs.Wroker" (expected one of Master, Worker)',
        )
    ]


def test_metadata_must_be_a_mapping_and_status_is_accepted() -> None:
    doc = pytorchjob()
    doc["status"] = {"conditions": [{"type": "Running", "status": "True"}]}
    assert validate_crd(doc) == []
    doc["metadata"] = ["name", "x"]
    assert _paths(validate_crd(doc)) == [("metadata",)]


def test_template_placeholders_are_not_type_errors() -> None:
    doc = pytorchjob()
    doc["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] = "$NUM_NODES"
    doc["spec"]["runPolicy"]["ttlSecondsAfterFinished"] = "${TTL}"
    doc["spec"]["runPolicy"]["cleanPodPolicy"] = "{{ .Values.cleanPodPolicy }}"
    assert validate_crd(doc) == []
    doc["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] = "PLACEHOLDER_NUM_NODES"  # a fill-me-in marker
    assert validate_crd(doc) == []
    doc["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] = "num_nodes"  # a word, not a placeholder
    assert _paths(validate_crd(doc)) == [("spec", "pytorchReplicaSpecs", "Worker", "replicas")]


def test_issue_cap() -> None:
    doc = nodepool()
    for i in range(50):
        doc["spec"][f"bogus{i}"] = i
    issues = validate_crd(doc)
    assert issues is not None and len(issues) == MAX_ISSUES


def test_format_path() -> None:
    assert format_path(("spec", "tasks", 0, "name")) == "spec.tasks[0].name"
    assert format_path(("spec", "limits", "nvidia.com/gpu")) == "spec.limits[nvidia.com/gpu]"
    assert format_path(()) == ""


# ----------------------------------------------------------------------- robustness

_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=8))
_json = st.recursive(
    _scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(pair=st.sampled_from(sorted(FIXTURES)), junk=_json, key=st.sampled_from(["spec", "metadata", "status", "x"]))
def test_never_raises_on_garbage(pair: tuple[str, str], junk: Any, key: str) -> None:
    doc = copy.deepcopy(FIXTURES[pair])
    doc[key] = junk
    issues = validate_crd(doc)
    assert isinstance(issues, list)
    assert all(isinstance(i, ModelIssue) and isinstance(i.message, str) for i in issues)
    assert len(issues) <= MAX_ISSUES


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(pair=st.sampled_from(sorted(FIXTURES)), junk=_json, data=st.data())
def test_never_raises_on_nested_garbage(pair: tuple[str, str], junk: Any, data: st.DataObject) -> None:
    doc = copy.deepcopy(FIXTURES[pair])
    # Replace a random nested value of the spec (apiVersion/kind stay, so a model applies).
    node: Any = doc.get("spec") or {}
    while isinstance(node, dict) and node:
        k = data.draw(st.sampled_from(sorted(node, key=str)))
        if not isinstance(node[k], (dict, list)) or data.draw(st.booleans()):
            node[k] = junk
            break
        node = node[k] if isinstance(node[k], dict) else {}
    issues = validate_crd(doc)
    assert isinstance(issues, list) and len(issues) <= MAX_ISSUES


def test_non_mapping_documents() -> None:
    for doc in (None, [], "text", 3, {"apiVersion": ["v1"], "kind": {}}):
        assert validate_crd(doc) is None  # type: ignore[arg-type]


def test_models_are_resolved_once_not_per_document() -> None:
    """What keeps validation cheap (~40 us a document, bench/): the model class is looked up and
    its module imported once, not per document. Counted, not timed (speed is measured in bench/)."""
    from eksmllint.models import _model_class

    docs = [nodepool(), pytorchjob()]
    _model_class.cache_clear()
    for _ in range(50):
        for d in docs:
            assert validate_crd(d) == []
    info = _model_class.cache_info()
    assert (info.misses, info.hits) == (2, 98)


# ------------------------------------------------------------- corpus (false positives)


#: Issues that are real (the manifest as written is invalid for that CRD version).
KNOWN_REAL_ISSUES = {
    # sed-style placeholder left in an integer field (the file is a template for `sed`).
    (
        "aws-samples__awsome-distributed-training/3.test_cases__pytorch__verl__kubernetes__rlvr__setup__raycluster.yaml",
        ("spec", "workerGroupSpecs", 0, "replicas"),
    ),
    # Seed: v1 EC2NodeClass without amiSelectorTerms and without role/instanceProfile.
    ("04-karpenter-gpu-a100-nodepool.yaml", ("spec", "amiSelectorTerms")),
    ("04-karpenter-gpu-a100-nodepool.yaml", ("spec",)),
    ("12-karpenter-trainium-nodepool.yaml", ("spec",)),
}


def _corpus_documents(shared: Path) -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    for root in (shared / "corpus" / "realworld", shared / "seed" / "manifests"):
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*")):
            if path.suffix not in (".yaml", ".yml") or "templated" in path.relative_to(root).parts:
                continue
            try:
                docs = list(yaml.load_all(path.read_text(encoding="utf-8"), Loader=loader))
            except (yaml.YAMLError, UnicodeDecodeError):
                continue
            rel = str(path.relative_to(root))
            out.extend((rel, d) for d in docs if isinstance(d, dict))
    return out


def test_corpus_has_no_false_positives(shared: Path) -> None:
    docs = _corpus_documents(shared)
    checked = 0
    unexpected = []
    for rel, doc in docs:
        issues = validate_crd(doc)
        if issues is None:
            continue
        checked += 1
        for issue in issues:
            if (rel, issue.path) not in KNOWN_REAL_ISSUES:
                unexpected.append(f"{rel}: {issue.message}")
    assert checked > 100  # the corpus really exercised the models
    assert unexpected == []


def test_seed_documents(shared: Path) -> None:
    seed = shared / "seed" / "manifests"
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    mpijob = next(yaml.load_all((seed / "06-mpijob-bert-large-nccl-efa.yaml").read_text(), Loader=loader))
    assert (mpijob["apiVersion"], mpijob["kind"]) == ("kubeflow.org/v1", "MPIJob")
    assert validate_crd(mpijob) == []
    slinky = [d for d in yaml.load_all((seed / "02-slinky-slurmcluster-nodeset.yaml").read_text(), Loader=loader) if d]
    assert {d["kind"] for d in slinky} == {"SlurmCluster", "SlurmNodeSet"}
    assert all(validate_crd(d) is None for d in slinky)
    nodeclass = list(yaml.load_all((seed / "04-karpenter-gpu-a100-nodepool.yaml").read_text(), Loader=loader))[1]
    assert EC2NodeClass is model_for(nodeclass["apiVersion"], nodeclass["kind"])
    issues = validate_crd(nodeclass)
    assert issues is not None
    assert 'missing required field "spec.amiSelectorTerms"' in [i.message for i in issues]


def test_model_classes_leave_pydantic_no_annotation_text_to_eval():
    """Postponed annotations (``from __future__ import annotations``) make pydantic ``eval()`` each
    field's annotation text while building a class; the model modules' annotations are objects."""
    import importlib
    import inspect

    from pydantic import BaseModel

    from eksmllint.models import _MODEL_TABLE

    texts = []
    classes = 0
    for name in sorted({"common", *(module for module, _ in _MODEL_TABLE.values())}):
        module = importlib.import_module(f"eksmllint.models.{name}")
        for cls in vars(module).values():
            if inspect.isclass(cls) and issubclass(cls, BaseModel) and cls.__module__ == module.__name__:
                classes += 1
                texts += [
                    f"{cls.__name__}.{f}" for f, a in vars(cls).get("__annotations__", {}).items() if isinstance(a, str)
                ]
    assert classes > 50
    assert texts == []
