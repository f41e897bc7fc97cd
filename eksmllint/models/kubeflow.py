"""Kubeflow training CRDs.

* Training Operator v1 (``kubeflow.org/v1``): PyTorchJob, TFJob, MPIJob, XGBoostJob,
  PaddleJob, JAXJob - from kubeflow/training-operator ``pkg/apis/kubeflow.org/v1``.
* MPI Operator (``kubeflow.org/v2beta1``): MPIJob - from kubeflow/mpi-operator
  ``pkg/apis/kubeflow/v2beta1/types.go``.  v1 and v2beta1 share the CRD name
  ``mpijobs.kubeflow.org`` but not their fields; each version gets its own model so a
  field of the other version is reported as unknown.
* Trainer v2 (``trainer.kubeflow.org/v1alpha1``): TrainJob, and TrainingRuntime /
  ClusterTrainingRuntime loosely (their ``template`` is a whole JobSet spec).

Replica-type maps (``pytorchReplicaSpecs`` ...) are checked against the roles each
operator accepts; the operators normalise the case of these keys before validating, so
the comparison is case-insensitive.
"""

# No postponed annotations here: pydantic eval()s each annotation text as it builds a class (see the package doc).

from typing import Annotated, Any

from pydantic import Field

from .common import (
    Bool,
    CRDModel,
    Int,
    IntOrString,
    KubeObject,
    ModelIssue,
    Obj,
    ObjList,
    ResourceList,
    Str,
    StrList,
    check_map_keys,
    one_of,
)

RESTART_POLICIES = ("Always", "OnFailure", "Never", "ExitCode")
CLEAN_POD_POLICIES = ("All", "Running", "None")


class ReplicaSpec(CRDModel):
    """``ReplicaSpec`` shared by all Kubeflow v1 jobs (and mpi-operator v2beta1)."""

    replicas: Int | None = Field(default=None, ge=0)
    template: Obj | None = None
    restart_policy: Annotated[str, one_of(*RESTART_POLICIES)] | None = None


class SchedulingPolicy(CRDModel):
    min_available: Int | None = None
    queue: Str | None = None
    min_resources: ResourceList | None = None
    priority_class: Str | None = None
    schedule_timeout_seconds: Int | None = None


class RunPolicy(CRDModel):
    clean_pod_policy: Annotated[str, one_of(*CLEAN_POD_POLICIES)] | None = None
    ttl_seconds_after_finished: Int | None = None
    active_deadline_seconds: Int | None = None
    backoff_limit: Int | None = None
    scheduling_policy: SchedulingPolicy | None = None
    suspend: Bool | None = None
    managed_by: Str | None = None


def _roles_issues(obj: dict[str, Any], field: str, roles: tuple[str, ...]) -> list[ModelIssue]:
    return check_map_keys(obj, ("spec", field), roles, "replica type")


# ------------------------------------------------------------------------- PyTorchJob


class RDZVConf(CRDModel):
    key: Str | None = None
    value: Str | None = None


class ElasticPolicy(CRDModel):
    min_replicas: Int | None = None
    max_replicas: Int | None = None
    rdzv_backend: Annotated[str, one_of("c10d", "etcd", "etcd-v2")] | None = None
    rdzv_port: Int | None = None
    rdzv_host: Str | None = None
    rdzv_id: Str | None = None
    rdzv_conf: list[RDZVConf] | None = None
    standalone: Bool | None = None
    n_proc_per_node: Int | None = Field(default=None, alias="nProcPerNode")  # deprecated since v1.7
    max_restarts: Int | None = None
    metrics: ObjList | None = None


class PyTorchJobSpec(CRDModel):
    pytorch_replica_specs: dict[str, ReplicaSpec] = Field(alias="pytorchReplicaSpecs")
    run_policy: RunPolicy | None = None
    elastic_policy: ElasticPolicy | None = None
    # CRD type is string: "auto", "cpu", "gpu" or a number such as "8".
    nproc_per_node: Str | None = Field(default=None, alias="nprocPerNode")


class PyTorchJob(KubeObject):
    KINDS = (("kubeflow.org/v1", "PyTorchJob"),)
    spec: PyTorchJobSpec

    @classmethod
    def extra_issues(cls, obj: dict[str, Any]) -> list[ModelIssue]:
        return _roles_issues(obj, "pytorchReplicaSpecs", ("Master", "Worker"))


# ------------------------------------------------------------------------------ TFJob


class TFJobSpec(CRDModel):
    tf_replica_specs: dict[str, ReplicaSpec] = Field(alias="tfReplicaSpecs")
    run_policy: RunPolicy | None = None
    success_policy: Annotated[str, one_of("", "AllWorkers")] | None = None
    enable_dynamic_worker: Bool | None = None


class TFJob(KubeObject):
    KINDS = (("kubeflow.org/v1", "TFJob"),)
    spec: TFJobSpec

    @classmethod
    def extra_issues(cls, obj: dict[str, Any]) -> list[ModelIssue]:
        return _roles_issues(obj, "tfReplicaSpecs", ("PS", "Worker", "Chief", "Master", "Evaluator"))


# ----------------------------------------------------------------------- MPIJob (v1)


class MPIJobV1Spec(CRDModel):
    mpi_replica_specs: dict[str, ReplicaSpec] = Field(alias="mpiReplicaSpecs")
    slots_per_worker: Int | None = None
    clean_pod_policy: Annotated[str, one_of(*CLEAN_POD_POLICIES)] | None = None  # deprecated, use runPolicy
    main_container: Str | None = None
    run_policy: RunPolicy | None = None


