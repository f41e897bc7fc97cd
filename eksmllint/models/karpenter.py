"""Karpenter ``NodePool`` (karpenter.sh) and ``EC2NodeClass`` (karpenter.k8s.aws).

v1 is modelled field by field from the upstream CRDs (kubernetes-sigs/karpenter
``pkg/apis/v1/nodepool.go``, aws/karpenter-provider-aws ``pkg/apis/v1/ec2nodeclass.go`` and
``pkg/apis/crds``).  Fields that only exist in some v1.x releases (``replicas`` for static
NodePools, the ``Balanced`` policy, ``consolidateWhen``) are accepted so that a manifest
valid for *some* supported release does not fail.  v1beta1 is modelled loosely: EML003
reports the deprecation, and its field set is different enough (``expireAfter`` under
``disruption``, ``nodeClassRef.apiVersion``) that strict checks would only add noise.
"""

# No postponed annotations here: pydantic eval()s each annotation text as it builds a class (see the package doc).

from typing import Annotated, Any

from pydantic import Field

from .common import (
    Bool,
    CRDModel,
    Duration,
    Float,
    Int,
    KubeObject,
    LooseModel,
    ModelIssue,
    Obj,
    ObjList,
    Quantity,
    Str,
    StrList,
    StrMap,
    one_of,
    pattern,
)

CONSOLIDATION_POLICIES = ("WhenEmpty", "WhenEmptyOrUnderutilized", "Balanced")
REQUIREMENT_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte", "Lte")
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
AMI_FAMILIES = ("AL2", "AL2023", "Bottlerocket", "Custom", "Windows2019", "Windows2022", "Windows2025")

# ----------------------------------------------------------------------------- NodePool


class NodeClassReference(CRDModel):
    group: Str
    kind: Str
    name: Str


class NodeSelectorRequirementWithMinValues(CRDModel):
    key: Str
    operator: Annotated[str, one_of(*REQUIREMENT_OPERATORS)]
    values: StrList | None = None
    min_values: Int | None = Field(default=None, ge=1, le=50)


class Taint(CRDModel):
    key: Str
    effect: Annotated[str, one_of(*TAINT_EFFECTS)]
    value: Str | None = None
    time_added: Str | None = None


class NodeClaimTemplateMetadata(CRDModel):
    labels: StrMap | None = None
    annotations: StrMap | None = None


class NodeClaimTemplateSpec(CRDModel):
    requirements: list[NodeSelectorRequirementWithMinValues]
    node_class_ref: NodeClassReference
    taints: list[Taint] | None = None
    startup_taints: list[Taint] | None = None
    expire_after: Duration | None = None
    termination_grace_period: (
        Annotated[str, pattern(r"^([0-9]+(s|m|h))+$", 'a duration such as "30s", "10m" or "48h"')] | None
    ) = None


class NodeClaimTemplate(CRDModel):
    metadata: NodeClaimTemplateMetadata | None = None
    spec: NodeClaimTemplateSpec


class Budget(CRDModel):
    # CRD type is string (pattern "10%" or "5"); the API server rejects a bare integer.
    nodes: (
        Annotated[
            str, pattern(r"^((100|[0-9]{1,2})%|[0-9]+)$", 'a node count or percentage string such as "0" or "10%"')
        ]
        | None
    ) = None
    schedule: Str | None = None
    duration: (
        Annotated[
            str,
            pattern(
                r"^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$", 'a duration in hours/minutes such as "10m" or "1h30m"'
            ),
        ]
        | None
    ) = None
    reasons: list[Annotated[str, one_of("Underutilized", "Empty", "Drifted")]] | None = None


class Disruption(CRDModel):
    consolidate_after: Duration
    consolidation_policy: Annotated[str, one_of(*CONSOLIDATION_POLICIES)] | None = None
    budgets: list[Budget] | None = None
    # Present in some v1.x releases only (cost-aware consolidation / Balanced policy).
    consolidate_when: (
        Annotated[str, one_of("WhenEmpty", "WhenEmptyOrUnderutilized", "WhenCostJustifiesDisruption")] | None
    ) = None
    decision_ratio_threshold: Float | None = None
    consolidation_threshold: Int | None = None


class NodePoolSpec(CRDModel):
    template: NodeClaimTemplate
    disruption: Disruption | None = None
    limits: dict[str, Quantity] | None = None
    weight: Int | None = Field(default=None, ge=1, le=100)
    replicas: Int | None = Field(default=None, ge=0)


class NodePool(KubeObject):
    """``karpenter.sh/v1`` NodePool."""

    KINDS = (("karpenter.sh/v1", "NodePool"),)
    spec: NodePoolSpec


# ------------------------------------------------------------------------- EC2NodeClass


class SubnetSelectorTerm(CRDModel):
    tags: StrMap | None = None
    id: Str | None = None


class SecurityGroupSelectorTerm(CRDModel):
    tags: StrMap | None = None
    id: Str | None = None
    name: Str | None = None


class AMISelectorTerm(CRDModel):
    alias: Str | None = None
    tags: StrMap | None = None
    id: Str | None = None
    name: Str | None = None
    owner: Str | None = None
    ssm_parameter: Str | None = None


class CapacityReservationSelectorTerm(CRDModel):
    tags: StrMap | None = None
    id: Str | None = None
    owner_id: Str | None = Field(default=None, alias="ownerID")
    instance_match_criteria: Annotated[str, one_of("open", "targeted")] | None = None


