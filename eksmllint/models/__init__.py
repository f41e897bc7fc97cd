"""Pydantic models of the CRD kinds eksmllint reads (EML002 on known CRDs).

Public API:

* :func:`validate_crd` - schema issues of one document, or ``None`` when eksmllint has no
  model for its (apiVersion, kind) (the caller reports EML004 for those).
* :func:`model_for` - the model class for an (apiVersion, kind), for typed access by rules:
  ``NodePool.model_validate(obj).spec.disruption.consolidation_policy``.
* :data:`KNOWN_CRD_KINDS` - every (apiVersion, kind) pair with a model.
* :class:`ModelIssue` - ``(path, message)``; ``path`` uses the YAML keys as written and
  ints for list indices.

Model classes are built once at import; validation is a single ``model_validate`` on the
plain dict plus a few cheap raw-dict checks (``KubeObject.extra_issues``).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError

from . import jobset, karpenter, kubeflow, kueue, lws, ray, slinky, volcano
from .common import MAX_ISSUES, KubeObject, ModelIssue, format_path, issues_from_validation_error
from .jobset import JobSet
from .karpenter import EC2NodeClass, EC2NodeClassV1beta1, NodePool, NodePoolV1beta1
from .kubeflow import (
    JAXJob,
    MPIJobV1,
    MPIJobV2,
    PaddleJob,
    PyTorchJob,
    TFJob,
    TrainingRuntime,
    TrainJob,
    XGBoostJob,
)
from .kueue import ClusterQueue, ClusterQueueV1beta1, LocalQueue, ResourceFlavor
from .lws import LeaderWorkerSet
from .ray import RayCluster, RayJob, RayService
from .slinky import SlinkyObject
from .volcano import CoschedulingPodGroup, VolcanoJob, VolcanoPodGroup, VolcanoQueue

__all__ = [
    "KNOWN_CRD_KINDS",
    "ClusterQueue",
    "ClusterQueueV1beta1",
    "CoschedulingPodGroup",
    "EC2NodeClass",
    "EC2NodeClassV1beta1",
    "JAXJob",
    "JobSet",
    "KubeObject",
    "LeaderWorkerSet",
    "LocalQueue",
    "MPIJobV1",
    "MPIJobV2",
    "ModelIssue",
    "NodePool",
    "NodePoolV1beta1",
    "PaddleJob",
    "PyTorchJob",
    "RayCluster",
    "RayJob",
    "RayService",
    "ResourceFlavor",
    "SlinkyObject",
    "TFJob",
    "TrainJob",
    "TrainingRuntime",
    "VolcanoJob",
    "VolcanoPodGroup",
    "VolcanoQueue",
    "XGBoostJob",
    "format_path",
    "model_for",
    "validate_crd",
]


def _build_registry() -> dict[tuple[str, str], type[KubeObject]]:
    registry: dict[tuple[str, str], type[KubeObject]] = {}
    for module in (karpenter, kubeflow, volcano, ray, jobset, lws, kueue, slinky):
        for model in module.MODELS:
            for pair in model.KINDS:
                if pair in registry:  # pragma: no cover - programming error, caught by tests
                    raise RuntimeError(f"duplicate CRD model for {pair}")
                registry[pair] = model
    return registry


_REGISTRY: dict[tuple[str, str], type[KubeObject]] = _build_registry()

#: (apiVersion, kind) pairs that have a model.
KNOWN_CRD_KINDS: frozenset[tuple[str, str]] = frozenset(_REGISTRY)


def model_for(api_version: str, kind: str) -> type[BaseModel] | None:
    """The model for ``(apiVersion, kind)``, or ``None`` if eksmllint has none."""
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return None
    return _REGISTRY.get((api_version, kind))


def validate_crd(obj: dict[str, Any]) -> list[ModelIssue] | None:
    """Validate one parsed document against the project's CRD models.

    Returns ``None`` when the document's (apiVersion, kind) has no model, otherwise the
    issues found (empty when valid), at most :data:`~eksmllint.models.common.MAX_ISSUES`.
    Never raises: anything unexpected becomes an issue on the document root.
    """
    try:
        if not isinstance(obj, dict):
            return None
        model = model_for(obj.get("apiVersion"), obj.get("kind"))  # type: ignore[arg-type]
        if model is None or not issubclass(model, KubeObject):
            return None
        issues: list[ModelIssue] = []
        try:
            model.model_validate(obj)
        except ValidationError as err:
            issues.extend(issues_from_validation_error(err, MAX_ISSUES))
        if len(issues) < MAX_ISSUES:
            known = {(i.path, i.message) for i in issues}
            for extra in model.extra_issues(obj):
                if (extra.path, extra.message) not in known:
                    issues.append(extra)
        return issues[:MAX_ISSUES]
    except Exception as exc:  # noqa: BLE001 - the contract is "never raises"
        return [ModelIssue((), f"internal error while validating against the CRD model: {type(exc).__name__}: {exc}")]
