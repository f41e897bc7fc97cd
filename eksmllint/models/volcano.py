"""Volcano ``Job`` (batch.volcano.sh/v1alpha1), ``Queue`` and ``PodGroup``
(scheduling.volcano.sh/v1beta1), and the scheduler-plugins coscheduling ``PodGroup``
(scheduling.x-k8s.io/v1alpha1).

Sources: volcano-sh/apis ``pkg/apis/batch/v1alpha1/job.go``, ``pkg/apis/bus/v1alpha1``
(events and actions) and ``pkg/apis/scheduling/v1beta1/types.go``; the coscheduling
PodGroup fields are the ones the Kubeflow Trainer coscheduling plugin sets.
"""

# No postponed annotations here: pydantic eval()s each annotation text as it builds a class (see the package doc).

from typing import Annotated, Any

from pydantic import Field

from .common import (
    Bool,
    CRDModel,
    Int,
    KubeObject,
    Obj,
    ObjList,
    ResourceList,
    Str,
    StrList,
    one_of,
)

VOLCANO_EVENTS = (
    "*",
    "PodFailed",
    "PodEvicted",
    "PodPending",
    "PodRunning",
    "Unknown",
    "TaskCompleted",
    "OutOfSync",
    "CommandIssued",
    "JobUpdated",
    "TaskFailed",
)
VOLCANO_ACTIONS = (
    "AbortJob",
    "RestartJob",
    "RestartTask",
    "RestartPod",
    "RestartPartition",
    "TerminateJob",
    "CompleteJob",
    "ResumeJob",
    "SyncJob",
    "EnqueueJob",
    "SyncQueue",
    "OpenQueue",
    "CloseQueue",
)


class LifecyclePolicy(CRDModel):
    action: Annotated[str, one_of(*VOLCANO_ACTIONS)] | None = None
    event: Annotated[str, one_of(*VOLCANO_EVENTS)] | None = None
    events: list[Annotated[str, one_of(*VOLCANO_EVENTS)]] | None = None
    exit_code: Int | None = None
    timeout: Str | None = None


class DependsOn(CRDModel):
    name: StrList | None = None
    iteration: Annotated[str, one_of("any", "all")] | None = None


class NetworkTopologySpec(CRDModel):
    mode: Annotated[str, one_of("hard", "soft")] | None = None
    highest_tier_allowed: Int | None = None
    highest_tier_name: Str | None = None


class TaskSpec(CRDModel):
    name: Str | None = None
    replicas: Int | None = Field(default=None, ge=0)
    min_available: Int | None = Field(default=None, ge=0)
    template: Obj | None = None
    policies: list[LifecyclePolicy] | None = None
    topology_policy: Annotated[str, one_of("none", "best-effort", "restricted", "single-numa-node")] | None = None
    max_retry: Int | None = None
    depends_on: DependsOn | None = None
    partition_policy: Obj | None = None


class VolumeSpec(CRDModel):
    mount_path: Str
    volume_claim_name: Str | None = None
    volume_claim: Obj | None = None


class VolcanoJobSpec(CRDModel):
    scheduler_name: Str | None = None
    min_available: Int | None = Field(default=None, ge=0)
    volumes: list[VolumeSpec] | None = None
    tasks: list[TaskSpec] | None = None
    policies: list[LifecyclePolicy] | None = None
    plugins: dict[str, StrList | None] | None = None
    running_estimate: Str | None = None
    queue: Str | None = None
    max_retry: Int | None = None
    ttl_seconds_after_finished: Int | None = None
    priority_class_name: Str | None = None
    min_success: Int | None = Field(default=None, ge=1)
    network_topology: NetworkTopologySpec | None = None


class VolcanoJob(KubeObject):
    """``batch.volcano.sh/v1alpha1`` Job."""

    KINDS = (("batch.volcano.sh/v1alpha1", "Job"),)
    spec: VolcanoJobSpec


# ------------------------------------------------------------------ Queue / PodGroup


class QueueSpec(CRDModel):
    weight: Int | None = Field(default=None, ge=1, le=65535)
    capability: ResourceList | None = None
    reclaimable: Bool | None = None
    extend_clusters: ObjList | None = None
    guarantee: Obj | None = None
    affinity: Obj | None = None
    deserved: ResourceList | None = None
    parent: Str | None = None
    priority: Int | None = None
    type: Str | None = None
    dequeue_strategy: Str | None = None


class VolcanoQueue(KubeObject):
    """``scheduling.volcano.sh/v1beta1`` Queue."""

    KINDS = (("scheduling.volcano.sh/v1beta1", "Queue"),)
    spec: QueueSpec | None = None


class VolcanoPodGroupSpec(CRDModel):
    min_member: Int | None = Field(default=None, ge=0)
    min_task_member: dict[str, Int] | None = None
    queue: Str | None = None
    priority_class_name: Str | None = None
    min_resources: ResourceList | None = None
    network_topology: NetworkTopologySpec | None = None
    sub_group_policy: Any = None


class VolcanoPodGroup(KubeObject):
    """``scheduling.volcano.sh/v1beta1`` PodGroup."""

    KINDS = (("scheduling.volcano.sh/v1beta1", "PodGroup"),)
    spec: VolcanoPodGroupSpec | None = None


class CoschedulingPodGroupSpec(CRDModel):
    min_member: Int | None = Field(default=None, ge=0)
    min_resources: ResourceList | None = None
    schedule_timeout_seconds: Int | None = None


class CoschedulingPodGroup(KubeObject):
    """``scheduling.x-k8s.io/v1alpha1`` PodGroup (scheduler-plugins coscheduling)."""

    KINDS = (("scheduling.x-k8s.io/v1alpha1", "PodGroup"),)
    spec: CoschedulingPodGroupSpec | None = None


MODELS: tuple[type[KubeObject], ...] = (VolcanoJob, VolcanoQueue, VolcanoPodGroup, CoschedulingPodGroup)
