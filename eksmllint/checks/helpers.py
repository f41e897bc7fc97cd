"""Small shared helpers for checks (kept here so no rule re-implements them)."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from eksmllint.quantity import DIGITS, parse_int
from eksmllint.resource import Resource
from eksmllint.workload import Container, PodTemplate

if TYPE_CHECKING:
    from eksmllint.launch.model import Invocation

SHM_PATH = "/dev/shm"
_NUM_WORKERS_FLAG = re.compile(r"--(?:dataloader_)?num[_-]workers")


def container_invocations(c: Container) -> tuple[Invocation, ...]:
    """Launches of container ``c`` (torchrun, deepspeed, mpirun ...), with ``$(VAR)`` expanded from
    its literal env the way the kubelet does. Analysed once per container (the 4xx, 6xx and 8xx
    rules all ask) and once per distinct command line (generated manifests repeat them); none
    for a command too large to read (``Container.command_unread``: EML004 says so)."""
    found = c.__dict__.get("_invocations")
    if found is None:
        command, args = c.argv_lists()
        if (command is None and args is None) or c.command_unread:
            found = ()
        else:
            env = tuple(
                (str(e.get("name")), None if "valueFrom" in e else str(e.get("value", "") or ""))
                for e in c.env_list
                if isinstance(e.get("name"), str)
            )
            found = _analyse(
                tuple(command) if command is not None else None, tuple(args) if args is not None else None, env
            )
        c.__dict__["_invocations"] = found
    return found


def script_invocations(script: str) -> tuple[Invocation, ...]:
    """Launches of a command line held outside a container (a RayJob's ``entrypoint``, which Ray runs
    with ``/bin/sh -c``), read by the same analyser as container commands; no env is known."""
    return _analyse(("sh", "-c", script), None, ())


@lru_cache(maxsize=4096)
def _analyse(
    command: tuple[str, ...] | None, args: tuple[str, ...] | None, env: tuple[tuple[str, str | None], ...]
) -> tuple[Invocation, ...]:
    from eksmllint.launch.command import (  # the shell analysis: on first use
        analyse_container,
        k8s_env,
    )

    return tuple(
        analyse_container(
            list(command) if command is not None else None, list(args) if args is not None else None, k8s_env(env)
        )
    )


_INDEX_RANGE = re.compile(rf"({DIGITS})(?:-({DIGITS}))?")


def index_ranges(text: str) -> list[tuple[int, int]] | None:
    """``0,1,4-7`` -> [(0, 0), (1, 1), (4, 7)] (device and core lists: CUDA_VISIBLE_DEVICES,
    NEURON_RT_VISIBLE_CORES); None when a part is not a number or an ascending ``lo-hi`` range."""
    ranges: list[tuple[int, int]] = []
    for part in text.split(","):
        m = _INDEX_RANGE.fullmatch(part.strip())
        if not m:
            return None
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) else lo
        if hi < lo:
            return None
        ranges.append((lo, hi))
    return ranges


def mount_at(container: Container, mount_path: str) -> tuple[int, dict] | None:
    for i, m in container.volume_mounts:
        if str(m.get("mountPath", "")).rstrip("/") == mount_path:
            return i, m
    return None


def dataloader_workers(container: Container) -> int:
    """DataLoader worker count from ``--num_workers`` / ``--dataloader_num_workers`` flags (the
    first one a program reads: not echo text, comments or here-documents)."""
    from eksmllint.analysis.commands import container_calls

    command, args = container.argv_lists()
    if not any("workers" in a for a in (command or []) + (args or [])):
        return 0  # no such flag anywhere: skip reading the command (most containers)
    for call in container_calls(container):
        if not call.reads_arguments or call.runs_elsewhere:
            continue
        words = call.words
        for j, w in enumerate(words):
            name, eq, value = w.text.partition("=")
            if _NUM_WORKERS_FLAG.fullmatch(name):
                if not eq:
                    value = words[j + 1].text if j + 1 < len(words) else ""
                count = parse_int(value)  # ASCII digits only: "²".isdigit() is True
                if count is not None and count >= 0:
                    return count
    return 0


def unique_volume_name(template: PodTemplate, base: str) -> str:
    names = {v.get("name") for _, v in template.volumes}
    if base not in names:
        return base
    n = 1
    while f"{base}-{n}" in names:
        n += 1
    return f"{base}-{n}"


def sentences(*parts: str | None) -> str:
    """A finding's ``detail`` from clauses: the empty ones left out, each ended with a full stop.
    Their case is kept as written (``torchrun``, ``kueue.x-k8s.io/...`` are names)."""
    out = []
    for part in parts:
        part = (part or "").strip().strip(";,").strip()
        if part:
            out.append(part + ("" if part.endswith((".", "?", "!")) else "."))
    return " ".join(out)


def fmt_list(items: Iterable[str], limit: int = 4) -> str:
    items = list(items)
    shown = ", ".join(items[:limit])
    return shown + (f" (+{len(items) - limit} more)" if len(items) > limit else "")


@dataclass(frozen=True)
class MountedFile:
    configmap: Resource
    key: str

    @property
    def text(self) -> str | None:
        data = self.configmap.get(("data",))
        value = data.get(self.key) if isinstance(data, dict) else None
        return value if isinstance(value, str) else None


def find_configmap(run, name: object, namespace: str | None) -> Resource | None:
    """The one ConfigMap of that name visible from ``namespace`` (None when absent or ambiguous)."""
    if not isinstance(name, str):
        return None
    found = run.find("ConfigMap", name, namespace)
    return found[0] if len(found) == 1 else None


def _files_of(run, cm_ref: dict, namespace: str | None) -> tuple[Resource, dict[str, str]] | None:
    cm = find_configmap(run, cm_ref.get("name"), namespace)
    if cm is None:
        return None
    data = cm.get(("data",))
    data = data if isinstance(data, dict) else {}
    items = cm_ref.get("items")
    if isinstance(items, list) and items:
        files = {
            str(it["path"]): str(it["key"])
            for it in items
            if isinstance(it, dict) and isinstance(it.get("path"), str) and isinstance(it.get("key"), str)
        }
    else:
        files = {str(k): str(k) for k in data}
    return cm, files


def mounted_files(run, c: Container) -> dict[str, MountedFile]:
    """Absolute path -> ConfigMap key, for every ConfigMap (or projected ConfigMap) file the
    container mounts and whose ConfigMap is in the run (``items`` and ``subPath`` honoured):
    how launch and precision rules find DeepSpeed/accelerate configs held in ConfigMaps."""
    t = c.template
    ns = t.resource.namespace
    out: dict[str, MountedFile] = {}
    for _, m in c.volume_mounts:
        mpath, vname = m.get("mountPath"), m.get("name")
        if not isinstance(mpath, str) or not isinstance(vname, str):
            continue
        vol = t.volume(vname)
        if vol is None:
            continue
        sub = m.get("subPath")
        for ref in configmap_refs(vol[1]):
            got = _files_of(run, ref, ns)
            if got is None:
                continue
            cm, files = got
            if isinstance(sub, str) and sub:
                if sub in files:
                    out[posixpath.normpath(mpath)] = MountedFile(cm, files[sub])
                continue
            for rel, key in files.items():
                out[posixpath.normpath(posixpath.join(mpath, rel))] = MountedFile(cm, key)
    return out


def configmap_refs(volume: dict) -> list[dict]:
    """The ConfigMap references of a volume: ``configMap`` or ``projected.sources[].configMap``."""
    refs = []
    if isinstance(volume.get("configMap"), dict):
        refs.append(volume["configMap"])
    proj = volume.get("projected")
    if isinstance(proj, dict) and isinstance(proj.get("sources"), list):
        refs += [
            s["configMap"] for s in proj["sources"] if isinstance(s, dict) and isinstance(s.get("configMap"), dict)
        ]
    return refs


@dataclass(frozen=True)
class PodClaim:
    """A DRA ResourceClaim a pod's containers use (``spec.resourceClaims`` entry named in some
    container's ``resources.claims``): devices that no ``nvidia.com/gpu``-style count shows."""

    name: str
    index: int  # position in spec.resourceClaims
    template: str | None  # resourceClaimTemplateName
    claim: str | None  # resourceClaimName


def pod_claims(t: PodTemplate) -> list[PodClaim]:
    """The DRA ResourceClaims whose devices the pod's containers get. Rules that count devices
    (GPUs, Neuron, EFA) cannot see these: they stay silent rather than judge the pod device-less
    (EML008 says so once per pod)."""
    entries = t.spec.get("resourceClaims")
    if not isinstance(entries, list):
        return []  # no claims to use (nearly every pod): its containers are not read
    used = {
        str(ref.get("name"))
        for c in t.containers + t.init_containers
        for ref in _claim_refs(c)
        if isinstance(ref, dict) and isinstance(ref.get("name"), str)
    }
    if not used:
        return []
    out = []
    for i, entry in enumerate(entries):
        if isinstance(entry, dict) and entry.get("name") in used:
            template, claim = entry.get("resourceClaimTemplateName"), entry.get("resourceClaimName")
            out.append(
                PodClaim(
                    str(entry["name"]),
                    i,
                    template if isinstance(template, str) else None,
                    claim if isinstance(claim, str) else None,
                )
            )
    return out


def _claim_refs(c: Container) -> list:
    resources = c.data.get("resources")
    refs = resources.get("claims") if isinstance(resources, dict) else None
    return refs if isinstance(refs, list) else []