class KubeletConfiguration(CRDModel):
    cluster_dns: StrList | None = Field(default=None, alias="clusterDNS")
    max_pods: Int | None = Field(default=None, ge=0)
    pods_per_core: Int | None = Field(default=None, ge=0)
    system_reserved: StrMap | None = None
    kube_reserved: StrMap | None = None
    eviction_hard: StrMap | None = None
    eviction_soft: StrMap | None = None
    eviction_soft_grace_period: StrMap | None = None
    eviction_max_pod_grace_period: Int | None = None
    image_gc_high_threshold_percent: Int | None = Field(default=None, ge=0, le=100, alias="imageGCHighThresholdPercent")
    image_gc_low_threshold_percent: Int | None = Field(default=None, ge=0, le=100, alias="imageGCLowThresholdPercent")
    cpu_cfs_quota: Bool | None = Field(default=None, alias="cpuCFSQuota")


class MetadataOptions(CRDModel):
    http_endpoint: Annotated[str, one_of("enabled", "disabled")] | None = Field(default=None, alias="httpEndpoint")
    http_protocol_ipv6: Annotated[str, one_of("enabled", "disabled")] | None = Field(
        default=None, alias="httpProtocolIPv6"
    )
    http_put_response_hop_limit: Int | None = Field(default=None, ge=1, le=64, alias="httpPutResponseHopLimit")
    http_tokens: Annotated[str, one_of("required", "optional")] | None = Field(default=None, alias="httpTokens")


class BlockDevice(CRDModel):
    delete_on_termination: Bool | None = None
    encrypted: Bool | None = None
    iops: Int | None = None
    kms_key_id: Str | None = Field(default=None, alias="kmsKeyID")
    snapshot_id: Str | None = Field(default=None, alias="snapshotID")
    throughput: Int | None = None
    volume_initialization_rate: Int | None = None
    volume_size: Quantity | None = None
    volume_type: Annotated[str, one_of("standard", "io1", "io2", "gp2", "sc1", "st1", "gp3")] | None = None


class BlockDeviceMapping(CRDModel):
    device_name: Str | None = None
    ebs: BlockDevice | None = None
    root_volume: Bool | None = None


class EnclaveOptions(CRDModel):
    enabled: Bool | None = None


class EC2NodeClassSpec(CRDModel):
    subnet_selector_terms: list[SubnetSelectorTerm]
    security_group_selector_terms: list[SecurityGroupSelectorTerm]
    ami_selector_terms: list[AMISelectorTerm]
    ami_family: Annotated[str, one_of(*AMI_FAMILIES)] | None = None
    capacity_reservation_selector_terms: list[CapacityReservationSelectorTerm] | None = None
    associate_public_ip_address: Bool | None = Field(default=None, alias="associatePublicIPAddress")
    ip_prefix_count: Int | None = Field(default=None, ge=0, alias="ipPrefixCount")
    user_data: Str | None = None
    role: Str | None = None
    instance_profile: Str | None = None
    tags: StrMap | None = None
    kubelet: KubeletConfiguration | None = None
    block_device_mappings: list[BlockDeviceMapping] | None = None
    instance_store_policy: Annotated[str, one_of("RAID0")] | None = None
    detailed_monitoring: Bool | None = None
    metadata_options: MetadataOptions | None = None
    enclave_options: EnclaveOptions | None = None
    context: Str | None = None
    # Newer v1.x additions; their inner shape is still moving, so kept opaque.
    network_interfaces: ObjList | None = None
    placement_group_selector: Any = None


class EC2NodeClass(KubeObject):
    """``karpenter.k8s.aws/v1`` EC2NodeClass."""

    KINDS = (("karpenter.k8s.aws/v1", "EC2NodeClass"),)
    spec: EC2NodeClassSpec

    @classmethod
    def extra_issues(cls, obj: dict[str, Any]) -> list[ModelIssue]:
        # CRD CEL rule: "must specify exactly one of ['role', 'instanceProfile']".
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return []
        has_role = spec.get("role") is not None
        has_profile = spec.get("instanceProfile") is not None
        if has_role == has_profile:
            which = "both are set" if has_role else "neither is set"
            return [ModelIssue(("spec",), f'"spec": must set exactly one of role, instanceProfile ({which})')]
        return []


# ------------------------------------------------------------------------------ v1beta1


class NodePoolV1beta1Spec(LooseModel):
    template: Obj
    disruption: Obj | None = None
    limits: dict[str, Quantity] | None = None
    weight: Int | None = None


class NodePoolV1beta1(KubeObject):
    """``karpenter.sh/v1beta1`` NodePool, loosely (deprecated; EML003)."""

    KINDS = (("karpenter.sh/v1beta1", "NodePool"),)
    spec: NodePoolV1beta1Spec


class EC2NodeClassV1beta1Spec(LooseModel):
    subnet_selector_terms: ObjList
    security_group_selector_terms: ObjList
    ami_family: Str | None = None


class EC2NodeClassV1beta1(KubeObject):
    """``karpenter.k8s.aws/v1beta1`` EC2NodeClass, loosely (deprecated; EML003)."""

    KINDS = (("karpenter.k8s.aws/v1beta1", "EC2NodeClass"),)
    spec: EC2NodeClassV1beta1Spec


MODELS: tuple[type[KubeObject], ...] = (NodePool, EC2NodeClass, NodePoolV1beta1, EC2NodeClassV1beta1)
