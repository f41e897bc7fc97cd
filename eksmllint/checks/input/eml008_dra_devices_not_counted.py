"""EML008 dra-devices-not-counted: a pod gets GPUs, Neuron devices or EFA through DRA
ResourceClaims, which eksmllint does not count; said once (info) instead of rules judging the pod
device-less."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from eksmllint.checks.helpers import PodClaim, fmt_list, pod_claims
from eksmllint.core.finding import Finding
from eksmllint.workload import EFA, PodTemplate

if TYPE_CHECKING:
    from eksmllint.core.context import LintRun, RuleContext

RESOURCE_GROUP = "resource.k8s.io"
#: Words of a DeviceClass name that say it hands out accelerators or EFA (gpu.nvidia.com,
#: mig.nvidia.com, neuron.aws.com, efa...); others (an IMEX channel, a NIC) are not counted devices.
_DEVICE_WORDS = frozenset({"gpu", "gpus", "mig", "vgpu", "neuron", "efa"})
_SPLIT = re.compile(r"[^a-z0-9]+")


def check(ctx: RuleContext, t: PodTemplate) -> Iterator[Finding]:
    claims = pod_claims(t)
    if not claims:
        return
    classes = {c.name: claim_device_classes(ctx.run, t, c) for c in claims}
    devices = [c for c in claims if any(_is_device_class(k) for k in classes[c.name] or ())]
    if not devices:
        return  # claims for something else (a channel, a NIC), or of a class not in the run: precision first
    plugin = {r: n for r, n in t.accelerators.items() if n} | (
        {EFA: t.device_count(EFA)} if t.device_count(EFA) else {}
    )
    counted = fmt_list([f"{r}: {n}" for r, n in sorted(plugin.items())]) if plugin else "none"
    yield ctx.report(
        t.resource,
        t.spec_path + ("resourceClaims", devices[0].index),
        "the pod gets devices through DRA ResourceClaims, which eksmllint does not count",
        detail=f"Claims: {fmt_list([_describe(c, classes[c.name] or ()) for c in devices])}. The rules that count "
        f"GPUs, Neuron devices and EFA see only its device-plugin requests ({counted}) and do not judge what the "
        "claims provide.",
    )


def claim_device_classes(run: LintRun, t: PodTemplate, claim: PodClaim) -> tuple[str, ...] | None:
    """The DeviceClass names the claim requests, from its ResourceClaimTemplate or ResourceClaim in
    the run; None when that object is not in the run (or names no class)."""
    kind, name = ("ResourceClaimTemplate", claim.template) if claim.template else ("ResourceClaim", claim.claim)
    if not name:
        return None
    found = run.find(kind, name, t.resource.namespace, group=RESOURCE_GROUP)
    if len(found) != 1:
        return None
    path = (
        ("spec", "spec", "devices", "requests") if kind == "ResourceClaimTemplate" else ("spec", "devices", "requests")
    )
    requests = found[0].get(path)
    names: list[str] = []
    for req in requests if isinstance(requests, list) else ():
        if not isinstance(req, dict):
            continue
        # resource.k8s.io/v1: exactly / firstAvailable; v1beta1: deviceClassName on the request
        options = [req, req.get("exactly")] + (
            req["firstAvailable"] if isinstance(req.get("firstAvailable"), list) else []
        )
        names += [
            o["deviceClassName"] for o in options if isinstance(o, dict) and isinstance(o.get("deviceClassName"), str)
        ]
    return tuple(names) or None


def _is_device_class(name: str) -> bool:
    return bool(set(_SPLIT.split(name.lower())) & _DEVICE_WORDS)


def _describe(claim: PodClaim, classes: tuple[str, ...]) -> str:
    source = f"template {claim.template}" if claim.template else f"claim {claim.claim}"
    return f"{claim.name!r}: {source}, {', '.join(classes)}"
