"""EML304 shm-not-memory: the volume mounted at /dev/shm is not a memory-backed emptyDir (a hostPath
to the node's own /dev/shm, a disk-backed emptyDir, ...)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from eksmllint.checks.helpers import fmt_list
from eksmllint.checks.shm._shared import computed_shm_mib, is_memory_emptydir, shm_mounts
from eksmllint.core.finding import Finding, Fix, RemovePath, SetValue
from eksmllint.quantity import format_mib
from eksmllint.workload import PodTemplate

if TYPE_CHECKING:
    from eksmllint.core.context import RuleContext


def _source_keys(volume: dict) -> list[str]:
    return [k for k in volume if k != "name"]


def check(ctx: RuleContext, t: PodTemplate) -> Iterator[Finding]:
    if not t.is_training:
        return
    for idx, vol, containers in shm_mounts(t):
        keys = _source_keys(vol)
        if len(keys) != 1 or is_memory_emptydir(vol):
            continue
        key = keys[0]
        vpath = t.spec_path + ("volumes", idx)
        name = vol.get("name")
        who = fmt_list([repr(c.name) for c in containers])
        if key == "hostPath":
            hp = vol.get("hostPath")
            host = hp.get("path") if isinstance(hp, dict) else None
            what = f"mounts the node's {host} (hostPath volume {name!r}) at /dev/shm"
            why = "It shares it with every pod on the node, outside the pod's memory accounting."
        elif key == "emptyDir":
            what = f"mounts the disk-backed emptyDir {name!r} at /dev/shm (no medium: Memory)"
            why = "Shared memory then goes through the node's disk and counts against ephemeral storage."
        else:
            what = f"mounts the {key} volume {name!r} at /dev/shm"
            why = "/dev/shm needs a memory-backed emptyDir."
        size = computed_shm_mib(containers)
        fix = None
        if size is not None:
            new = {"medium": "Memory", "sizeLimit": format_mib(size)}
            ops = (
                (SetValue(vpath + ("emptyDir",), new),)
                if key == "emptyDir"
                else (RemovePath(vpath + (key,)), SetValue(vpath + ("emptyDir",), new))
            )
            fix = Fix(f"Replace volume {name!r} with a {format_mib(size)} memory-backed emptyDir", ops)
        yield ctx.report(t.resource, vpath + (key,), f"container {who} {what}", fix=fix, detail=why)
