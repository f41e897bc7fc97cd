"""Validated catalogue of accelerated EC2 instance types (p, g, trn, inf families).

Why this module exists: rules such as ``efa-over-request``, ``accelerator-exceeds-node``,
``cpu-memory-exceeds-node`` and ``bf16-unsupported`` need hard facts about the instance types a
pod can land on. Those facts live **once**, as data, in ``instances.yaml`` next to this file, each
with a citation (``source``) and, where the facts reference is not sure, a ``confidence`` tag.
The YAML is loaded lazily on first use, validated with frozen pydantic models, and cached; all
other values (Kubernetes labels, extended-resource capacity, allocatable) are *derived* here so
they cannot drift from the data.

Allocatable, as Karpenter computes it (default settings)
--------------------------------------------------------
Karpenter (``pkg/providers/instancetype/types.go``: ``memory()``, ``kubeReservedResources()``,
``evictionThreshold()``, ``pods()``; see source ``karpenter-allocatable-formula``) computes::

    memory_mib      = memory_gib * 1024                    # EC2 MemoryInfo.SizeInMiB
    vm_overhead     = ceil(memory_mib * vmMemoryOverheadPercent)   # vmMemoryOverheadPercent = 0.075
    kube_reserved   = 11 * max_pods + 255                  # MiB, max_pods = ENI-limited pods
    eviction_hard   = 100                                  # MiB, memory.available default
    allocatable_memory_mib = memory_mib - vm_overhead - kube_reserved - eviction_hard

    kube_reserved_cpu_millis = int(1000 * 0.06)            # first core:      60m
                             + int(1000 * 0.01)            # second core:     10m
                             + int(2000 * 0.005)           # cores 3-4:       10m
                             + int((vcpu*1000 - 4000) * 0.0025)   # every core above 4
    allocatable_cpu_millis = vcpu * 1000 - kube_reserved_cpu_millis

Rounding: Karpenter takes ``math.Ceil`` of the VM overhead in MiB (so allocatable memory is the
*floor* of ``memory_mib * 0.925 - kube_reserved - 100``), and truncates each CPU band with
``int64()`` (each band is capped at its width and only counted for vcpu*1000 above its start).
Both are reproduced with the same IEEE-754 float operations Go uses. The result matches every
row of the facts-reference allocatable table (e.g. p4d.24xlarge 95690m / 1082712Mi,
trn1.32xlarge 127610m / 481894Mi) and the cpu/memory Karpenter reports for every instance in
the catalogue. Graviton (arm64) instances lose a further 64 MiB of CMA memory in Karpenter (the
g5g rows reproduce it, e.g. g5g.8xlarge 57632Mi).

GPUs EC2 does not count
-----------------------
g6f/gr6f carry a fraction of one L4 (``gpu_fraction``) and EC2 reports ``instance-gpu-count: 0``,
so Karpenter offers no ``nvidia.com/gpu`` on them (source ``karpenter-issue-8368``):
:attr:`InstanceType.has_uncounted_gpu` lets rules say why a GPU pod pinned there never schedules.

Capacity types
--------------
:data:`CAPACITY_TYPES` lists ``karpenter.sh/capacity-type`` values in Karpenter's launch preference.
``reserved`` covers on-demand capacity reservations and Capacity Blocks; a reservation labelled
``capacity-reservation-interruptible: "true"`` can be reclaimed like spot. The reservation labels
(:data:`RESERVATION_LABELS`) are only present on reserved nodes, so a pod selecting one needs a
NodePool that allows ``reserved`` (source ``karpenter-capacity-types``).

Label matching
--------------
:meth:`Catalogue.matching` evaluates node-selector / NodePool requirements against the
well-known labels Karpenter puts on these instance types (:data:`INSTANCE_LABEL_KEYS`).
Requirements on any other key (zone, capacity type, custom labels, or instance properties this
catalogue does not model, such as ``instance-hypervisor``) are ignored, so the result is the
set of catalogue types that *could* satisfy the requirements. Malformed requirements (unknown
operator, ``In`` without values, ``Gt`` with a non-integer or more than one value) are ignored as
well: schema rules report them, and ignoring keeps downstream rules from cascading on them.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable, Mapping
from datetime import date
from decimal import Decimal
from importlib import resources
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, model_validator

from eksmllint.yamlpos import YAMLLoadError, load_data

__all__ = [
    "ACCELERATOR_RESOURCES",
    "CAPACITY_TYPES",
    "INSTANCE_LABEL_KEYS",
    "LABEL_ALIASES",
    "L_CAPACITY_TYPE",
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
    "parse_catalogue",
]

# --------------------------------------------------------------------------------------------
# Karpenter defaults (source: karpenter-allocatable-formula)
# --------------------------------------------------------------------------------------------
VM_MEMORY_OVERHEAD_PERCENT = 0.075
"""Karpenter ``settings.vmMemoryOverheadPercent`` default."""
EVICTION_HARD_MEMORY_MIB = 100
"""Karpenter's default ``memory.available`` eviction threshold."""
KUBE_RESERVED_MEMORY_PER_POD_MIB = 11
KUBE_RESERVED_MEMORY_BASE_MIB = 255
ARM64_CMA_RESERVED_MIB = 64
# (start millicores, end millicores, fraction) bands of kube-reserved CPU.
_KUBE_RESERVED_CPU_BANDS: tuple[tuple[int, int, float], ...] = (
    (0, 1000, 0.06),
    (1000, 2000, 0.01),
    (2000, 4000, 0.005),
    (4000, 1 << 31, 0.0025),
)


