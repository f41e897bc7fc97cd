"""Family 3xx: shared memory (/dev/shm)."""

from __future__ import annotations

from eksmllint.checks.helpers import SHM_PATH, dataloader_workers, mount_at, unique_volume_name
from eksmllint.core.finding import AppendItem, Fix
from eksmllint.quantity import format_mib, to_mib
from eksmllint.workload import Container, PodTemplate

#: Share of the container's memory limit given to a computed /dev/shm (see README "Fix formulas").
SHM_FRACTION = 0.25
MIN_SHM_MIB = 1024


def is_kuberay_managed(c: Container) -> bool:
    """KubeRay adds a memory-backed /dev/shm to the Ray container (the first one) of each group,
    sized to its memory limit, unless rayStartParams.plasma-directory is set (facts section 6)."""
    t = c.template
    if t.resource.kind not in ("RayCluster", "RayJob") or t.role == "submitter":
        return False
    if c.init or t.containers.index(c) != 0:
        return False
    group = t.resource.get(t.path[:-1])
    params = group.get("rayStartParams") if isinstance(group, dict) else None
    return not (isinstance(params, dict) and "plasma-directory" in params)


def shm_size_mib(c: Container) -> int | None:
    """The computed sizeLimit: 25% of the container's memory limit (request if no limit),
    rounded down to a whole GiB, at least 1 GiB. None when the container declares no memory."""
    mem = c.limit_quantity("memory") or c.request_quantity("memory")
    if mem is None or mem <= 0:
        return None
    mib = to_mib(mem) * SHM_FRACTION
    mib = max(MIN_SHM_MIB, int(mib // 1024) * 1024)
    return int(mib)


def shm_fix(t: PodTemplate, c: Container) -> Fix | None:
    size = shm_size_mib(c)
    if size is None:
        return None
    name = unique_volume_name(t, "dshm")
    volume = {"name": name, "emptyDir": {"medium": "Memory", "sizeLimit": format_mib(size)}}
    return Fix(
        f"Add a {format_mib(size)} memory-backed /dev/shm to container {c.name!r}",
        (AppendItem(t.spec_path + ("volumes",), volume),
         AppendItem(c.path + ("volumeMounts",), {"name": name, "mountPath": SHM_PATH})),
    )


def shm_missing(ctx, t: PodTemplate):
    if not t.is_training:
        return
    for c in t.containers:
        devices = sum(c.count(r) for r in t.accelerators)
        workers = dataloader_workers(c)
        if devices <= 1 and workers == 0:
            continue
        if mount_at(c, SHM_PATH) is not None or is_kuberay_managed(c):
            continue
        why = f"{devices} accelerators" if devices > 1 else f"{workers} DataLoader workers"
        yield ctx.report(
            t.resource, c.path + ("name",),
            f"container {c.name!r} ({why}) has no memory-backed /dev/shm; the 64 MiB default "
            "crashes NCCL and DataLoader workers with bus errors",
            fix=shm_fix(t, c),
        )
