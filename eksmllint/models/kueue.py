"""Kueue ``ClusterQueue``, ``LocalQueue`` and ``ResourceFlavor`` (kueue.x-k8s.io v1beta1
and v1beta2).

Source: kubernetes-sigs/kueue ``apis/kueue/v1beta2/*_types.go`` (v1beta1 also read).  The
visible difference between the versions is the cohort field: ``cohort`` in v1beta1,
``cohortName`` in v1beta2; v1beta1 also still has the plain ``admissionChecks`` list.
Policy sub-objects (preemption, flavorFungibility, fairSharing ...) stay opaque.
"""

# No postponed annotations here: pydantic eval()s each annotation text as it builds a class (see the package doc).

from typing import Annotated

from .common import (
    CRDModel,
    KubeObject,
    Obj,
    ObjList,
    Quantity,
    Str,
    StrList,
    StrMap,
    one_of,
)

STOP_POLICIES = ("None", "Hold", "HoldAndDrain")


class ResourceQuota(CRDModel):
    name: Str
    nominal_quota: Quantity
    borrowing_limit: Quantity | None = None
    lending_limit: Quantity | None = None


class FlavorQuotas(CRDModel):
    name: Str
    resources: list[ResourceQuota]


class ResourceGroup(CRDModel):
    covered_resources: StrList
    flavors: list[FlavorQuotas]


class _ClusterQueueSpecBase(CRDModel):
    resource_groups: list[ResourceGroup] | None = None
    queueing_strategy: Annotated[str, one_of("StrictFIFO", "BestEffortFIFO")] | None = None
    namespace_selector: Obj | None = None
    flavor_fungibility: Obj | None = None
    preemption: Obj | None = None
    admission_checks_strategy: Obj | None = None
    stop_policy: Annotated[str, one_of(*STOP_POLICIES)] | None = None
    fair_sharing: Obj | None = None
    admission_scope: Obj | None = None


class ClusterQueueV1beta1Spec(_ClusterQueueSpecBase):
    cohort: Str | None = None
    admission_checks: StrList | None = None


class ClusterQueueV1beta2Spec(_ClusterQueueSpecBase):
    cohort_name: Str | None = None
    concurrent_admission_policy: Obj | None = None


class ClusterQueueV1beta1(KubeObject):
    KINDS = (("kueue.x-k8s.io/v1beta1", "ClusterQueue"),)
    spec: ClusterQueueV1beta1Spec | None = None


class ClusterQueue(KubeObject):
    """``kueue.x-k8s.io/v1beta2`` ClusterQueue."""

    KINDS = (("kueue.x-k8s.io/v1beta2", "ClusterQueue"),)
    spec: ClusterQueueV1beta2Spec | None = None


class LocalQueueSpec(CRDModel):
    cluster_queue: Str | None = None
    stop_policy: Annotated[str, one_of(*STOP_POLICIES)] | None = None
    fair_sharing: Obj | None = None
    wall_time_policy: Obj | None = None


class LocalQueue(KubeObject):
    KINDS = (("kueue.x-k8s.io/v1beta1", "LocalQueue"), ("kueue.x-k8s.io/v1beta2", "LocalQueue"))
    spec: LocalQueueSpec | None = None


class ResourceFlavorSpec(CRDModel):
    node_labels: StrMap | None = None
    node_taints: ObjList | None = None
    tolerations: ObjList | None = None
    topology_name: Str | None = None


class ResourceFlavor(KubeObject):
    KINDS = (("kueue.x-k8s.io/v1beta1", "ResourceFlavor"), ("kueue.x-k8s.io/v1beta2", "ResourceFlavor"))
    spec: ResourceFlavorSpec | None = None


class TopologyLevel(CRDModel):
    node_label: Str


class TopologySpec(CRDModel):
    levels: list[TopologyLevel]


class Topology(KubeObject):
    """Topology-aware scheduling's hierarchy of node labels (v1alpha1 from Kueue 0.9, then v1beta1
    and v1beta2 with the other Kueue APIs; ``apis/kueue/*/topology_types.go``)."""

    KINDS = (
        ("kueue.x-k8s.io/v1alpha1", "Topology"),
        ("kueue.x-k8s.io/v1beta1", "Topology"),
        ("kueue.x-k8s.io/v1beta2", "Topology"),
    )
    spec: TopologySpec | None = None


MODELS: tuple[type[KubeObject], ...] = (ClusterQueueV1beta1, ClusterQueue, LocalQueue, ResourceFlavor, Topology)
