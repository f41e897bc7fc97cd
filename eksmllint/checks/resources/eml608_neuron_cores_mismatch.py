"""EML608 neuron-cores-mismatch: NEURON_RT_NUM_CORES / NEURON_RT_VISIBLE_CORES ask for more NeuronCores
than the container is allocated."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from eksmllint.checks.helpers import index_ranges, sentences
from eksmllint.checks.resources._shared import (
    LNC_ENV,
    container_lnc,
    landing_types,
    neuron_cores_of,
    neuron_summary,
)
from eksmllint.core.finding import Finding, Fix, SetValue
from eksmllint.launch.model import parse_int
from eksmllint.workload import (
    NEURON,
    NEURONCORE,
    NEURONDEVICE,
    Container,
    PodTemplate,
)

if TYPE_CHECKING:
    from eksmllint.core.context import RuleContext


def _visible_cores_count(text: str) -> int | None:
    """Cores named by ``NEURON_RT_VISIBLE_CORES`` ("0-31", "0,1,4-7", "3"); None if not literal."""
    ranges = index_ranges(text)
    if ranges is None:
        return None
    return sum(hi - lo + 1 for lo, hi in ranges) or None


def check(ctx: RuleContext, t: PodTemplate) -> Iterator[Finding]:
    for c in t.containers:
        if not (c.count(NEURON) or c.count(NEURONDEVICE) or c.count(NEURONCORE)):
            continue  # no device-plugin allocation: the cores come from elsewhere
        for name in ("NEURON_RT_NUM_CORES", "NEURON_RT_VISIBLE_CORES"):
            value = c.env.get(name)
            idx = c.env_index(name)
            if value is None or idx is None:
                continue
            wanted = parse_int(value) if name == "NEURON_RT_NUM_CORES" else _visible_cores_count(value)
            if wanted is None:
                continue
            have = neuron_cores_of(ctx, t, c)
            if have is None or wanted <= have:
                continue
            path = c.path + ("env", idx, "value")
            fix = (
                Fix(f"Set {name} to {have}", (SetValue(path, str(have)),)) if name == "NEURON_RT_NUM_CORES" else None
            )  # visible cores: EML803 removes it
            yield ctx.report(
                t.resource,
                path,
                f"{name}={value} asks for {wanted} NeuronCores but container {c.name!r} is allocated {have}",
                detail=sentences(
                    f"allocated: {neuron_summary(c)}{_lnc_note(ctx, t, c)}", "the Neuron runtime fails to start"
                ),
                fix=fix,
            )


def _lnc_note(ctx, t: PodTemplate, c: Container) -> str:
    """ ", N logical cores per device with NEURON_LOGICAL_NC_CONFIG=..." on LNC types, else ""."""
    lnc_types = [it for it in landing_types(ctx, t) or () if it.default_lnc]
    if not lnc_types:
        return ""
    lnc = container_lnc(c) or lnc_types[0].default_lnc
    how = f"{LNC_ENV}={lnc}" if container_lnc(c) else f"{LNC_ENV} unset, default {lnc}"
    return f", {lnc_types[0].logical_cores_per_device(lnc)} logical cores per device with {how}"