def karpenter_allocatable_cpu_millis(vcpu: int) -> int:
    """CPU allocatable (millicores) Karpenter computes for ``vcpu`` cores with default kube-reserved."""
    cpu = vcpu * 1000
    reserved = 0
    for start, end, fraction in _KUBE_RESERVED_CPU_BANDS:
        if cpu >= start:
            width = float(end - start) if cpu >= end else float(cpu - start)
            reserved += int(width * fraction)  # Go int64() truncates toward zero
    return cpu - reserved


def karpenter_allocatable_memory_mib(
    memory_mib: int,
    max_pods: int,
    *,
    vm_memory_overhead_percent: float = VM_MEMORY_OVERHEAD_PERCENT,
    arch: str = "amd64",
) -> int:
    """Memory allocatable (MiB) Karpenter computes with default settings (see module docstring)."""
    capacity = _vm_capacity_mib(memory_mib, arch, vm_memory_overhead_percent)
    kube_reserved = KUBE_RESERVED_MEMORY_PER_POD_MIB * max_pods + KUBE_RESERVED_MEMORY_BASE_MIB
    return capacity - kube_reserved - EVICTION_HARD_MEMORY_MIB


def _vm_capacity_mib(memory_mib: int, arch: str, vm_memory_overhead_percent: float = VM_MEMORY_OVERHEAD_PERCENT) -> int:
    """Node memory (MiB) before kube-reserved and eviction: the type's memory less arm64's CMA
    reservation and Karpenter's VM overhead estimate."""
    size = memory_mib - (ARM64_CMA_RESERVED_MIB if arch == "arm64" else 0)
    # Go: math.Ceil(float64(bytes) * pct / 1024 / 1024), same float operations in the same order.
    return size - math.ceil(float(size * 1024 * 1024) * vm_memory_overhead_percent / 1024 / 1024)


def _kube_reserved_cpu_millis(vcpu: int) -> int:
    return vcpu * 1000 - karpenter_allocatable_cpu_millis(vcpu)


def kubelet_allocatable(it: InstanceType, kubelet: Mapping[str, Any] | None) -> tuple[int | None, int | None]:
    """(cpu millicores, memory MiB) Karpenter computes for ``it`` under a ``kubelet`` block (EC2NodeClass
    ``spec.kubelet``; source karpenter-allocatable-formula): ``maxPods`` / ``podsPerCore`` change the
    pod count behind kube-reserved memory, ``kubeReserved`` replaces the default per resource,
    ``systemReserved`` adds, ``evictionHard["memory.available"]`` (a quantity, or a percentage of the
    memory left after the VM overhead, rounded up) replaces the 100Mi default. ``evictionSoft`` is
    ignored (current Karpenter leaves it out of allocatable). A dimension whose setting is not a
    literal quantity is None (unknown)."""
    from eksmllint.quantity import parse_quantity  # local: the catalogue is otherwise self-contained

    kubelet = kubelet if isinstance(kubelet, Mapping) else {}

    def section(name: str) -> Mapping[str, Any]:
        value = kubelet.get(name)
        return value if isinstance(value, Mapping) else {}

    def count(name: str) -> int | bool | None:
        value = kubelet.get(name)
        if value is None:
            return None
        return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else False

    max_pods, per_core = count("maxPods"), count("podsPerCore")
    if max_pods is False or per_core is False:
        return None, None
    pods = max_pods or it.max_pods
    if per_core:
        pods = min(pods, per_core * it.vcpu)

    def reserved(resource: str, default: Decimal) -> Decimal | None:
        total = Decimal(0)
        for name, fallback in (("kubeReserved", default), ("systemReserved", Decimal(0))):
            raw = section(name).get(resource)
            value = fallback if raw is None else parse_quantity(raw)
            if value is None:
                return None
            total += value
        return total

    cpu_reserved = reserved("cpu", Decimal(_kube_reserved_cpu_millis(it.vcpu)) / 1000)
    cpu = None if cpu_reserved is None else it.vcpu * 1000 - math.ceil(cpu_reserved * 1000)
    mib = 2**20
    capacity = _vm_capacity_mib(it.memory_mib, it.arch)
    kube_default = Decimal(KUBE_RESERVED_MEMORY_PER_POD_MIB * pods + KUBE_RESERVED_MEMORY_BASE_MIB) * mib
    mem_reserved = reserved("memory", kube_default)
    raw = section("evictionHard").get("memory.available")
    if raw is None:
        eviction: Decimal | None = Decimal(EVICTION_HARD_MEMORY_MIB) * mib
    elif isinstance(raw, str) and raw.strip().endswith("%"):
        try:
            eviction = Decimal(math.ceil(capacity * mib / 100 * float(raw.strip()[:-1])))
        except ValueError:
            eviction = None
    else:
        eviction = parse_quantity(raw)
    memory = (
        None
        if mem_reserved is None or eviction is None
        else math.floor((capacity * mib - mem_reserved - eviction) / mib)
    )
    return cpu, memory


