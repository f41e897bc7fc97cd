"""KubeRay ``RayCluster``, ``RayJob`` and (loosely) ``RayService`` (ray.io/v1).

Source: ray-project/kuberay ``ray-operator/apis/ray/v1/{raycluster,rayjob}_types.go`` and
``docs/reference/api.md``.  Fields added in recent releases (group ``resources``/``labels``,
``authOptions``, ``upgradeStrategy``, ``deletionStrategy``) are accepted so manifests for
any current release validate.  ``rayStartParams`` is ``map[string]string`` in the CRD: an
unquoted number there (``num-gpus: 8``) is rejected by the API server, and reported here.
"""

# No postponed annotations here: pydantic eval()s each annotation text as it builds a class (see the package doc).

from typing import Annotated

from pydantic import Field

from .common import (
    Bool,
    CRDModel,
    Float,
    Int,
    KubeObject,
    LooseModel,
    Obj,
    ObjList,
    Str,
    StrList,
    StrMap,
    one_of,
)


class AutoscalerOptions(CRDModel):
    resources: Obj | None = None
    image: Str | None = None
    image_pull_policy: Str | None = None
    security_context: Obj | None = None
    idle_timeout_seconds: Int | None = None
    upscaling_mode: Annotated[str, one_of("Default", "Aggressive", "Conservative")] | None = None
    version: Annotated[str, one_of("v1", "v2")] | None = None
    env: ObjList | None = None
    env_from: ObjList | None = None
    volume_mounts: ObjList | None = None


class HeadGroupSpec(CRDModel):
    template: Obj
    head_service: Obj | None = None
    enable_ingress: Bool | None = None
    ray_start_params: StrMap | None = None
    service_type: Str | None = None
    resources: StrMap | None = None
    labels: StrMap | None = None


class ScaleStrategy(CRDModel):
    workers_to_delete: StrList | None = None
    multihost_replicas_to_delete: StrList | None = None


class WorkerGroupSpec(CRDModel):
    group_name: Str
    template: Obj
    suspend: Bool | None = None
    replicas: Int | None = Field(default=None, ge=0)
    min_replicas: Int | None = Field(default=None, ge=0)
    max_replicas: Int | None = Field(default=None, ge=0)
    idle_timeout_seconds: Int | None = None
    ray_start_params: StrMap | None = None
    scale_strategy: ScaleStrategy | None = None
    num_of_hosts: Int | None = Field(default=None, ge=1)
    resources: StrMap | None = None
    labels: StrMap | None = None


class RayClusterSpec(CRDModel):
    head_group_spec: HeadGroupSpec
    worker_group_specs: list[WorkerGroupSpec] | None = None
    ray_version: Str | None = None
    enable_in_tree_autoscaling: Bool | None = None
    autoscaler_options: AutoscalerOptions | None = None
    head_service_annotations: StrMap | None = None
    suspend: Bool | None = None
    managed_by: Str | None = None
    gcs_fault_tolerance_options: Obj | None = None
    upgrade_strategy: Obj | None = None
    auth_options: Obj | None = None


class RayCluster(KubeObject):
    KINDS = (("ray.io/v1", "RayCluster"),)
    spec: RayClusterSpec


class SubmitterConfig(CRDModel):
    backoff_limit: Int | None = None


class RayJobSpec(CRDModel):
    entrypoint: Str | None = None
    ray_cluster_spec: RayClusterSpec | None = None
    cluster_selector: StrMap | None = None
    runtime_env_yaml: Str | None = Field(default=None, alias="runtimeEnvYAML")
    job_id: Str | None = None
    submission_mode: Annotated[str, one_of("K8sJobMode", "HTTPMode", "InteractiveMode", "SidecarMode")] | None = None
    submitter_pod_template: Obj | None = None
    submitter_config: SubmitterConfig | None = None
    entrypoint_num_cpus: Float | None = None
    entrypoint_num_gpus: Float | None = None
    entrypoint_resources: Str | None = None
    shutdown_after_job_finishes: Bool | None = None
    ttl_seconds_after_finished: Int | None = Field(default=None, ge=0)
    active_deadline_seconds: Int | None = None
    backoff_limit: Int | None = None
    suspend: Bool | None = None
    managed_by: Str | None = None
    metadata: StrMap | None = None
    deletion_policy: Annotated[str, one_of("DeleteCluster", "DeleteWorkers", "DeleteSelf", "DeleteNone")] | None = None
    deletion_strategy: Obj | None = None
    schedule: Str | None = None


class RayJob(KubeObject):
    KINDS = (("ray.io/v1", "RayJob"),)
    spec: RayJobSpec


class RayServiceSpec(LooseModel):
    """Loosely modelled: serving is outside eksmllint's focus, keep only the basics."""

    ray_cluster_config: Obj | None = None
    serve_config_v2: Str | None = Field(default=None, alias="serveConfigV2")


class RayService(KubeObject):
    KINDS = (("ray.io/v1", "RayService"),)
    spec: RayServiceSpec | None = None


MODELS: tuple[type[KubeObject], ...] = (RayCluster, RayJob, RayService)
