"""EML302 shm-unbounded: a memory-backed /dev/shm emptyDir without sizeLimit, or a KubeRay Ray
container whose operator-made /dev/shm has nothing to be sized to (no memory limit or request)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from eksmllint.checks.helpers import SHM_PATH, mount_at
from eksmllint.checks.shm._shared import (
    KUBERAY_PLASMA_SKIPS_SHM,
    computed_shm_mib,
    emptydir_of,
    is_kuberay_managed,
    is_memory_emptydir,
    pod_memory_limit_mib,
    sets_plasma_directory,
    shm_mounts,
)
from eksmllint.core.finding import Finding, Fix, SetValue
from eksmllint.quantity import format_mib
from eksmllint.workload import PodTemplate

if TYPE_CHECKING:
    from eksmllint.core.context import RuleContext


def _has_size_limit(volume: dict) -> bool:
    ed = emptydir_of(volume) or {}
    value = ed.get("sizeLimit")
    return value is not None and value != ""


def check(ctx: RuleContext, t: PodTemplate) -> Iterator[Finding]:
    if not t.is_training:
        return
    unbounded = [m for m in shm_mounts(t) if is_memory_emptydir(m[1]) and not _has_size_limit(m[1])]
    if unbounded:
        pod_limit = pod_memory_limit_mib(t)
        if pod_limit:
            outcome = f"can fill the pod's whole {format_mib(pod_limit)} memory limit and get it OOM-killed"
        else:
            outcome = "can grow to the node's allocatable memory (the pod has no memory limit)"
    for idx, vol, containers in unbounded:
        ed_path = t.spec_path + ("volumes", idx, "emptyDir")
        size = computed_shm_mib(containers)
        fix = None
        if size is not None:
            fix = Fix(
                f"Set sizeLimit {format_mib(size)} on the /dev/shm emptyDir {vol.get('name')!r}",
                (SetValue(ed_path + ("sizeLimit",), format_mib(size)),),
            )
        yield ctx.report(
            t.resource,
            ed_path,
            f"the /dev/shm emptyDir {vol.get('name')!r} has no sizeLimit",
            detail=f"The tmpfs {outcome}.",
            fix=fix,
        )
    for c in t.containers:
        if not is_kuberay_managed(c, ctx.platform) or mount_at(c, SHM_PATH) is not None:
            continue
        if c.limit_quantity("memory") is not None or c.request_quantity("memory") is not None:
            continue
        res = c.path + ("resources",) if "resources" in c.data else c.path + ("name",)
        plasma = (
            f"; before KubeRay {KUBERAY_PLASMA_SKIPS_SHM} even with rayStartParams.plasma-directory set"
            if sets_plasma_directory(c)
            else ""
        )
        yield ctx.report(
            t.resource,
            res,
            f"Ray container {c.name!r} sets no memory limit or request, so its /dev/shm is unbounded",
            detail=f"The /dev/shm that {ctx.platform.describe('kuberay')} adds (for the object store{plasma}) gets "
            "no sizeLimit and can grow to the node's memory.",
        )
