"""Pydantic models of the CRD kinds eksmllint reads (EML002 on known CRDs).

Public API:

* :func:`validate_crd` - schema issues of one document, or ``None`` when eksmllint has no
  model for its (apiVersion, kind) (the caller reports EML004 for those).
* :func:`model_for` - the model class for an (apiVersion, kind), for typed access by rules:
  ``NodePool.model_validate(obj).spec.disruption.consolidation_policy``.
* :data:`KNOWN_CRD_KINDS` - every (apiVersion, kind) pair with a model.
* :class:`ModelIssue` - ``(path, message)``; ``path`` uses the YAML keys as written and
  ints for list indices.

Model modules are imported on first use: pydantic builds ~110 classes for all of them (~0.1 s),
and a run that holds only a Job and a NodePool should pay for ``karpenter`` alone. The table
:data:`_MODEL_TABLE` names the module and class of every pair; a test checks that it agrees with
each module's own ``MODELS`` / ``KINDS`` declarations. Validation is a single ``model_validate``
on the document plus a few cheap raw-dict checks (``KubeObject.extra_issues``).

The model modules do not use ``from __future__ import annotations``: pydantic would ``eval()`` every
field's annotation text while building the classes (~26 M instructions when a run imports the
Kubeflow, Karpenter and Volcano models); written plainly, the interpreter evaluates them.
"""

from __future__ import annotations

import functools
import importlib
from typing import Any

from .common import MAX_ISSUES, KubeObject, ModelIssue, format_path

