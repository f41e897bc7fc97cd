"""EML104 efa-env-conflict: a pod that requests EFA (or an MPIJob launcher whose workers do) sets
``FI_PROVIDER``, ``NCCL_NET`` or ``NCCL_NET_PLUGIN`` to a value that keeps NCCL off EFA."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from eksmllint.checks.efa._shared import (
    EnvSetting,
    argv_settings,
    efa_containers,
    env_settings,
    template_location,
)
from eksmllint.core.finding import Finding
from eksmllint.workload import EFA, PodTemplate

if TYPE_CHECKING:
    from eksmllint.core.context import RuleContext


def check(ctx: RuleContext, t: PodTemplate) -> Iterator[Finding]:
    w = t.workload
    if t.device_count(EFA) > 0:
        n = t.device_count(EFA)
        subjects = efa_containers(t) or t.containers
        for c in subjects:
            for s, why in _conflicts([*env_settings(c), *argv_settings(c)]):
                yield ctx.report(
                    t.resource,
                    s.path,
                    f"{s.name}={s.value.strip()} keeps NCCL off EFA although the pod requests {n} vpc.amazonaws.com/efa",
                    detail=f"The setting ({s.how}) {why}, so EFA is never used.",
                )
    elif t.role == "launcher" and w.kind == "MPIJob":
        workers = [o for o in w.templates if o is not t and o.device_count(EFA) > 0]
        if not workers:
            return
        n = max(o.device_count(EFA) for o in workers)
        for c in t.containers:
            for s, why in _conflicts(argv_settings(c)):
                yield ctx.report(
                    t.resource,
                    s.path,
                    f"{s.name}={s.value.strip()} keeps NCCL off EFA on workers that request {n} vpc.amazonaws.com/efa",
                    detail=f"The setting ({s.how}) {why} on the workers, so EFA is never used.",
                    related=[template_location(o) for o in workers],
                )


def transport_conflict(name: str, value: str) -> str | None:
    """Why ``name=value`` keeps traffic off EFA, or None when it does not."""
    v = value.strip().strip("'\"").strip()
    if not v:
        return None
    low = v.lower()
    if name == "FI_PROVIDER":
        providers = [p.strip() for p in low.lstrip("^").split(",") if p.strip()]
        if low.startswith("^"):
            return "excludes the libfabric efa provider" if "efa" in providers else None
        return None if "efa" in providers else f"selects the libfabric {v} provider instead of efa"
    if name == "NCCL_NET":
        if low == "socket":
            return "forces NCCL's TCP socket transport"
        if low == "ib":
            return "forces NCCL's internal InfiniBand verbs transport, which cannot drive EFA"
        return None
    if name == "NCCL_NET_PLUGIN" and low in ("none", "0", "disabled"):
        return "stops NCCL from loading aws-ofi-nccl (its only way to EFA)"
    return None


def _conflicts(settings: Iterable[EnvSetting]) -> Iterator[tuple[EnvSetting, str]]:
    """The settings that keep NCCL/libfabric off EFA, with why."""
    for s in settings:
        why = transport_conflict(s.name, s.value)
        if why:
            yield s, why
