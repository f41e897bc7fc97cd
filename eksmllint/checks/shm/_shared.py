"""Helpers shared by the /dev/shm rules: KubeRay's own /dev/shm, the computed sizeLimit (EML301's
formula, also used by the fixes of EML302 and EML304), memory-backed emptyDirs, the pod's memory limit."""

from __future__ import annotations

from eksmllint.checks.helpers import SHM_PATH, mount_at
from eksmllint.lazy import kept_on
from eksmllint.platform import Platform
from eksmllint.quantity import parse_quantity, to_mib
from eksmllint.workload import Container, PodTemplate

#: Share of the container's memory limit given to a computed /dev/shm (see README "Fix formulas").
SHM_FRACTION = 0.25
#: The /dev/shm NVIDIA's NCCL troubleshooting guide sets for a container (``--shm-size=1g``): the least
#: a computed size gets, and what EML305 expects for NCCL between several GPUs of one container.
MIN_SHM_MIB = 1024
#: The /dev/shm a container gets when nothing is mounted there (Docker and containerd default: 64 MiB).
CONTAINER_DEFAULT_SHM_MIB = 64
#: KubeRay release from which ``rayStartParams.plasma-directory`` stops KubeRay adding /dev/shm
#: (ray-project/kuberay#4524, merged 2026-02-20, after the 1.5.1 release; earlier releases add it anyway).
KUBERAY_PLASMA_SKIPS_SHM = "1.6"


def is_ray_container(c: Container) -> bool:
    """The Ray container of a RayCluster/RayJob group: its first regular container (facts section 6);
    a RayJob's submitter pod is not a Ray node."""
    t = c.template
    if t.resource.kind not in ("RayCluster", "RayJob") or t.role == "submitter":
        return False
    return not c.init and t.containers.index(c) == 0


def sets_plasma_directory(c: Container) -> bool:
    """Does the Ray container's group set ``rayStartParams.plasma-directory``?"""
    t = c.template
    group = t.resource.get(t.path[:-1])
    params = group.get("rayStartParams") if isinstance(group, dict) else None
    return isinstance(params, dict) and "plasma-directory" in params


def is_kuberay_managed(c: Container, platform: Platform) -> bool:
    """KubeRay adds a memory-backed /dev/shm to the Ray container of each group, sized to its
    memory limit (facts section 6); from KubeRay 1.6 not when rayStartParams.plasma-directory is set."""
    if not is_ray_container(c):
        return False
    return not (sets_plasma_directory(c) and platform.at_least("kuberay", KUBERAY_PLASMA_SKIPS_SHM))


def shm_size_mib(c: Container) -> int | None:
    """The computed sizeLimit: 25% of the container's memory limit (request if no limit),
    rounded down to a whole GiB, at least 1 GiB. None when the container declares no memory."""
    mem = c.limit_quantity("memory") or c.request_quantity("memory")
    if mem is None or mem <= 0:
        return None
    mib = to_mib(mem) * SHM_FRACTION
    mib = max(MIN_SHM_MIB, int(mib // 1024) * 1024)
    return int(mib)


def computed_shm_mib(containers: list[Container]) -> int | None:
    """EML301's sizeLimit formula over the containers sharing one /dev/shm volume: the smallest
    (so the tmpfs fits every one of them); None when none of them declares memory."""
    sizes = [s for c in containers if (s := shm_size_mib(c)) is not None]
    return min(sizes) if sizes else None


def emptydir_of(volume: dict) -> dict | None:
    """The volume's ``emptyDir`` mapping (``emptyDir: {}`` and ``emptyDir:`` with no value both
    count), or None when the volume has another source."""
    if "emptyDir" not in volume:
        return None
    ed = volume.get("emptyDir")
    return ed if isinstance(ed, dict) else {}


def is_memory_emptydir(volume: dict) -> bool:
    ed = emptydir_of(volume)
    return ed is not None and ed.get("medium") == "Memory"


def size_limit_mib(volume: dict) -> float | None:
    """The emptyDir's sizeLimit in MiB; None when absent or not a literal quantity."""
    ed = emptydir_of(volume)
    if ed is None:
        return None
    q = parse_quantity(ed.get("sizeLimit"))
    return to_mib(q) if q is not None and q > 0 else None


def sized_memory_emptydirs(t: PodTemplate) -> list[tuple[int, dict, float]]:
    """Every mounted memory-backed emptyDir with a literal sizeLimit: (volume index, volume, MiB)."""
    mounted = {m.get("name") for c in t.containers + t.init_containers for _, m in c.volume_mounts}
    return [
        (i, v, s)
        for i, v in t.volumes
        if is_memory_emptydir(v) and v.get("name") in mounted and (s := size_limit_mib(v)) is not None
    ]


@kept_on
def shm_mounts(t: PodTemplate) -> list[tuple[int, dict, list[Container]]]:
    """Every volume mounted at /dev/shm: (volume index, volume, containers mounting it there).
    Mounts naming a volume the pod does not declare are left to the reference rules."""
    found: dict[int, tuple[dict, list[Container]]] = {}
    for c in t.containers + t.init_containers:
        hit = mount_at(c, SHM_PATH)
        if hit is None:
            continue
        name = hit[1].get("name")
        vol = t.volume(name) if isinstance(name, str) else None
        if vol is None:
            continue
        idx, data = vol
        found.setdefault(idx, (data, []))[1].append(c)
    return [(i, v, cs) for i, (v, cs) in sorted(found.items())]


@kept_on
def pod_memory_limit_mib(t: PodTemplate) -> float | None:
    """The memory limit of the pod's cgroup, which memory-backed emptyDirs are charged to:
    pod-level ``spec.resources.limits.memory`` if set, else the sum of the containers' limits
    (raised to the largest init container's, which runs alone). None when any regular container
    has no memory limit: the kubelet then sets no pod-level limit."""
    pod_res = t.spec.get("resources")
    pod_lim = pod_res.get("limits") if isinstance(pod_res, dict) else None
    if isinstance(pod_lim, dict):
        q = parse_quantity(pod_lim.get("memory"))
        if q is not None and q > 0:
            return to_mib(q)
    if not t.containers:
        return None
    total = 0.0
    for c in t.containers:
        q = c.limit_quantity("memory")
        if q is None or q <= 0:
            return None
        total += to_mib(q)
    init = [to_mib(q) for c in t.init_containers if (q := c.limit_quantity("memory")) is not None]
    return max([total] + init)