# --------------------------------------------------------------------------------------------
# Label keys and resource names
# --------------------------------------------------------------------------------------------
_K = "karpenter.k8s.aws/"
L_INSTANCE_TYPE = "node.kubernetes.io/instance-type"
L_ARCH = "kubernetes.io/arch"
L_OS = "kubernetes.io/os"
L_FAMILY = _K + "instance-family"
L_CATEGORY = _K + "instance-category"
L_GENERATION = _K + "instance-generation"
L_SIZE = _K + "instance-size"
L_CPU = _K + "instance-cpu"
L_CPU_MANUFACTURER = _K + "instance-cpu-manufacturer"
L_MEMORY = _K + "instance-memory"
L_NETWORK_BANDWIDTH = _K + "instance-network-bandwidth"
L_LOCAL_NVME = _K + "instance-local-nvme"
L_GPU_NAME = _K + "instance-gpu-name"
L_GPU_COUNT = _K + "instance-gpu-count"
L_GPU_MANUFACTURER = _K + "instance-gpu-manufacturer"
L_GPU_MEMORY = _K + "instance-gpu-memory"
L_ACCELERATOR_NAME = _K + "instance-accelerator-name"
L_ACCELERATOR_COUNT = _K + "instance-accelerator-count"
L_ACCELERATOR_MANUFACTURER = _K + "instance-accelerator-manufacturer"

INSTANCE_LABEL_KEYS: frozenset[str] = frozenset(
    {
        L_INSTANCE_TYPE,
        L_ARCH,
        L_OS,
        L_FAMILY,
        L_CATEGORY,
        L_GENERATION,
        L_SIZE,
        L_CPU,
        L_CPU_MANUFACTURER,
        L_MEMORY,
        L_NETWORK_BANDWIDTH,
        L_LOCAL_NVME,
        L_GPU_NAME,
        L_GPU_COUNT,
        L_GPU_MANUFACTURER,
        L_GPU_MEMORY,
        L_ACCELERATOR_NAME,
        L_ACCELERATOR_COUNT,
        L_ACCELERATOR_MANUFACTURER,
    }
)
"""Label keys :meth:`Catalogue.matching` evaluates; requirements on other keys are ignored."""

LABEL_ALIASES: Mapping[str, str] = {
    # Deprecated beta labels Kubernetes and Karpenter still normalise to the GA keys.
    "beta.kubernetes.io/instance-type": L_INSTANCE_TYPE,
    "beta.kubernetes.io/arch": L_ARCH,
    "beta.kubernetes.io/os": L_OS,
}

SAGEMAKER_PREFIX = "ml."
"""SageMaker HyperPod names its nodes' instance types ``ml.<EC2 type>`` (source: sagemaker-hyperpod-names)."""


def ec2_instance_name(name: str) -> str:
    """The EC2 twin of a SageMaker HyperPod instance name (``ml.p5.48xlarge`` -> ``p5.48xlarge``);
    other names unchanged."""
    return name[len(SAGEMAKER_PREFIX) :] if name.startswith(SAGEMAKER_PREFIX) else name


