"""EML103 efa-not-requested: a multi-node training pod that lands only on EFA-capable instance
types, or selects libfabric's efa provider, but requests no ``vpc.amazonaws.com/efa`` gets no EFA
device, and NCCL falls back to TCP sockets between nodes."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from eksmllint.checks.efa._shared import (
    EfaOffer,
    EnvSetting,
    argv_settings,
    efa_offers,
    env_settings,
    offered_types,
    template_location,
    type_list,
)
from eksmllint.checks.helpers import pod_claims
from eksmllint.core.finding import Finding, Fix, SetValue
from eksmllint.workload import DEVICE_PLUGIN_RESOURCES, EFA, PodTemplate

if TYPE_CHECKING:
    from eksmllint.core.context import RuleContext


def check(ctx: RuleContext, t: PodTemplate) -> Iterator[Finding]:
    w = t.workload
    if not t.is_training or not w.is_multi_pod or t not in w.collective_templates:
        return
    if not t.containers or any(EFA in c.limits or EFA in c.requests for c in t.containers + t.init_containers):
        return  # EFA requested (even with a value we cannot read: EML002/EML601 speak for that)
    if pod_claims(t):
        return  # devices from DRA ResourceClaims (EFA among them, maybe) are not counted: EML008 says so
    offers = efa_offers(ctx.run, t)
    if not offers or not all(o.devices > 0 for o in offers):
        yield from _efa_env_without_efa(ctx, t)
        return
    types = offered_types(offers)
    c = next((c for c in t.containers if any(c.count(r) for r in t.accelerators)), t.containers[0])
    value = efa_share(t, offers)
    path = c.path + ("resources",) if isinstance(c.data.get("resources"), dict) else c.path + ("name",)
    fix = None
    if value:
        ops = [SetValue(c.path + ("resources", "limits", EFA), value)]
        if any(r in c.requests for r in DEVICE_PLUGIN_RESOURCES):
            ops.append(SetValue(c.path + ("resources", "requests", EFA), value))
        fix = Fix(f"Request {value} vpc.amazonaws.com/efa in container {c.name!r}", tuple(ops))
    yield ctx.report(
        t.resource,
        path,
        "multi-node training pod lands only on EFA-capable instance types but requests no vpc.amazonaws.com/efa",
        fix=fix,
        detail=f"It lands on {type_list(types)}; without EFA its collectives between nodes fall back to TCP sockets.",
    )


def _efa_env_without_efa(ctx: RuleContext, t: PodTemplate) -> Iterator[Finding]:
    """A collective pod whose transport settings say EFA but that requests no EFA device, where the
    landing types do not settle it: the intent is EFA, the pod gets none. One finding per pod."""
    for c in t.containers:
        for setting, outcome in _efa_intent(list(env_settings(c)) + list(argv_settings(c))):
            yield ctx.report(
                t.resource,
                setting.path,
                f"container {c.name!r} sets {setting.name}={setting.value.strip()} but the pod requests no "
                "vpc.amazonaws.com/efa",
                detail=f"The setting ({setting.how}) {_selects(setting)}, but the pod gets no EFA device: {outcome}.",
            )
            return
    if t.workload.kind == "MPIJob" and t.role != "launcher":
        # mpirun -x / -genv on the launcher sets the variable in every worker's ranks
        for launcher in (o for o in t.workload.templates if o.role == "launcher"):
            for c in launcher.containers:
                for setting, outcome in _efa_intent(list(argv_settings(c))):
                    yield ctx.report(
                        t.resource,
                        setting.path,
                        f"launcher sets {setting.name}={setting.value.strip()} for the workers but they request "
                        "no vpc.amazonaws.com/efa",
                        detail=f"Launcher container {c.name!r} {_selects(setting)} for the workers (via "
                        f"{setting.how}), but they get no EFA device: {outcome}.",
                        related=[template_location(t)],
                    )
                    return


_FALLBACK = "aws-ofi-nccl cannot initialise and NCCL falls back to TCP sockets between nodes"
_FORCED = "NCCL_NET forces the aws-ofi-nccl plugin, which finds no EFA device, so NCCL fails to initialise"


def _efa_intent(settings: list[EnvSetting]) -> Iterator[tuple[EnvSetting, str]]:
    """The settings that select EFA, with what happens without a device: ``FI_PROVIDER=efa``, or the
    aws-ofi-nccl plugin named by ``NCCL_NET`` / ``NCCL_NET_PLUGIN`` unless ``FI_PROVIDER`` picks
    another libfabric provider (aws-ofi-nccl also drives HPE Slingshot through ``cxi``)."""
    providers = [s for s in settings if s.name == "FI_PROVIDER"]
    for s in providers:
        if _selects_efa(s.value):
            yield s, _FALLBACK
    if any(not _selects_efa(s.value) for s in providers):
        return
    for s in settings:
        if s.name == "NCCL_NET" and "libfabric" in s.value.lower():
            yield s, _FORCED
        elif s.name == "NCCL_NET_PLUGIN" and "ofi" in _WORDS.split(s.value.lower()):
            yield s, _FALLBACK


_WORDS = re.compile(r"[^a-z0-9]+")


def _selects(setting: EnvSetting) -> str:
    if setting.name == "FI_PROVIDER":
        return "selects the libfabric efa provider"
    return "selects the aws-ofi-nccl plugin (libfabric, EFA on AWS)"


def _selects_efa(value: str) -> bool:
    low = value.strip().strip("'\"").strip().lower()
    return not low.startswith("^") and "efa" in [p.strip() for p in low.split(",")]


def efa_share(t: PodTemplate, offers: tuple[EfaOffer, ...]) -> int:
    """EFA interfaces the pod can take without changing how many pods fit on a node: the node's
    EFA devices scaled by the pod's share of the node's accelerators, rounded down, minimum over
    the landing nodes. 0 when some node has fewer EFAs than pods (then no fix is offered)."""
    values = []
    for o in offers:
        capacity = o.instance.resource_capacity()
        shares = [n / capacity[r] for r, n in t.accelerators.items() if capacity.get(r)]
        share = min(1.0, max(shares)) if shares else 1.0
        values.append(int(o.devices * share + 1e-9))
    return min(values) if values else 0
