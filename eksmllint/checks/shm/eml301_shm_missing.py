"""EML301 shm-missing: a training container with several accelerators or DataLoader workers mounts
no /dev/shm (KubeRay's Ray containers get one from the operator)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from eksmllint.checks.helpers import SHM_PATH, dataloader_workers, mount_at, sentences, unique_volume_name
from eksmllint.checks.shm._shared import CONTAINER_DEFAULT_SHM_MIB, is_kuberay_managed, is_ray_container, shm_size_mib
from eksmllint.core.finding import AppendItem, Finding, Fix
from eksmllint.quantity import format_mib
from eksmllint.workload import Container, PodTemplate

if TYPE_CHECKING:
    from eksmllint.core.context import RuleContext


def shm_fix(t: PodTemplate, c: Container) -> Fix | None:
    size = shm_size_mib(c)
    if size is None:
        return None
    name = unique_volume_name(t, "dshm")
    volume = {"name": name, "emptyDir": {"medium": "Memory", "sizeLimit": format_mib(size)}}
    return Fix(
        f"Add a {format_mib(size)} memory-backed /dev/shm to container {c.name!r}",
        (
            AppendItem(t.spec_path + ("volumes",), volume),
            AppendItem(c.path + ("volumeMounts",), {"name": name, "mountPath": SHM_PATH}),
        ),
    )


def check(ctx: RuleContext, t: PodTemplate) -> Iterator[Finding]:  # judged classes: rule YAML workload-classes
    for c in t.containers:
        devices = sum(c.count(r) for r in t.accelerators)
        workers = dataloader_workers(c)
        if devices <= 1 and workers == 0:
            continue
        if mount_at(c, SHM_PATH) is not None or is_kuberay_managed(c, ctx.platform):
            continue
        why = f"{devices} accelerators" if devices > 1 else f"{workers} DataLoader workers"
        ray = (
            f" ({ctx.platform.describe('kuberay')} adds none when rayStartParams.plasma-directory is set)"
            if is_ray_container(c)
            else ""
        )
        yield ctx.report(
            t.resource,
            c.path + ("name",),
            f"container {c.name!r} ({why}) has no memory-backed /dev/shm",
            detail=sentences(
                ray.strip()[1:-1],
                f"the {CONTAINER_DEFAULT_SHM_MIB} MiB default crashes NCCL and DataLoader workers with bus errors",
            ),
            fix=shm_fix(t, c),
        )