L_CAPACITY_TYPE = "karpenter.sh/capacity-type"
L_RESERVATION_INTERRUPTIBLE = _K + "capacity-reservation-interruptible"
L_RESERVATION_ID = _K + "capacity-reservation-id"
L_RESERVATION_TYPE = _K + "capacity-reservation-type"
RESERVATION_LABELS: tuple[str, ...] = (L_RESERVATION_ID, L_RESERVATION_TYPE, L_RESERVATION_INTERRUPTIBLE)
"""Labels Karpenter sets only on nodes launched into a capacity reservation (capacity type ``reserved``)."""
CAPACITY_TYPES: tuple[str, ...] = ("reserved", "spot", "on-demand")
"""``karpenter.sh/capacity-type`` values, in the order Karpenter prefers them when several are allowed."""
RECLAIMABLE_CAPACITY_TYPES: frozenset[str] = frozenset({"spot"})
"""Capacity EC2 can take back with a short notice (plus reservations marked interruptible)."""

R_NVIDIA_GPU = "nvidia.com/gpu"
R_NEURON = "aws.amazon.com/neuron"
R_NEURONDEVICE = "aws.amazon.com/neurondevice"
R_NEURONCORE = "aws.amazon.com/neuroncore"
R_EFA = "vpc.amazonaws.com/efa"
ACCELERATOR_RESOURCES: tuple[str, ...] = (R_NVIDIA_GPU, R_NEURON, R_NEURONDEVICE, R_NEURONCORE, R_EFA)
"""Extended resources :meth:`InstanceType.resource_capacity` reports (always all of them)."""

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


Requirement = tuple[str, str, tuple[str, ...]]
"""A normalised node-selector requirement: (key, operator, values)."""

_SET_OPERATORS = frozenset({"In", "NotIn"})
_PRESENCE_OPERATORS = frozenset({"Exists", "DoesNotExist"})
_NUMERIC_OPERATORS: Mapping[str, Any] = {
    "Gt": lambda a, b: a > b,
    "Lt": lambda a, b: a < b,
    "Gte": lambda a, b: a >= b,
    "Lte": lambda a, b: a <= b,
}
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
        :data:`INSTANCE_LABEL_KEYS` and malformed requirements are ignored (module docstring).
        As in Kubernetes, NotIn and DoesNotExist match types that lack the label.
        """
        normalised = tuple(req for req in (_normalise(raw) for raw in labels_requirements or ()) if req is not None)
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
        compare = _NUMERIC_OPERATORS[operator]
        bound = int(values[0])
        found: set[int] = set()
        for value, positions in by_value.items():
            number = _parse_int(value)
            if number is not None and compare(number, bound):
                found |= positions
        return found


def _parse_int(text: str) -> int | None:
    try:
        return int(text.strip())
    except (ValueError, AttributeError):
        return None


def _label_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _normalise(raw: Any) -> Requirement | None:
    """Canonical (key, operator, values) or None when the requirement is ignored."""
    if isinstance(raw, Mapping):
        key, operator, values = raw.get("key"), raw.get("operator"), raw.get("values")
    elif isinstance(raw, (tuple, list)) and len(raw) in (2, 3):
        key, operator = raw[0], raw[1]
        values = raw[2] if len(raw) == 3 else None
    else:
        return None
    if not isinstance(key, str) or not isinstance(operator, str):
        return None
    key = LABEL_ALIASES.get(key.strip(), key.strip())
    if key not in INSTANCE_LABEL_KEYS:
        return None
    if values is None:
        items: tuple[str, ...] = ()
    elif isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        items = (_label_value(values),)
    else:
        items = tuple(_label_value(v) for v in values)
    if key == L_INSTANCE_TYPE:  # a HyperPod node's ml.<type> label names the same hardware
        items = tuple(ec2_instance_name(v) for v in items)
    if operator in _SET_OPERATORS:
        return (key, operator, tuple(sorted(set(items)))) if items else None
    if operator in _PRESENCE_OPERATORS:
        return (key, operator, ())
    if operator in _NUMERIC_OPERATORS:
        if len(items) != 1 or _parse_int(items[0]) is None:
            return None
        return (key, operator, (str(_parse_int(items[0])),))
    return None


# --------------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------------
def parse_catalogue(text: str) -> Catalogue:
    """Parse and validate catalogue YAML text; raises :class:`CatalogueError` on any problem."""
    try:
        data = load_data(text)
    except YAMLLoadError as exc:
        raise CatalogueError(f"instance catalogue is not valid YAML: line {exc.line}: {exc.message}") from exc
    if not isinstance(data, dict):
        raise CatalogueError("instance catalogue must be a mapping at the top level")
    try:
        return Catalogue.model_validate(data)
    except ValidationError as exc:
        raise CatalogueError(f"instance catalogue failed validation:\n{exc}") from exc


@functools.lru_cache(maxsize=1)
def get_catalogue() -> Catalogue:
    """The packaged catalogue (``instances.yaml``), loaded and validated once per process."""
    text = resources.files(__name__).joinpath("instances.yaml").read_text(encoding="utf-8")
    return parse_catalogue(text)
