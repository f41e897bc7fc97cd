"""Node allocatable CPU and memory, as Karpenter computes them for a catalogue instance type.

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
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from decimal import Decimal
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .models import InstanceType

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
