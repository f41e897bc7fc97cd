"""JobSet (``jobset.x-k8s.io/v1alpha2``).

Source: kubernetes-sigs/jobset ``api/jobset/v1alpha2/jobset_types.go``.  The child Job
``template`` is a batch ``JobTemplateSpec`` and stays opaque (core validation).
"""

# No postponed annotations here: pydantic eval()s each annotation text as it builds a class (see the package doc).

from typing import Annotated

from pydantic import Field

from .common import Bool, CRDModel, Int, KubeObject, Obj, ObjList, Str, StrList, one_of

FAILURE_POLICY_ACTIONS = (
    "FailJobSet",
    "RestartJobSet",
    "RestartJobSetAndIgnoreMaxRestarts",
    "RestartJob",
    "RestartJobAndIgnoreMaxRestarts",
)
RESTART_STRATEGIES = ("Recreate", "BlockingRecreate", "InPlaceRestart")


class DependsOn(CRDModel):
    name: Str
    status: Annotated[str, one_of("Ready", "Complete")]


class ReplicatedJob(CRDModel):
    name: Str
    template: Obj
    group_name: Str | None = None
    replicas: Int | None = Field(default=None, ge=0)
    depends_on: list[DependsOn] | None = None


class Network(CRDModel):
    enable_dns_hostnames: Bool | None = Field(default=None, alias="enableDNSHostnames")
    subdomain: Str | None = None
    publish_not_ready_addresses: Bool | None = None


class SuccessPolicy(CRDModel):
    operator: Annotated[str, one_of("All", "Any")]
    target_replicated_jobs: StrList | None = None


class FailurePolicyRule(CRDModel):
    action: Annotated[str, one_of(*FAILURE_POLICY_ACTIONS)]
    name: Str | None = None  # defaulted to failurePolicyRuleN
    on_job_failure_reasons: StrList | None = None
    on_job_failure_message_patterns: StrList | None = None
    target_replicated_jobs: StrList | None = None


class FailurePolicy(CRDModel):
    max_restarts: Int | None = Field(default=None, ge=0)
    restart_strategy: Annotated[str, one_of(*RESTART_STRATEGIES)] | None = None
    rules: list[FailurePolicyRule] | None = None


class StartupPolicy(CRDModel):
    startup_policy_order: Annotated[str, one_of("AnyOrder", "InOrder")]


class Coordinator(CRDModel):
    replicated_job: Str
    job_index: Int | None = None
    pod_index: Int | None = None


class JobSetSpec(CRDModel):
    replicated_jobs: list[ReplicatedJob] | None = None
    network: Network | None = None
    success_policy: SuccessPolicy | None = None
    failure_policy: FailurePolicy | None = None
    startup_policy: StartupPolicy | None = None
    suspend: Bool | None = None
    coordinator: Coordinator | None = None
    managed_by: Str | None = None
    ttl_seconds_after_finished: Int | None = Field(default=None, ge=0)
    volume_claim_policies: ObjList | None = None


class JobSet(KubeObject):
    KINDS = (("jobset.x-k8s.io/v1alpha2", "JobSet"),)
    # Not required by the CRD (the upstream kustomize sample ships ``spec:`` empty).
    spec: JobSetSpec | None = None


MODELS: tuple[type[KubeObject], ...] = (JobSet,)
