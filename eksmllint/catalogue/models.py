"""The validated data model of the instance catalogue: frozen pydantic models of ``instances.yaml``
(sources, instance types, the catalogue) with the values derived from the data (labels,
extended-resource capacity, allocatable) and the label-matching query.

GPUs EC2 does not count
-----------------------
g6f/gr6f carry a fraction of one L4 (``gpu_fraction``) and EC2 reports ``instance-gpu-count: 0``,
so Karpenter offers no ``nvidia.com/gpu`` on them (source ``karpenter-issue-8368``):
:attr:`InstanceType.has_uncounted_gpu` lets rules say why a GPU pod pinned there never schedules.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import date
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from .allocatable import karpenter_allocatable_cpu_millis, karpenter_allocatable_memory_mib
from .labels import (
    L_ACCELERATOR_COUNT,
    L_ACCELERATOR_MANUFACTURER,
    L_ACCELERATOR_NAME,
    L_ARCH,
    L_CATEGORY,
    L_CPU,
    L_CPU_MANUFACTURER,
    L_FAMILY,
    L_GENERATION,
    L_GPU_COUNT,
    L_GPU_MANUFACTURER,
    L_GPU_MEMORY,
    L_GPU_NAME,
    L_INSTANCE_TYPE,
    L_LOCAL_NVME,
    L_MEMORY,
    L_NETWORK_BANDWIDTH,
    L_OS,
    L_SIZE,
    R_EFA,
    R_NEURON,
    R_NEURONCORE,
    R_NEURONDEVICE,
    R_NVIDIA_GPU,
    ec2_instance_name,
)
from .requirements import NUMERIC_OPERATORS, Requirement, normalise_requirement, parse_label_int

Confidence = Literal["verified", "derived", "third_party", "unverified"]
_FAMILY_RE = re.compile(r"^(?P<category>[a-z]+)(?P<generation>[0-9]+)[a-z0-9-]*$")
_NAME_RE = r"^[a-z0-9-]+\.[a-z0-9-]+$"


class CatalogueError(ValueError):
    """The catalogue data could not be parsed or failed validation (message says where)."""


# --------------------------------------------------------------------------------------------
# Models
# --------------------------------------------------------------------------------------------
class Source(BaseModel):
    """One cited source; instances refer to it by its key in ``sources:``."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    title: str = Field(min_length=1)
    url: str | None = Field(default=None, pattern=r"^https?://")
    note: str | None = None


