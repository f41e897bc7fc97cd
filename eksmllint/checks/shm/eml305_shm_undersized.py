"""EML305 shm-undersized: a memory-backed /dev/shm whose sizeLimit is below what the container's
collectives or DataLoader workers are documented to need (1Gi for NCCL across GPUs; more than the
64 MiB container default for DataLoader workers)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from eksmllint.checks.helpers import dataloader_workers
from eksmllint.checks.shm._shared import (
    CONTAINER_DEFAULT_SHM_MIB,
    MIN_SHM_MIB,
    computed_shm_mib,
    is_memory_emptydir,
    pod_memory_limit_mib,
    shm_mounts,
    size_limit_mib,
    sized_memory_emptydirs,
)
from eksmllint.core.finding import Finding, Fix, SetValue
from eksmllint.quantity import format_mib
from eksmllint.workload import GPU, Container, PodTemplate

if TYPE_CHECKING:
    from eksmllint.core.context import RuleContext


@dataclass(frozen=True)
class Need:
    """The least /dev/shm a container needs, and why."""

    least_mib: int
    why: str


def _need(c: Container, accelerators: tuple[str, ...]) -> Need | None:
    """The strictest /dev/shm need of container ``c``; None when nothing in it is known to use /dev/shm."""
    gpus = c.count(GPU)
    if gpus > 1 and c.env.get("NCCL_SHM_DISABLE") != "1":
        return Need(
            MIN_SHM_MIB,
            f"NCCL between its {gpus} GPUs needs at least the {format_mib(MIN_SHM_MIB)} NVIDIA documents for a "
            "container (--shm-size=1g); below it NCCL fails to initialise ('failed to extend /dev/shm/nccl-...')",
        )
    devices = sum(c.count(r) for r in accelerators)
    workers = dataloader_workers(c)
    if devices > 1 or workers > 0:
        who = f"{devices} accelerators" if devices > 1 else f"{workers} DataLoader workers"
        return Need(
            CONTAINER_DEFAULT_SHM_MIB + 1,  # anything above the default
            f"that is no more than the {CONTAINER_DEFAULT_SHM_MIB} MiB container default, which is too small "
            f"for its {who} (bus errors, 'insufficient shared memory')",
        )
    return None


def check(ctx: RuleContext, t: PodTemplate) -> Iterator[Finding]:  # judged classes: rule YAML workload-classes
    accelerators = tuple(t.accelerators)
    for idx, vol, containers in shm_mounts(t):
        size = size_limit_mib(vol)
        if size is None or not is_memory_emptydir(vol):
            continue
        short = [(c, n) for c in containers if not c.init and (n := _need(c, accelerators)) and size < n.least_mib]
        if not short:
            continue
        c, need = max(short, key=lambda cn: cn[1].least_mib)
        path = t.spec_path + ("volumes", idx, "emptyDir", "sizeLimit")
        yield ctx.report(
            t.resource,
            path,
            f"the /dev/shm emptyDir {vol.get('name')!r} of container {c.name!r} is limited to {format_mib(size)}",
            detail=f"{need.why[0].upper()}{need.why[1:]}.",
            fix=_raise_fix(t, path, vol, size, containers, [n for _, n in short]),
        )


def _raise_fix(
    t: PodTemplate, path: tuple, vol: dict, size: float, containers: list[Container], needs: list[Need]
) -> Fix | None:
    """Raise the sizeLimit to EML301's computed size, when that meets every need and the pod's
    memory-backed emptyDirs still fit its memory limit (EML303 would fire otherwise)."""
    new = computed_shm_mib(containers)
    if new is None or new <= size or any(new < n.least_mib for n in needs):
        return None
    limit = pod_memory_limit_mib(t)
    if limit is not None and sum(s for _, _, s in sized_memory_emptydirs(t)) - size + new > limit:
        return None
    return Fix(
        f"Raise the /dev/shm sizeLimit of {vol.get('name')!r} to {format_mib(new)}",
        (SetValue(path, format_mib(new)),),
    )
