"""EML107 nvlink-p2p-disabled: a multi-GPU training container sets ``NCCL_P2P_DISABLE=1`` (or
``NCCL_P2P_LEVEL=LOC``) although every instance type it lands on joins its GPUs with NVLink or
NVSwitch (the catalogue's ``nvlink`` column): NCCL falls back to host memory within the node."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from eksmllint.analysis.placement import placement
from eksmllint.core.finding import Finding, Fix, RemovePath
from eksmllint.workload import GPU, PodTemplate

if TYPE_CHECKING:
    from eksmllint.core.context import RuleContext

#: Values that switch NCCL's peer-to-peer transport off (NCCL env docs: P2P_DISABLE "set to 1";
#: P2P_LEVEL "LOC: never use P2P", numeric 0 in older releases).
_P2P_OFF = {"NCCL_P2P_DISABLE": frozenset({"1"}), "NCCL_P2P_LEVEL": frozenset({"LOC", "0"})}


def check(ctx: RuleContext, t: PodTemplate) -> Iterator[Finding]:
    subjects = [c for c in t.containers if c.count(GPU) >= 2]
    if not subjects:
        return
    types = placement(ctx.run, t).instance_types
    if not types or not all(it.nvlink for it in types):
        return  # unknown, or some node joins its GPUs over PCIe only (P2P may be a real workaround)
    families = ", ".join(sorted({it.family for it in types}))
    for c in subjects:
        for i, e in enumerate(c.env_list):
            name, value = e.get("name"), e.get("value")
            if name not in _P2P_OFF or "valueFrom" in e or str(value).strip().upper() not in _P2P_OFF[name]:
                continue
            gone = c.path + (("env",) if len(c.env_list) == 1 else ("env", i))  # no empty env list
            yield ctx.report(
                t.resource,
                c.path + ("env", i),
                f"{name}={value} turns off NVLink peer-to-peer for {c.count(GPU)} GPUs on {families}",
                fix=Fix(f"Remove {name} from container {c.name!r}", (RemovePath(gone),)),
            )