class InstanceType(BaseModel):
    """One accelerated EC2 instance type. Field meanings are documented in ``instances.yaml``."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    name: str = Field(pattern=_NAME_RE)
    family: str = Field(pattern=_FAMILY_RE.pattern)
    size: str = Field(min_length=1)
    arch: Literal["amd64", "arm64"]
    cpu_manufacturer: Literal["intel", "amd", "aws"]
    accelerator: str = Field(min_length=1)
    accelerator_kind: Literal["nvidia", "neuron"]
    karpenter_name: str = Field(pattern=r"^[a-z0-9]+$")
    accelerator_count: int = Field(ge=0)
    gpu_fraction: float | None = Field(default=None, gt=0, le=1)
    accelerator_memory_gib: float = Field(gt=0)
    gpu_memory_mib: int | None = Field(default=None, ge=1)
    neuron_cores_per_device: int | None = Field(default=None, ge=1)
    neuron_core_version: str | None = None
    default_lnc: int | None = Field(default=None, ge=1)
    vcpu: int = Field(ge=1)
    memory_gib: int = Field(ge=1)
    max_efa: int = Field(ge=0)
    network_gbps: float | None = Field(default=None, gt=0)
    local_nvme_gib: int = Field(ge=0)
    nvlink: bool
    bf16: bool
    max_pods: int = Field(ge=1)
    source: str = Field(min_length=1)
    confidence: dict[str, Confidence] = Field(default_factory=dict)
    notes: str | None = None

    _labels: dict[str, str] = PrivateAttr(default_factory=dict)

    @model_validator(mode="after")
    def _check_consistency(self) -> InstanceType:
        problems: list[str] = []
        if self.name != f"{self.family}.{self.size}":
            problems.append(f"name {self.name!r} is not family.size ({self.family!r}.{self.size!r})")
        if self.accelerator_kind == "neuron":
            if self.neuron_cores_per_device is None:
                problems.append("neuron instance needs neuron_cores_per_device")
            if self.gpu_memory_mib is not None:
                problems.append("gpu_memory_mib is an NVIDIA label; not allowed on a neuron instance")
            if self.nvlink:
                problems.append("nvlink must be false on a neuron instance (they use NeuronLink)")
            if self.default_lnc and self.neuron_cores_per_device and self.neuron_cores_per_device % self.default_lnc:
                problems.append("default_lnc must divide neuron_cores_per_device")
        else:
            if any(v is not None for v in (self.neuron_cores_per_device, self.neuron_core_version, self.default_lnc)):
                problems.append(
                    "neuron_cores_per_device/neuron_core_version/default_lnc only apply to neuron instances"
                )
            if self.gpu_memory_mib is None:
                problems.append("nvidia instance needs gpu_memory_mib (the instance-gpu-memory label)")
            elif abs(self.gpu_memory_mib / 1024 - self.accelerator_memory_gib) > 1.0:
                problems.append(
                    f"gpu_memory_mib {self.gpu_memory_mib} disagrees with accelerator_memory_gib "
                    f"{self.accelerator_memory_gib}"
                )
        if self.accelerator_count == 0:
            if not self.is_nvidia or self.gpu_fraction is None:
                problems.append("accelerator_count 0 is only for NVIDIA GPUs EC2 does not count (needs gpu_fraction)")
        elif self.gpu_fraction is not None:
            problems.append("gpu_fraction only applies when accelerator_count is 0 (an uncounted GPU)")
        if self.nvlink and self.accelerator_count < 2:
            problems.append("nvlink needs at least two accelerators")
        unknown = sorted(set(self.confidence) - set(type(self).model_fields))
        if unknown:
            problems.append(f"confidence names unknown fields {unknown}")
        if problems:
            raise ValueError(f"{self.name}: " + "; ".join(problems))
        return self

    def model_post_init(self, __context: Any) -> None:
        self._labels = self._build_labels()

    def __hash__(self) -> int:  # fields include a dict, so hash by the unique name
        return hash(self.name)

    # -- derived facts ------------------------------------------------------------------------
    @property
    def category(self) -> str:
        """Karpenter ``instance-category``: leading letters of the family ("p", "g", "trn")."""
        match = _FAMILY_RE.match(self.family)
        assert match is not None  # guaranteed by the field pattern
        return match.group("category")

    @property
    def generation(self) -> int:
        """Karpenter ``instance-generation``: first digit run of the family (p6-b200 -> 6)."""
        match = _FAMILY_RE.match(self.family)
        assert match is not None
        return int(match.group("generation"))

    @property
    def memory_mib(self) -> int:
        return self.memory_gib * 1024

    @property
    def network_mbps(self) -> int | None:
        return None if self.network_gbps is None else round(self.network_gbps * 1000)

    @property
    def has_uncounted_gpu(self) -> bool:
        """An NVIDIA GPU (or a fraction of one) that EC2 reports as count 0, so Karpenter offers
        no ``nvidia.com/gpu`` on the type and never launches it for a GPU pod (g6f, gr6f)."""
        return self.is_nvidia and self.accelerator_count == 0

    @property
    def neuron_cores(self) -> int:
        """NeuronCores on the node (devices x physical cores per device); 0 for GPU instances."""
        return self.accelerator_count * (self.neuron_cores_per_device or 0)

    def logical_cores_per_device(self, lnc: int | None = None) -> int | None:
        """NeuronCores per device the Neuron runtime exposes: physical cores grouped by the Logical
        NeuronCore Configuration (``NEURON_LOGICAL_NC_CONFIG``, default ``default_lnc``; types without
        LNC expose their physical cores). None for GPU types or an LNC that does not divide them."""
        if not self.is_neuron or not self.neuron_cores_per_device:
            return None
        if not self.default_lnc:  # generation without LNC (trn1, inf2: LNC=1 only)
            return self.neuron_cores_per_device
        degree = lnc if lnc is not None else self.default_lnc
        if degree < 1 or self.neuron_cores_per_device % degree:
            return None
        return self.neuron_cores_per_device // degree

    @property
    def is_efa_capable(self) -> bool:
        return self.max_efa > 0

    @property
    def is_nvidia(self) -> bool:
        return self.accelerator_kind == "nvidia"

    @property
    def is_neuron(self) -> bool:
        return self.accelerator_kind == "neuron"

    @property
    def source_keys(self) -> tuple[str, ...]:
        return tuple(part.strip() for part in self.source.split(";") if part.strip())

    @property
    def allocatable_cpu_millis(self) -> int:
        return karpenter_allocatable_cpu_millis(self.vcpu)

    @property
    def allocatable_memory_mib(self) -> int:
        return karpenter_allocatable_memory_mib(self.memory_mib, self.max_pods, arch=self.arch)

    def confidence_of(self, field: str) -> Confidence:
        """Confidence tag of one field; untagged fields are verified."""
        return self.confidence.get(field, "verified")

    def labels(self) -> dict[str, str]:
        """Well-known label values Karpenter sets on nodes of this type (a fresh copy)."""
        return dict(self._labels)

    def resource_capacity(self) -> dict[str, int]:
        """Extended-resource capacity per node; every name in :data:`ACCELERATOR_RESOURCES`."""
        neuron_devices = self.accelerator_count if self.is_neuron else 0
        return {
            R_NVIDIA_GPU: self.accelerator_count if self.is_nvidia else 0,
            R_NEURON: neuron_devices,
            R_NEURONDEVICE: neuron_devices,
            R_NEURONCORE: self.neuron_cores,
            R_EFA: self.max_efa,
        }

    def offers(self, devices: Mapping[str, int]) -> bool:
        """A node of this type has at least ``devices`` (resource -> count), as Karpenter requires
        before it launches the type for a pod."""
        capacity = self.resource_capacity()
        return all(capacity.get(resource, 0) >= n for resource, n in devices.items())

    def _build_labels(self) -> dict[str, str]:
        labels = {
            L_INSTANCE_TYPE: self.name,
            L_ARCH: self.arch,
            L_OS: "linux",
            L_FAMILY: self.family,
            L_CATEGORY: self.category,
            L_GENERATION: str(self.generation),
            L_SIZE: self.size,
            L_CPU: str(self.vcpu),
            L_CPU_MANUFACTURER: self.cpu_manufacturer,
            L_MEMORY: str(self.memory_mib),
        }
        if self.network_mbps is not None:  # Karpenter omits the label when EC2 gives no baseline
            labels[L_NETWORK_BANDWIDTH] = str(self.network_mbps)
        if self.local_nvme_gib > 0:  # Karpenter omits the label without instance store
            labels[L_LOCAL_NVME] = str(self.local_nvme_gib)
        if self.is_nvidia:
            labels[L_GPU_NAME] = self.karpenter_name
            labels[L_GPU_COUNT] = str(self.accelerator_count)
            labels[L_GPU_MANUFACTURER] = "nvidia"
            labels[L_GPU_MEMORY] = str(self.gpu_memory_mib)
        else:
            labels[L_ACCELERATOR_NAME] = self.karpenter_name
            labels[L_ACCELERATOR_COUNT] = str(self.accelerator_count)
            labels[L_ACCELERATOR_MANUFACTURER] = "aws"
        return labels


_MATCH_CACHE_LIMIT = 4096


class Catalogue(BaseModel):
    """The whole validated catalogue: versioned, sourced, in file order."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: int = Field(ge=1)
    as_of: date
    sources: dict[str, Source]
    instances: tuple[InstanceType, ...] = Field(min_length=1)

    _by_name: dict[str, InstanceType] = PrivateAttr(default_factory=dict)
    _index: dict[str, dict[str, frozenset[int]]] = PrivateAttr(default_factory=dict)
    _match_cache: dict[tuple[Requirement, ...], tuple[InstanceType, ...]] = PrivateAttr(default_factory=dict)

    @model_validator(mode="after")
    def _check_catalogue(self) -> Catalogue:
        seen: set[str] = set()
        problems: list[str] = []
        for it in self.instances:
            if it.name in seen:
                problems.append(f"duplicate instance {it.name}")
            seen.add(it.name)
            missing = [key for key in it.source_keys if key not in self.sources]
            if missing:
                problems.append(f"{it.name}: source keys {missing} are not in sources")
            if not it.source_keys:
                problems.append(f"{it.name}: no source")
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def model_post_init(self, __context: Any) -> None:
        self._by_name = {it.name: it for it in self.instances}
        index: dict[str, dict[str, set[int]]] = {}
        for position, it in enumerate(self.instances):
            for key, value in it._labels.items():
                index.setdefault(key, {}).setdefault(value, set()).add(position)
        self._index = {k: {v: frozenset(s) for v, s in vals.items()} for k, vals in index.items()}

    def __hash__(self) -> int:
        return hash((self.version, self.as_of, tuple(it.name for it in self.instances)))

    # -- lookups --------------------------------------------------------------------------------
    def get(self, name: str) -> InstanceType | None:
        """The instance type with exactly this name (as Karpenter spells it, or a SageMaker HyperPod
        ``ml.`` name of the same hardware), else None."""
        return self._by_name.get(ec2_instance_name(name)) if isinstance(name, str) else None

    def all(self) -> tuple[InstanceType, ...]:
        return self.instances

    def names(self) -> frozenset[str]:
        return frozenset(self._by_name)

    def matching(self, labels_requirements: Iterable[Any]) -> tuple[InstanceType, ...]:
        """Instance types (catalogue order) whose labels satisfy every requirement.

        Each requirement is ``(key, operator, values)`` or a mapping with ``key``, ``operator``
        and ``values`` (as in a NodePool or ``nodeSelectorTerms[].matchExpressions``). Operators:
        In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte, Lte. Keys outside
        :data:`INSTANCE_LABEL_KEYS` and malformed requirements are ignored (:mod:`.requirements`).
        As in Kubernetes, NotIn and DoesNotExist match types that lack the label.
        """
        normalised = tuple(
            req for req in (normalise_requirement(raw) for raw in labels_requirements or ()) if req is not None
        )
        cached = self._match_cache.get(normalised)
        if cached is not None:
            return cached
        positions = set(range(len(self.instances)))
        for key, operator, values in normalised:
            if not positions:
                break
            positions &= self._satisfying(key, operator, values)
        result = tuple(self.instances[p] for p in sorted(positions))
        if len(self._match_cache) >= _MATCH_CACHE_LIMIT:
            self._match_cache.clear()
        self._match_cache[normalised] = result
        return result

    def _satisfying(self, key: str, operator: str, values: tuple[str, ...]) -> set[int]:
        by_value = self._index.get(key, {})
        everyone = set(range(len(self.instances)))
        having = set().union(*by_value.values()) if by_value else set()
        if operator == "In":
            return set().union(*(by_value.get(v, frozenset()) for v in values))
        if operator == "NotIn":
            return everyone - set().union(*(by_value.get(v, frozenset()) for v in values))
        if operator == "Exists":
            return having
        if operator == "DoesNotExist":
            return everyone - having
        compare = NUMERIC_OPERATORS[operator]
        bound = int(values[0])
        found: set[int] = set()
        for value, positions in by_value.items():
            number = parse_label_int(value)
            if number is not None and compare(number, bound):
                found |= positions
        return found