#: (apiVersion, kind) -> (module in this package, model class).
_MODEL_TABLE: dict[tuple[str, str], tuple[str, str]] = {
    ("karpenter.sh/v1", "NodePool"): ("karpenter", "NodePool"),
    ("karpenter.k8s.aws/v1", "EC2NodeClass"): ("karpenter", "EC2NodeClass"),
    ("karpenter.sh/v1beta1", "NodePool"): ("karpenter", "NodePoolV1beta1"),
    ("karpenter.k8s.aws/v1beta1", "EC2NodeClass"): ("karpenter", "EC2NodeClassV1beta1"),
    ("kubeflow.org/v1", "PyTorchJob"): ("kubeflow", "PyTorchJob"),
    ("kubeflow.org/v1", "TFJob"): ("kubeflow", "TFJob"),
    ("kubeflow.org/v1", "MPIJob"): ("kubeflow", "MPIJobV1"),
    ("kubeflow.org/v1", "XGBoostJob"): ("kubeflow", "XGBoostJob"),
    ("kubeflow.org/v1", "PaddleJob"): ("kubeflow", "PaddleJob"),
    ("kubeflow.org/v1", "JAXJob"): ("kubeflow", "JAXJob"),
    ("kubeflow.org/v2beta1", "MPIJob"): ("kubeflow", "MPIJobV2"),
    ("trainer.kubeflow.org/v1alpha1", "TrainJob"): ("kubeflow", "TrainJob"),
    ("trainer.kubeflow.org/v1alpha1", "TrainingRuntime"): ("kubeflow", "TrainingRuntime"),
    ("trainer.kubeflow.org/v1alpha1", "ClusterTrainingRuntime"): ("kubeflow", "TrainingRuntime"),
    ("batch.volcano.sh/v1alpha1", "Job"): ("volcano", "VolcanoJob"),
    ("scheduling.volcano.sh/v1beta1", "Queue"): ("volcano", "VolcanoQueue"),
    ("scheduling.volcano.sh/v1beta1", "PodGroup"): ("volcano", "VolcanoPodGroup"),
    ("scheduling.x-k8s.io/v1alpha1", "PodGroup"): ("volcano", "CoschedulingPodGroup"),
    ("ray.io/v1", "RayCluster"): ("ray", "RayCluster"),
    ("ray.io/v1", "RayJob"): ("ray", "RayJob"),
    ("ray.io/v1", "RayService"): ("ray", "RayService"),
    ("jobset.x-k8s.io/v1alpha2", "JobSet"): ("jobset", "JobSet"),
    ("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet"): ("lws", "LeaderWorkerSet"),
    ("kueue.x-k8s.io/v1beta1", "ClusterQueue"): ("kueue", "ClusterQueueV1beta1"),
    ("kueue.x-k8s.io/v1beta2", "ClusterQueue"): ("kueue", "ClusterQueue"),
    ("kueue.x-k8s.io/v1beta1", "LocalQueue"): ("kueue", "LocalQueue"),
    ("kueue.x-k8s.io/v1beta2", "LocalQueue"): ("kueue", "LocalQueue"),
    ("kueue.x-k8s.io/v1beta1", "ResourceFlavor"): ("kueue", "ResourceFlavor"),
    ("kueue.x-k8s.io/v1beta2", "ResourceFlavor"): ("kueue", "ResourceFlavor"),
    ("kueue.x-k8s.io/v1alpha1", "Topology"): ("kueue", "Topology"),
    ("kueue.x-k8s.io/v1beta1", "Topology"): ("kueue", "Topology"),
    ("kueue.x-k8s.io/v1beta2", "Topology"): ("kueue", "Topology"),
    ("slinky.slurm.net/v1beta1", "Controller"): ("slinky", "SlinkyObject"),
    ("slinky.slurm.net/v1beta1", "NodeSet"): ("slinky", "SlinkyObject"),
    ("slinky.slurm.net/v1beta1", "LoginSet"): ("slinky", "SlinkyObject"),
    ("slinky.slurm.net/v1beta1", "Accounting"): ("slinky", "SlinkyObject"),
    ("slinky.slurm.net/v1beta1", "RestApi"): ("slinky", "SlinkyObject"),
    ("slinky.slurm.net/v1beta1", "Token"): ("slinky", "SlinkyObject"),
    ("slinky.slurm.net/v1alpha1", "Controller"): ("slinky", "SlinkyObject"),
    ("slinky.slurm.net/v1alpha1", "NodeSet"): ("slinky", "SlinkyObject"),
    ("slinky.slurm.net/v1alpha1", "LoginSet"): ("slinky", "SlinkyObject"),
    ("slinky.slurm.net/v1alpha1", "Accounting"): ("slinky", "SlinkyObject"),
    ("slinky.slurm.net/v1alpha1", "RestApi"): ("slinky", "SlinkyObject"),
    ("slinky.slurm.net/v1alpha1", "Token"): ("slinky", "SlinkyObject"),
    ("slinky.slurm.net/v1alpha1", "Cluster"): ("slinky", "SlinkyObject"),
}

#: (apiVersion, kind) pairs that have a model.
KNOWN_CRD_KINDS: frozenset[tuple[str, str]] = frozenset(_MODEL_TABLE)

#: Public model class name -> its module (``from eksmllint.models import NodePool`` stays valid).
_CLASS_MODULE: dict[str, str] = {cls: module for module, cls in _MODEL_TABLE.values()}

__all__ = [
    "KNOWN_CRD_KINDS",
    "KubeObject",
    "ModelIssue",
    "format_path",
    "model_for",
    "validate_crd",
    *sorted(_CLASS_MODULE),
]


@functools.cache
def _model_class(module: str, name: str) -> type[KubeObject]:
    """The class ``name`` of ``eksmllint.models.<module>``, importing the module on first use."""
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


def __getattr__(name: str) -> Any:
    if name in _CLASS_MODULE:
        return _model_class(_CLASS_MODULE[name], name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def model_for(api_version: str, kind: str) -> type[KubeObject] | None:
    """The model for ``(apiVersion, kind)``, or ``None`` if eksmllint has none."""
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return None
    where = _MODEL_TABLE.get((api_version, kind))
    return _model_class(*where) if where is not None else None


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
        if model is None:
            return None
        from pydantic import ValidationError

        from .common import issues_from_validation_error

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
    except Exception as exc:
        return [ModelIssue((), f"internal error while validating against the CRD model: {type(exc).__name__}: {exc}")]
