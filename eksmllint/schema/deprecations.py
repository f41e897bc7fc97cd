"""EML003 data: deprecated and removed apiVersions, core and CRD, with sources.

Each entry says from which Kubernetes minor version an (apiVersion, kind) is
deprecated and from which it is no longer served.  ``api_status`` turns that
into an ``ApiStatus`` for one target version; the rule maps "deprecated" to a
warning and "removed" to an error.

Conventions
-----------
* Core removal versions come from the Kubernetes "Deprecated API Migration
  Guide" (https://kubernetes.io/docs/reference/using-api/deprecation-guide/,
  read via kubernetes/website content/en/docs/reference/using-api/
  deprecation-guide.md), and for 1.26 and later they are cross-checked against
  the schemas bundled with kubernetes-validate (present in the previous
  version, absent from the removal version; tests/unit/schema/test_schema.py asserts it).
* The deprecation version is the one in the API server's deprecation warning
  (prerelease-lifecycle-gen data, staging/src/k8s.io/api/<group>/<version>/
  zz_generated.prerelease-lifecycle.go) where known, otherwise the release in
  which the guide says the replacement became available.
* CRDs are not tied to Kubernetes releases, so their ``since`` names the
  project release (e.g. "Karpenter v1.1").  Only where a source links the two
  (Karpenter's compatibility matrix) does the state depend on the target
  Kubernetes version.
* Where a CRD project's own release decides (Kueue serves v1beta2 from v0.15), the entry names
  the platform ``component`` and its releases; ``api_status`` given the run's platform
  (``eksmllint.platform``, config ``platform:``) judges that release and says which it assumed.
* ``mechanical`` is True only when changing ``apiVersion`` alone yields an
  equivalent object: the guide lists "no notable changes" or the bundled
  schemas of both versions are structurally identical, *and* no default or
  semantic changed.  Anything unverified is False, because a wrong autofix is
  worse than none.
* Alpha APIs are left out (they are never on by default), as are
  request-only kinds nobody keeps in manifests (TokenReview, SubjectAccessReview).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from eksmllint.platform import parse_version

if TYPE_CHECKING:
    from eksmllint.platform import Platform

__all__ = ["ENTRIES", "ApiStatus", "api_status"]

State = Literal["deprecated", "removed"]

_GUIDE = "https://kubernetes.io/docs/reference/using-api/deprecation-guide/"
_BUNDLED = "kubernetes-validate 1.37.0 bundled schemas (served up to the version before removal)"


@dataclass(frozen=True)
class ApiStatus:
    """How an apiVersion stands for one target version.

    ``replacement`` is the apiVersion to move to; ``replacement_kind`` is set
    only when the kind changes too (Provisioner -> NodePool).  ``since`` is
    the Kubernetes minor ("1.25") or, for CRDs, the project release
    ("Karpenter v1.1") in which ``state`` began.
    """

    state: State
    replacement: str | None
    since: str
    note: str
    mechanical: bool
    replacement_kind: str | None = None
    assumed: str | None = None  # the platform release judged ("Kueue 0.19 (assumed; set platform.kueue)")


@dataclass(frozen=True)
class _Entry:
    api_version: str
    kinds: tuple[str, ...]  # empty tuple: every kind of the apiVersion
    replacement: str | None
    mechanical: bool
    note: str
    source: str
    deprecated: str | None = None  # Kubernetes minor; "0" = for every version
    removed: str | None = None  # Kubernetes minor; "0" = for every version
    deprecated_label: str | None = None  # overrides `since` text (CRDs)
    removed_label: str | None = None
    replacement_kind: str | None = None
    core: bool = True
    # When ``replacement`` is only served from ``replacement_since`` on, older targets are
    # pointed at ``interim`` (itself served there) instead.
    replacement_since: str | None = None
    interim: str | None = None
    interim_mechanical: bool = False
    # A CRD whose state follows its project's release (eksmllint.platform component name): current
    # before ``component_deprecated``, deprecated from it, no longer served from ``component_removed``.
    component: str | None = None
    component_deprecated: str | None = None
    component_removed: str | None = None


def _core(
    api_version: str,
    kinds: str,
    replacement: str | None,
    deprecated: str,
    removed: str | None,
    mechanical: bool,
    note: str,
    source: str = _GUIDE,
    **extra: Any,
) -> _Entry:
    return _Entry(
        api_version,
        tuple(kinds.split()),
        replacement,
        mechanical,
        note,
        source,
        deprecated=deprecated,
        removed=removed,
        **extra,
    )


# flowcontrol v1 exists from 1.29; before that the successor was v1beta2 (1.23-1.28) or
# v1beta3 (1.26-1.31).  The bundled schemas of v1beta1 and v1beta2 are identical.
_FLOWCONTROL_V1 = "flowcontrol.apiserver.k8s.io/v1"


_NO_CHANGES = "The guide lists no notable changes: only apiVersion changes."
_SELECTOR = (
    "spec.selector becomes required and immutable, and defaults change "
    "(e.g. updateStrategy, revisionHistoryLimit); copy the template labels into spec.selector."
)

ENTRIES: tuple[_Entry, ...] = (
    # --- removed in 1.16 -------------------------------------------------------------------
    _core("extensions/v1beta1", "Deployment", "apps/v1", "1.9", "1.16", False, _SELECTOR),
    _core("apps/v1beta1", "Deployment", "apps/v1", "1.9", "1.16", False, _SELECTOR),
    _core("apps/v1beta2", "Deployment", "apps/v1", "1.9", "1.16", False, _SELECTOR),
    _core(
        "extensions/v1beta1",
        "DaemonSet",
        "apps/v1",
        "1.9",
        "1.16",
        False,
        "spec.templateGeneration is removed; " + _SELECTOR,
    ),
    _core("apps/v1beta2", "DaemonSet", "apps/v1", "1.9", "1.16", False, _SELECTOR),
    _core("apps/v1beta1", "StatefulSet", "apps/v1", "1.9", "1.16", False, _SELECTOR),
    _core("apps/v1beta2", "StatefulSet", "apps/v1", "1.9", "1.16", False, _SELECTOR),
    _core("extensions/v1beta1", "ReplicaSet", "apps/v1", "1.9", "1.16", False, _SELECTOR),
    _core("apps/v1beta1", "ReplicaSet", "apps/v1", "1.9", "1.16", False, _SELECTOR),
    _core("apps/v1beta2", "ReplicaSet", "apps/v1", "1.9", "1.16", False, _SELECTOR),
    _core(
        "extensions/v1beta1",
        "NetworkPolicy",
        "networking.k8s.io/v1",
        "1.8",
        "1.16",
        True,
        "The guide lists no field changes for NetworkPolicy.",
    ),
    _core(
        "extensions/v1beta1",
        "PodSecurityPolicy",
        None,
        "1.10",
        "1.16",
        False,
        "PodSecurityPolicy was removed from Kubernetes altogether in 1.25; use Pod Security Admission "
        "(namespace labels pod-security.kubernetes.io/*).",
    ),
    # --- removed in 1.22 -------------------------------------------------------------------
    _core(
        "admissionregistration.k8s.io/v1beta1",
        "MutatingWebhookConfiguration ValidatingWebhookConfiguration",
        "admissionregistration.k8s.io/v1",
        "1.16",
        "1.22",
        False,
        "v1 changes defaults (failurePolicy Fail, matchPolicy Equivalent, timeoutSeconds 10) and makes "
        "sideEffects and admissionReviewVersions required.",
    ),
    _core(
        "apiextensions.k8s.io/v1beta1",
        "CustomResourceDefinition",
        "apiextensions.k8s.io/v1",
        "1.16",
        "1.22",
        False,
        "v1 moves validation/subresources/printer columns under spec.versions[*] and requires a structural schema.",
    ),
    _core(
        "apiregistration.k8s.io/v1beta1", "APIService", "apiregistration.k8s.io/v1", "1.19", "1.22", True, _NO_CHANGES
    ),
    _core(
        "certificates.k8s.io/v1beta1",
        "CertificateSigningRequest",
        "certificates.k8s.io/v1",
        "1.19",
        "1.22",
        False,
        "v1 requires spec.signerName and spec.usages.",
    ),
    _core("coordination.k8s.io/v1beta1", "Lease", "coordination.k8s.io/v1", "1.14", "1.22", True, _NO_CHANGES),
    _core(
        "extensions/v1beta1",
        "Ingress",
        "networking.k8s.io/v1",
        "1.14",
        "1.22",
        False,
        "v1 renames backend fields (serviceName -> service.name, servicePort -> service.port) and requires pathType.",
    ),
    _core(
        "networking.k8s.io/v1beta1",
        "Ingress",
        "networking.k8s.io/v1",
        "1.19",
        "1.22",
        False,
        "v1 renames backend fields (serviceName -> service.name, servicePort -> service.port) and requires pathType.",
    ),
    _core("networking.k8s.io/v1beta1", "IngressClass", "networking.k8s.io/v1", "1.19", "1.22", True, _NO_CHANGES),
    _core(
        "rbac.authorization.k8s.io/v1beta1",
        "ClusterRole ClusterRoleBinding Role RoleBinding",
        "rbac.authorization.k8s.io/v1",
        "1.17",
        "1.22",
        True,
        _NO_CHANGES,
    ),
    _core("scheduling.k8s.io/v1beta1", "PriorityClass", "scheduling.k8s.io/v1", "1.14", "1.22", True, _NO_CHANGES),
    _core(
        "storage.k8s.io/v1beta1",
        "CSIDriver StorageClass VolumeAttachment",
        "storage.k8s.io/v1",
        "1.19",
        "1.22",
        True,
        _NO_CHANGES,
        _GUIDE + "; staging/src/k8s.io/api/storage/v1beta1/zz_generated.prerelease-lifecycle.go",
    ),
    _core(
        "storage.k8s.io/v1beta1",
        "CSINode",
        "storage.k8s.io/v1",
        "1.17",
        "1.22",
        True,
        _NO_CHANGES,
        _GUIDE + "; staging/src/k8s.io/api/storage/v1beta1/zz_generated.prerelease-lifecycle.go",
    ),
    # --- removed in 1.25 -------------------------------------------------------------------
    _core("batch/v1beta1", "CronJob", "batch/v1", "1.21", "1.25", True, _NO_CHANGES),
    _core(
        "discovery.k8s.io/v1beta1",
        "EndpointSlice",
        "discovery.k8s.io/v1",
        "1.21",
        "1.25",
        False,
        "v1 replaces endpoints[*].topology with nodeName/zone.",
    ),
    _core(
        "events.k8s.io/v1beta1",
        "Event",
        "events.k8s.io/v1",
        "1.19",
        "1.25",
        False,
        "v1 renames and restricts several fields (involvedObject -> regarding, type Normal|Warning).",
    ),
    _core(
        "autoscaling/v2beta1",
        "HorizontalPodAutoscaler",
        "autoscaling/v2",
        "1.22",
        "1.25",
        False,
        "v2 restructures metric targets (targetAverageUtilization -> target.averageUtilization).",
    ),
    _core(
        "policy/v1beta1",
        "PodDisruptionBudget",
        "policy/v1",
        "1.21",
        "1.25",
        False,
        "Not a pure rename: an empty spec.selector ({}) selects no pods in policy/v1beta1 but every pod "
        "in the namespace in policy/v1.",
    ),
    _core(
        "policy/v1beta1",
        "PodSecurityPolicy",
        None,
        "1.21",
        "1.25",
        False,
        "PodSecurityPolicy has no replacement API; use Pod Security Admission.",
        _GUIDE + "; staging/src/k8s.io/api/policy/v1beta1/zz_generated.prerelease-lifecycle.go",
    ),
    _core(
        "node.k8s.io/v1beta1",
        "RuntimeClass",
        "node.k8s.io/v1",
        "1.20",
        "1.25",
        True,
        _NO_CHANGES,
        _GUIDE + "; https://cloud.google.com/kubernetes-engine/docs/deprecations/apis-1-25",
    ),
    # --- removed in 1.26 and later (cross-checked against bundled schemas) -----------------
    _core(
        "autoscaling/v2beta2",
        "HorizontalPodAutoscaler",
        "autoscaling/v2",
        "1.23",
        "1.26",
        True,
        "Spec fields are identical in the bundled 1.25 schemas of v2beta2 and v2.",
        _GUIDE + "; " + _BUNDLED,
    ),
    _core(
        "flowcontrol.apiserver.k8s.io/v1beta1",
        "FlowSchema",
        _FLOWCONTROL_V1,
        "1.23",
        "1.26",
        True,
        "FlowSchema spec is identical across v1beta1..v1 in the bundled schemas.",
        _GUIDE + "; " + _BUNDLED,
        replacement_since="1.29",
        interim="flowcontrol.apiserver.k8s.io/v1beta2",
        interim_mechanical=True,
    ),
    _core(
        "flowcontrol.apiserver.k8s.io/v1beta1",
        "PriorityLevelConfiguration",
        _FLOWCONTROL_V1,
        "1.23",
        "1.26",
        False,
        "v1beta3/v1 rename spec.limited.assuredConcurrencyShares to nominalConcurrencyShares "
        "(v1beta2 is identical to v1beta1).",
        _GUIDE + "; " + _BUNDLED,
        replacement_since="1.29",
        interim="flowcontrol.apiserver.k8s.io/v1beta2",
        interim_mechanical=True,
    ),
    _core(
        "storage.k8s.io/v1beta1",
        "CSIStorageCapacity",
        "storage.k8s.io/v1",
        "1.24",
        "1.27",
        True,
        _NO_CHANGES + " (bundled 1.25 schemas are identical)",
        _GUIDE + "; " + _BUNDLED,
    ),
    _core(
        "flowcontrol.apiserver.k8s.io/v1beta2",
        "FlowSchema",
        _FLOWCONTROL_V1,
        "1.26",
        "1.29",
        True,
        "FlowSchema spec is identical across v1beta2..v1 in the bundled schemas.",
        _GUIDE + "; " + _BUNDLED,
        replacement_since="1.29",
        interim="flowcontrol.apiserver.k8s.io/v1beta3",
        interim_mechanical=True,
    ),
    _core(
        "flowcontrol.apiserver.k8s.io/v1beta2",
        "PriorityLevelConfiguration",
        _FLOWCONTROL_V1,
        "1.26",
        "1.29",
        False,
        "v1beta3/v1 rename spec.limited.assuredConcurrencyShares to nominalConcurrencyShares.",
        _GUIDE + "; " + _BUNDLED,
        replacement_since="1.29",
        interim="flowcontrol.apiserver.k8s.io/v1beta3",
        interim_mechanical=False,
    ),
    _core(
        "flowcontrol.apiserver.k8s.io/v1beta3",
        "FlowSchema",
        "flowcontrol.apiserver.k8s.io/v1",
        "1.29",
        "1.32",
        True,
        "The bundled 1.31 schemas of v1beta3 and v1 are identical.",
        _GUIDE + "; " + _BUNDLED,
    ),
    _core(
        "flowcontrol.apiserver.k8s.io/v1beta3",
        "PriorityLevelConfiguration",
        "flowcontrol.apiserver.k8s.io/v1",
        "1.29",
        "1.32",
        False,
        "Same fields, but in v1 an explicit nominalConcurrencyShares: 0 is kept instead of becoming 30.",
        _GUIDE + "; " + _BUNDLED,
    ),
    _core(
        "admissionregistration.k8s.io/v1beta1",
        "ValidatingAdmissionPolicy ValidatingAdmissionPolicyBinding",
        "admissionregistration.k8s.io/v1",
        "1.30",
        "1.34",
        True,
        "The bundled 1.33 schemas of v1beta1 and v1 are identical.",
        _BUNDLED,
    ),
    _core(
        "storage.k8s.io/v1beta1",
        "VolumeAttributesClass",
        "storage.k8s.io/v1",
        "1.34",
        "1.37",
        True,
        "The bundled 1.36 schemas of v1beta1 and v1 are identical.",
        _BUNDLED,
    ),
    _core(
        "networking.k8s.io/v1beta1",
        "IPAddress ServiceCIDR",
        "networking.k8s.io/v1",
        "1.33",
        "1.37",
        True,
        "The bundled 1.36 schemas of v1beta1 and v1 are identical.",
        _BUNDLED,
    ),
    # --- deprecated, still served --------------------------------------------------------
    _core(
        "resource.k8s.io/v1beta1",
        "DeviceClass ResourceSlice",
        "resource.k8s.io/v1",
        "1.34",
        None,
        True,
        "DRA is GA in resource.k8s.io/v1 since 1.34; the bundled 1.37 schemas of v1beta1 and v1 DeviceClass "
        "are identical.",
        "staging/src/k8s.io/api/resource/v1beta1/zz_generated.prerelease-lifecycle.go; " + _BUNDLED,
    ),
    _core(
        "resource.k8s.io/v1beta1",
        "ResourceClaim ResourceClaimTemplate",
        "resource.k8s.io/v1",
        "1.34",
        None,
        False,
        "v1 moves a device request's fields under devices.requests[*].exactly.",
        "staging/src/k8s.io/api/resource/v1beta1/zz_generated.prerelease-lifecycle.go; " + _BUNDLED,
    ),
    # --- CRDs ------------------------------------------------------------------------------
    _Entry(
        "karpenter.sh/v1alpha5",
        ("Provisioner",),
        "karpenter.sh/v1",
        False,
        "Karpenter v0.32 replaced Provisioner with NodePool (v1beta1) and v0.33 stopped serving v1alpha5; "
        "rewrite it as a karpenter.sh/v1 NodePool.",
        "aws/karpenter-provider-aws#6286 (maintainer: 'support for Provisioners was completely removed in "
        "v0.33.0'); karpenter.sh/v0.32/upgrading/v1beta1-migration",
        removed="0",
        removed_label="Karpenter v0.33",
        replacement_kind="NodePool",
        core=False,
    ),
    _Entry(
        "karpenter.sh/v1alpha5",
        ("Machine",),
        "karpenter.sh/v1",
        False,
        "Machines were replaced by NodeClaims, which Karpenter creates itself; delete the manifest.",
        "aws/karpenter-provider-aws#6286; karpenter.sh/v0.32/upgrading/v1beta1-migration",
        removed="0",
        removed_label="Karpenter v0.33",
        replacement_kind="NodeClaim",
        core=False,
    ),
    _Entry(
        "karpenter.k8s.aws/v1alpha1",
        ("AWSNodeTemplate",),
        "karpenter.k8s.aws/v1",
        False,
        "Karpenter v0.32 replaced AWSNodeTemplate with EC2NodeClass and v0.33 stopped serving it; rewrite it "
        "as a karpenter.k8s.aws/v1 EC2NodeClass.",
        "aws/karpenter-provider-aws#6286; aws-samples/karpenter-blueprints#4 (Provisioner -> NodePool, "
        "AWSNodeTemplate -> EC2NodeClass)",
        removed="0",
        removed_label="Karpenter v0.33",
        replacement_kind="EC2NodeClass",
        core=False,
    ),
    # Karpenter v1.0 serves v1beta1 and v1 side by side; v1.1 serves only v1.  The
    # compatibility matrix (ml-on-eks-facts.md section 3) requires Karpenter >= 1.2 on
    # Kubernetes 1.32, so from 1.32 on a v1beta1 manifest cannot be applied: removed.
    # On older clusters it may still be served (Karpenter <= 1.0): deprecated.
    _Entry(
        "karpenter.sh/v1beta1",
        ("NodePool", "NodeClaim"),
        "karpenter.sh/v1",
        False,
        "v1 is not a rename: expireAfter moves to spec.template.spec, kubelet moves to the EC2NodeClass, "
        "WhenUnderutilized becomes WhenEmptyOrUnderutilized, nodeClassRef.apiVersion becomes group.",
        "karpenter v1-migration.md (ml-on-eks-facts.md section 3); kubernetes-sigs/karpenter v1.0.0 release; "
        "spack/spack-infrastructure#1043 ('removed in Karpenter 1.1'); compatibility.md (K8s 1.32 needs "
        "Karpenter >= 1.2)",
        deprecated="0",
        removed="1.32",
        deprecated_label="Karpenter v1.0",
        removed_label="Karpenter v1.1 (required from Kubernetes 1.32)",
        core=False,
    ),
    _Entry(
        "karpenter.k8s.aws/v1beta1",
        ("EC2NodeClass",),
        "karpenter.k8s.aws/v1",
        False,
        "v1 is not a rename: amiSelectorTerms becomes required, kubelet moves here from the NodePool, "
        "the default IMDS hop limit changes to 1.",
        "karpenter v1-migration.md (ml-on-eks-facts.md section 3); compatibility.md",
        deprecated="0",
        removed="1.32",
        deprecated_label="Karpenter v1.0",
        removed_label="Karpenter v1.1 (required from Kubernetes 1.32)",
        core=False,
    ),
    _Entry(
        "kubeflow.org/v1",
        ("MPIJob",),
        "kubeflow.org/v2beta1",
        False,
        "MPIJob v1 comes from the legacy Training Operator and only gets bug fixes; mpi-operator's v2beta1 "
        "has different launcher/worker semantics (runLauncherAsWorker, sshAuthMountPath, launcherCreationPolicy). "
        "Both versions use the CRD mpijobs.kubeflow.org, so install only one operator.",
        "kubeflow/trainer#1906 'Deprecate MPIJob v1'; kubeflow/mpi-operator#605 (maintainer recommends v2)",
        deprecated="0",
        deprecated_label="Training Operator MPIJob v1 (legacy)",
        core=False,
    ),
    _Entry(
        "ray.io/v1alpha1",
        ("RayCluster",),
        "ray.io/v1",
        True,
        "RayClusterSpec in ray.io/v1 is a strict superset of v1alpha1, so only apiVersion changes.",
        "ray-project/kuberay#5122 (v1alpha1 marked deprecated), #5124 (removal plan); ray-project/ray#65336",
        deprecated="0",
        deprecated_label="KubeRay v1.0",
        core=False,
    ),
    _Entry(
        "ray.io/v1alpha1",
        ("RayJob", "RayService"),
        "ray.io/v1",
        False,
        "v1alpha1 is frozen; RayJob/RayService fields changed in v1 (e.g. RayService serveConfig is gone), "
        "so review the spec when moving.",
        "ray-project/kuberay#5122, #5124; ray-project/ray#65336",
        deprecated="0",
        deprecated_label="KubeRay v1.0",
        core=False,
    ),
    _Entry(
        "kueue.x-k8s.io/v1beta1",
        (),
        "kueue.x-k8s.io/v1beta2",
        False,
        "Kueue v0.15 serves v1beta2 and deprecates v1beta1, v0.16 stores v1beta2, v0.20 stops serving v1beta1. "
        "Some fields are renamed (ClusterQueue cohort -> cohortName).",
        "kubernetes-sigs/kueue#7304, #8020, #8047 (v1beta1 deprecation warning, release-0.15), #13957 "
        "(v1beta1 served=false in 0.20, dropped in 0.21), #14558; ml-on-eks-facts.md section 8",
        deprecated="0",
        deprecated_label="Kueue v0.15",
        removed_label="Kueue v0.20",
        core=False,
        component="kueue",
        component_deprecated="0.15",
        component_removed="0.20",
    ),
    _Entry(
        "slinky.slurm.net/v1alpha1",
        (),
        "slinky.slurm.net/v1beta1",
        False,
        "Slinky slurm-operator's current API is v1beta1 (Controller, NodeSet, LoginSet, Accounting, RestApi, "
        "Token); field changes from v1alpha1 and the release that stopped serving it are not verified.",
        "ml-on-eks-facts.md section 11 (SlinkyProject/slurm-operator@f2ed3fc53252 api/v1beta1)",
        deprecated="0",
        deprecated_label="slurm-operator v1beta1 API",
        core=False,
    ),
)

# Current and deliberately absent (checked): batch.volcano.sh/v1alpha1 Job,
# scheduling.volcano.sh/v1beta1, jobset.x-k8s.io/v1alpha2, kubeflow.org/v2beta1 MPIJob,
# karpenter.sh/v1, ray.io/v1, trainer.kubeflow.org/v1alpha1.

_VERSION_RE = re.compile(r"^v?(\d+)\.(\d+)(?:\.\d+)?$")


def _minor(version: str) -> tuple[int, int]:
    m = _VERSION_RE.match(version.strip()) if isinstance(version, str) else None
    if not m:
        raise ValueError(f"invalid Kubernetes version {version!r}; expected e.g. '1.33'")
    return int(m.group(1)), int(m.group(2))


def _reached(threshold: str | None, target: tuple[int, int]) -> bool:
    if threshold is None:
        return False
    return threshold == "0" or target >= _minor(threshold)


def _index() -> dict[tuple[str, str], _Entry]:
    table: dict[tuple[str, str], _Entry] = {}
    for entry in ENTRIES:
        for kind in entry.kinds or ("*",):
            key = (entry.api_version, kind)
            if key in table:  # pragma: no cover - guarded by a test
                raise ValueError(f"duplicate deprecation entry for {key}")
            table[key] = entry
    return table


_INDEX = _index()


def api_status(api_version: str, kind: str, k8s_version: str, platform: Platform | None = None) -> ApiStatus | None:
    """Deprecation/removal status of ``apiVersion``/``kind`` on ``k8s_version`` (and, for an entry
    that follows its project's release, on that release of ``platform``).

    None when the API is current for that version (or unknown to the table).
    Raises ValueError only for a malformed ``k8s_version``.
    """
    target = _minor(k8s_version)
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return None
    entry = _INDEX.get((api_version, kind)) or _INDEX.get((api_version, "*"))
    if entry is None:
        return None
    assumed = None
    if entry.component and platform is not None:
        release = platform.version(entry.component)
        assumed = platform.describe(entry.component)
        if entry.component_deprecated and release < parse_version(entry.component_deprecated):
            return None  # the replacement is not served yet: the old version is the current one
        if entry.component_removed and release >= parse_version(entry.component_removed):
            state: State = "removed"
            since = entry.removed_label or entry.component_removed
        else:
            state = "deprecated"
            since = entry.deprecated_label or str(entry.component_deprecated)
    elif _reached(entry.removed, target):
        state = "removed"
        since = entry.removed_label or str(entry.removed)
    elif _reached(entry.deprecated, target):
        state = "deprecated"
        since = entry.deprecated_label or str(entry.deprecated)
    else:
        return None
    replacement, mechanical = entry.replacement, entry.mechanical
    if entry.interim and entry.replacement_since and target < _minor(entry.replacement_since):
        replacement, mechanical = entry.interim, entry.interim_mechanical
    return ApiStatus(
        state=state,
        replacement=replacement,
        since=since,
        note=entry.note,
        mechanical=mechanical,
        replacement_kind=entry.replacement_kind,
        assumed=assumed,
    )
