"""EML803 visible-devices-override: CUDA_VISIBLE_DEVICES, NVIDIA_VISIBLE_DEVICES or
NEURON_RT_VISIBLE_CORES hard-coded next to the device plugin's resources."""

from __future__ import annotations

from collections.abc import Iterator

from eksmllint.checks.helpers import index_ranges, sentences
from eksmllint.core.context import RuleContext
from eksmllint.core.finding import Finding, Fix, RemovePath
from eksmllint.workload import GPU, NEURON, NEURONCORE, NEURONDEVICE, PodTemplate

_VISIBLE_ENV = {
    "CUDA_VISIBLE_DEVICES": (GPU,),
    "NVIDIA_VISIBLE_DEVICES": (GPU,),
    "NEURON_RT_VISIBLE_CORES": (NEURON, NEURONCORE, NEURONDEVICE),
}


def _index_list(value: str) -> list[int] | None:
    """``0,1,2`` / ``0-3`` -> indices; None when not a plain index list (UUIDs, ``all``) or a
    range spans more than 4096 indices."""
    ranges = index_ranges(value)
    if ranges is None or any(hi - lo > 4096 for lo, hi in ranges):
        return None
    return [i for lo, hi in ranges for i in range(lo, hi + 1)]


def _visible_problem(name: str, value: str, devices: int) -> str:
    """What a hard-coded visibility variable does to the ``devices`` the plugin allocated."""
    low = value.strip().lower()
    if name == "NVIDIA_VISIBLE_DEVICES":
        if low == "all":
            return (
                f"exposes every GPU of the node to the container, not only the {devices} the device plugin "
                "allocated: it can use GPUs that belong to other pods"
            )
        if low in ("", "none", "void"):
            return f"hides the {devices} GPU(s) the device plugin allocated"
        return "replaces the device plugin's own list of allocated GPUs"
    if name == "NEURON_RT_VISIBLE_CORES":
        # core numbers depend on the devices the plugin picked; EML608 compares the counts
        return (
            "overrides the NeuronCores the Neuron device plugin assigned: the runtime opens cores by "
            "number, which may not be the ones this pod was given"
        )
    indices = _index_list(value) if value.strip() else []
    if indices is None:
        return f"overrides the {devices} GPU(s) the device plugin exposes"
    if not indices:
        return f"hides all {devices} allocated GPU(s)"
    if max(indices) >= devices:
        return (
            f"names GPU index {max(indices)} but the container is allocated {devices}, numbered from 0: "
            "CUDA silently drops every index from the first missing one on, so the list does not mean "
            "what it says"
        )
    if len(set(indices)) < devices:
        return f"hides {devices - len(set(indices))} of the {devices} allocated GPUs"
    return (
        f"repeats what the device plugin already exposes for the {devices} allocated GPUs and breaks "
        "as soon as the count changes"
    )


def check(ctx: RuleContext, t: PodTemplate) -> Iterator[Finding]:
    for c in t.containers + t.init_containers:
        for i, e in enumerate(c.env_list):
            name = e.get("name")
            if not isinstance(name, str) or name not in _VISIBLE_ENV or "valueFrom" in e:
                continue
            value = e.get("value")
            value = "" if value is None else str(value)
            resources = _VISIBLE_ENV[name]
            devices = sum(c.count(r) for r in resources)
            if devices <= 0:
                continue
            what = "GPU(s)" if resources == (GPU,) else "Neuron device-plugin resource(s)"
            problem = _visible_problem(name, value, devices)
            yield ctx.report(
                t.resource,
                c.path + ("env", i, "value") if "value" in e else c.path + ("env", i),
                f"container {c.name!r} hard-codes {name}={value!r} next to its {devices} allocated {what}",
                detail=sentences(f"it {problem}"),
                fix=Fix(f"Remove {name} from container {c.name!r}", (RemovePath(c.path + ("env", i)),)),
            )