class MPIJobV1(KubeObject):
    """``kubeflow.org/v1`` MPIJob (Training Operator)."""

    KINDS = (("kubeflow.org/v1", "MPIJob"),)
    spec: MPIJobV1Spec

    @classmethod
    def extra_issues(cls, obj: dict[str, Any]) -> list[ModelIssue]:
        return _roles_issues(obj, "mpiReplicaSpecs", ("Launcher", "Worker"))


# ------------------------------------------------------------- XGBoost / Paddle / JAX


class XGBoostJobSpec(CRDModel):
    xgb_replica_specs: dict[str, ReplicaSpec] = Field(alias="xgbReplicaSpecs")
    run_policy: RunPolicy | None = None


class XGBoostJob(KubeObject):
    KINDS = (("kubeflow.org/v1", "XGBoostJob"),)
    spec: XGBoostJobSpec

    @classmethod
    def extra_issues(cls, obj: dict[str, Any]) -> list[ModelIssue]:
        return _roles_issues(obj, "xgbReplicaSpecs", ("Master", "Worker"))


class PaddleElasticPolicy(CRDModel):
    min_replicas: Int | None = None
    max_replicas: Int | None = None
    max_restarts: Int | None = None
    metrics: ObjList | None = None


class PaddleJobSpec(CRDModel):
    paddle_replica_specs: dict[str, ReplicaSpec] = Field(alias="paddleReplicaSpecs")
    run_policy: RunPolicy | None = None
    elastic_policy: PaddleElasticPolicy | None = None


class PaddleJob(KubeObject):
    KINDS = (("kubeflow.org/v1", "PaddleJob"),)
    spec: PaddleJobSpec

    @classmethod
    def extra_issues(cls, obj: dict[str, Any]) -> list[ModelIssue]:
        return _roles_issues(obj, "paddleReplicaSpecs", ("Master", "Worker"))


class JAXJobSpec(CRDModel):
    jax_replica_specs: dict[str, ReplicaSpec] = Field(alias="jaxReplicaSpecs")
    run_policy: RunPolicy | None = None


class JAXJob(KubeObject):
    KINDS = (("kubeflow.org/v1", "JAXJob"),)
    spec: JAXJobSpec

    @classmethod
    def extra_issues(cls, obj: dict[str, Any]) -> list[ModelIssue]:
        return _roles_issues(obj, "jaxReplicaSpecs", ("Worker",))


# ------------------------------------------------------------------ MPIJob (v2beta1)


class MPIJobV2Spec(CRDModel):
    mpi_replica_specs: dict[str, ReplicaSpec] = Field(alias="mpiReplicaSpecs")
    slots_per_worker: Int | None = None
    run_launcher_as_worker: Bool | None = None
    ssh_auth_mount_path: Str | None = None
    launcher_creation_policy: Annotated[str, one_of("AtStartup", "WaitForWorkersReady")] | None = None
    mpi_implementation: Annotated[str, one_of("OpenMPI", "Intel", "MPICH")] | None = None
    run_policy: RunPolicy | None = None
    wait_for_workers: Bool | None = None  # early v2beta1 releases only


class MPIJobV2(KubeObject):
    """``kubeflow.org/v2beta1`` MPIJob (mpi-operator)."""

    KINDS = (("kubeflow.org/v2beta1", "MPIJob"),)
    spec: MPIJobV2Spec

    @classmethod
    def extra_issues(cls, obj: dict[str, Any]) -> list[ModelIssue]:
        return _roles_issues(obj, "mpiReplicaSpecs", ("Launcher", "Worker"))


# ----------------------------------------------------------------- Trainer v2 TrainJob


class RuntimeRef(CRDModel):
    name: Str
    api_group: Str | None = None
    kind: Annotated[str, one_of("ClusterTrainingRuntime", "TrainingRuntime")] | None = None


class Trainer(CRDModel):
    image: Str | None = None
    command: StrList | None = None
    args: StrList | None = None
    env: ObjList | None = None
    num_nodes: Int | None = None
    resources_per_node: Obj | None = None
    # int at HEAD; IntOrString ("auto") in the first v2 releases.
    num_proc_per_node: IntOrString | None = None


class TrainJobSpec(CRDModel):
    runtime_ref: RuntimeRef
    initializer: Obj | None = None
    trainer: Trainer | None = None
    runtime_patches: ObjList | None = None
    suspend: Bool | None = None
    active_deadline_seconds: Int | None = Field(default=None, ge=1)
    managed_by: Str | None = None
    # Earlier v1alpha1 releases:
    labels: dict[str, Str] | None = None
    annotations: dict[str, Str] | None = None
    pod_spec_overrides: ObjList | None = None
    pod_template_overrides: ObjList | None = None


class TrainJob(KubeObject):
    KINDS = (("trainer.kubeflow.org/v1alpha1", "TrainJob"),)
    spec: TrainJobSpec


class TrainingRuntimeSpec(CRDModel):
    """Top-level keys are checked; the policies and the JobSet template stay opaque."""

    ml_policy: Obj | None = Field(default=None, alias="mlPolicy")
    pod_group_policy: Obj | None = None
    template: Obj | None = None


class TrainingRuntime(KubeObject):
    KINDS = (
        ("trainer.kubeflow.org/v1alpha1", "TrainingRuntime"),
        ("trainer.kubeflow.org/v1alpha1", "ClusterTrainingRuntime"),
    )
    spec: TrainingRuntimeSpec | None = None


MODELS: tuple[type[KubeObject], ...] = (
    PyTorchJob,
    TFJob,
    MPIJobV1,
    XGBoostJob,
    PaddleJob,
    JAXJob,
    MPIJobV2,
    TrainJob,
    TrainingRuntime,
)
