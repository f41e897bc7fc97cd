"""Validated catalogue of accelerated EC2 instance types (p, g, trn, inf families).

Why this module exists: rules such as ``efa-over-request``, ``accelerator-exceeds-node``,
``cpu-memory-exceeds-node`` and ``bf16-unsupported`` need hard facts about the instance types a
pod can land on. Those facts live **once**, as data, in ``instances.yaml`` next to this file, each
with a citation (``source``) and, where the facts reference is not sure, a ``confidence`` tag.
The YAML is loaded lazily on first use, validated with frozen pydantic models, and cached; all
other values (Kubernetes labels, extended-resource capacity, allocatable) are *derived* here so
they cannot drift from the data.

The package is the public API: the names below are imported from here. The data model is in
:mod:`.models`, the Karpenter allocatable formula in :mod:`.allocatable`, label keys and capacity
types in :mod:`.labels`, requirement normalisation in :mod:`.requirements`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from importlib import resources
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from eksmllint.tables import packaged_data
from eksmllint.yamlpos import YAMLLoadError, load_data

from .allocatable import karpenter_allocatable_cpu_millis, karpenter_allocatable_memory_mib, kubelet_allocatable
from .labels import (
    ACCELERATOR_RESOURCES,
    CAPACITY_TYPES,
    INSTANCE_LABEL_KEYS,
    L_CAPACITY_TYPE,
    L_CATEGORY,
    L_FAMILY,
    L_INSTANCE_TYPE,
    L_RESERVATION_ID,
    L_RESERVATION_INTERRUPTIBLE,
    L_RESERVATION_TYPE,
    LABEL_ALIASES,
    RECLAIMABLE_CAPACITY_TYPES,
    RESERVATION_LABELS,
    SAGEMAKER_PREFIX,
    ec2_instance_name,
)
from .models import Catalogue, CatalogueError, InstanceType, Source
from .requirements import Requirement

_Facts = TypeVar("_Facts", bound=BaseModel)

__all__ = [
    "ACCELERATOR_RESOURCES",
    "CAPACITY_TYPES",
    "INSTANCE_LABEL_KEYS",
    "LABEL_ALIASES",
    "L_CAPACITY_TYPE",
    "L_CATEGORY",
    "L_FAMILY",
    "L_INSTANCE_TYPE",
    "L_RESERVATION_ID",
    "L_RESERVATION_INTERRUPTIBLE",
    "L_RESERVATION_TYPE",
    "RECLAIMABLE_CAPACITY_TYPES",
    "RESERVATION_LABELS",
    "SAGEMAKER_PREFIX",
    "Catalogue",
    "CatalogueError",
    "InstanceType",
    "Requirement",
    "Source",
    "ec2_instance_name",
    "get_catalogue",
    "karpenter_allocatable_cpu_millis",
    "karpenter_allocatable_memory_mib",
    "kubelet_allocatable",
    "packaged_facts",
    "parse_catalogue",
    "parse_facts",
]


# --------------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------------
def parse_catalogue(text: str, parse: Callable[[str], Any] = load_data) -> Catalogue:
    """Parse and validate catalogue YAML text; raises :class:`CatalogueError` on any problem."""
    try:
        data = parse(text)
    except YAMLLoadError as exc:
        raise CatalogueError(f"instance catalogue is not valid YAML: line {exc.line}: {exc.message}") from exc
    if not isinstance(data, dict):
        raise CatalogueError("instance catalogue must be a mapping at the top level")
    try:
        return Catalogue.model_validate(data)
    except ValidationError as exc:
        raise CatalogueError(f"instance catalogue failed validation:\n{exc}") from exc


def parse_facts(model: type[_Facts], text: str, what: str, parse: Callable[[str], Any] = load_data) -> _Facts:
    """Parse and validate a small facts table (``network_interfaces.yaml``, ``efa_hugepages.yaml``)
    with its pydantic ``model``; raises :class:`CatalogueError` naming ``what`` on any problem."""
    try:
        data = parse(text)
    except YAMLLoadError as exc:
        raise CatalogueError(f"{what} are not valid YAML: line {exc.line}: {exc.message}") from exc
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise CatalogueError(f"{what} are invalid: {exc}") from exc


def packaged_facts(model: type[_Facts], filename: str, what: str) -> _Facts:
    """A facts table packaged beside this module, parsed and validated."""
    return parse_facts(model, _packaged_text(filename), what, packaged_data)


@functools.lru_cache(maxsize=1)
def get_catalogue() -> Catalogue:
    """The packaged catalogue (``instances.yaml``), loaded and validated once per process."""
    return parse_catalogue(_packaged_text("instances.yaml"), packaged_data)


def _packaged_text(filename: str) -> str:
    return resources.files(__name__).joinpath(filename).read_text(encoding="utf-8")
