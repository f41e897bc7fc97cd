"""LeaderWorkerSet (``leaderworkerset.x-k8s.io/v1``).

Source: kubernetes-sigs/lws ``api/leaderworkerset/v1/leaderworkerset_types.go``.
"""

# No postponed annotations here: pydantic eval()s each annotation text as it builds a class (see the package doc).

from typing import Annotated

from pydantic import Field

from .common import CRDModel, Int, IntOrString, KubeObject, Obj, ObjList, one_of


class SubGroupPolicy(CRDModel):
    sub_group_policy_type: Annotated[str, one_of("LeaderWorker", "LeaderExcluded")] | None = None
    sub_group_size: Int | None = Field(default=None, ge=1)


class LeaderWorkerTemplate(CRDModel):
    worker_template: Obj
    leader_template: Obj | None = None
    size: Int | None = Field(default=None, ge=1)
    restart_policy: (
        Annotated[str, one_of("Default", "RecreateGroupOnPodRestart", "RecreateGroupAfterStart", "None")] | None
    ) = None
    sub_group_policy: SubGroupPolicy | None = None
    volume_claim_templates: ObjList | None = None
    persistent_volume_claim_retention_policy: Obj | None = None


class RollingUpdateConfiguration(CRDModel):
    partition: Int | None = Field(default=None, ge=0)
    max_unavailable: IntOrString | None = None
    max_surge: IntOrString | None = None


class RolloutStrategy(CRDModel):
    type: Annotated[str, one_of("RollingUpdate")] | None = None
    rolling_update_configuration: RollingUpdateConfiguration | None = None


class NetworkConfig(CRDModel):
    subdomain_policy: Annotated[str, one_of("Shared", "UniquePerReplica")] | None = None


class LeaderWorkerSetSpec(CRDModel):
    leader_worker_template: LeaderWorkerTemplate
    replicas: Int | None = Field(default=None, ge=0)
    rollout_strategy: RolloutStrategy | None = None
    startup_policy: Annotated[str, one_of("LeaderCreated", "LeaderReady")] | None = None
    network_config: NetworkConfig | None = None


class LeaderWorkerSet(KubeObject):
    KINDS = (("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet"),)
    spec: LeaderWorkerSetSpec


MODELS: tuple[type[KubeObject], ...] = (LeaderWorkerSet,)
