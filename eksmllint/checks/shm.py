"""Family 3xx: shared memory (/dev/shm)."""

from __future__ import annotations

from eksmllint.checks.helpers import SHM_PATH, dataloader_workers, fmt_list, mount_at, unique_volume_name
from eksmllint.core.finding import AppendItem, Fix, RemovePath, SetValue
from eksmllint.quantity import format_mib, parse_quantity, to_mib
from eksmllint.workload import Container, PodTemplate

#: Share of the container's memory limit given to a computed /dev/shm (see README "Fix formulas").
SHM_FRACTION = 0.25
MIN_SHM_MIB = 1024


def is_kuberay_managed(c: Container) -> bool:
    """KubeRay adds a memory-backed /dev/shm to the Ray container (the first one) of each group,
    sized to its memory limit, unless rayStartParams.plasma-directory is set (facts section 6)."""
    t = c.template
    if t.resource.kind not in ("RayCluster", "RayJob") or t.role == "submitter":
        return False
    if c.init or t.containers.index(c) != 0:
        return False
    group = t.resource.get(t.path[:-1])
    params = group.get("rayStartParams") if isinstance(group, dict) else None
    return not (isinstance(params, dict) and "plasma-directory" in params)


def shm_size_mib(c: Container) -> int | None:
    """The computed sizeLimit: 25% of the container's memory limit (request if no limit),
    rounded down to a whole GiB, at least 1 GiB. None when the container declares no memory."""
    mem = c.limit_quantity("memory") or c.request_quantity("memory")
    if mem is None or mem <= 0:
        return None
    mib = to_mib(mem) * SHM_FRACTION
    mib = max(MIN_SHM_MIB, int(mib // 1024) * 1024)
    return int(mib)


def shm_fix(t: PodTemplate, c: Container) -> Fix | None:
    size = shm_size_mib(c)
    if size is None:
        return None
    name = unique_volume_name(t, "dshm")
    volume = {"name": name, "emptyDir": {"medium": "Memory", "sizeLimit": format_mib(size)}}
    return Fix(
        f"Add a {format_mib(size)} memory-backed /dev/shm to container {c.name!r}",
        (
            AppendItem(t.spec_path + ("volumes",), volume),
            AppendItem(c.path + ("volumeMounts",), {"name": name, "mountPath": SHM_PATH}),
        ),
    )


def shm_missing(ctx, t: PodTemplate):  # judged classes: rule YAML workload-classes
    for c in t.containers:
        devices = sum(c.count(r) for r in t.accelerators)
        workers = dataloader_workers(c)
        if devices <= 1 and workers == 0:
            continue
        if mount_at(c, SHM_PATH) is not None or is_kuberay_managed(c):
            continue
        why = f"{devices} accelerators" if devices > 1 else f"{workers} DataLoader workers"
        yield ctx.report(
            t.resource,
            c.path + ("name",),
            f"container {c.name!r} ({why}) has no memory-backed /dev/shm; the 64 MiB default "
            "crashes NCCL and DataLoader workers with bus errors",
            fix=shm_fix(t, c),
        )


# --- shared helpers for EML302-EML304 --------------------------------------------------------

#: Share of the pod's memory limit that EML303's fix leaves to memory-backed emptyDirs together.
DEFAULT_BUDGET_FRACTION = 0.5


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


def _has_size_limit(volume: dict) -> bool:
    ed = emptydir_of(volume) or {}
    value = ed.get("sizeLimit")
    return value is not None and value != ""


def shm_mounts(t: PodTemplate) -> list[tuple[int, dict, list[Container]]]:
    """Every volume mounted at /dev/shm: (volume index, volume, containers mounting it there).
    Mounts naming a volume the pod does not declare are left to the reference rules."""
    found: dict[int, tuple[dict, list[Container]]] = {}
    for c in t.containers + t.init_containers:
        hit = mount_at(c, SHM_PATH)
        if hit is None:
            continue
        vol = t.volume(hit[1].get("name"))
        if vol is None:
            continue
        idx, data = vol
        found.setdefault(idx, (data, []))[1].append(c)
    return [(i, v, cs) for i, (v, cs) in sorted(found.items())]


def computed_shm_mib(containers: list[Container]) -> int | None:
    """EML301's sizeLimit formula over the containers sharing one /dev/shm volume: the smallest
    (so the tmpfs fits every one of them); None when none of them declares memory."""
    sizes = [s for c in containers if (s := shm_size_mib(c)) is not None]
    return min(sizes) if sizes else None


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


def _floor_size(mib: float) -> int:
    """Round a computed size down to whole GiB (whole MiB below 1 GiB), as fixes write them."""
    if mib >= 1024:
        return int(mib // 1024) * 1024
    return int(mib)


# --- EML302 shm-unbounded --------------------------------------------------------------------


def shm_unbounded(ctx, t: PodTemplate):
    if not t.is_training:
        return
    pod_limit = pod_memory_limit_mib(t)
    if pod_limit:
        outcome = f"can fill the pod's whole {format_mib(pod_limit)} memory limit and get it OOM-killed"
    else:
        outcome = "can grow to the node's allocatable memory (the pod has no memory limit)"
    for idx, vol, containers in shm_mounts(t):
        if not is_memory_emptydir(vol) or _has_size_limit(vol):
            continue
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
            f"the /dev/shm emptyDir {vol.get('name')!r} has no sizeLimit, so the tmpfs {outcome}",
            fix=fix,
        )
    for c in t.containers:
        if not is_kuberay_managed(c) or mount_at(c, SHM_PATH) is not None:
            continue
        if c.limit_quantity("memory") is not None or c.request_quantity("memory") is not None:
            continue
        res = c.path + ("resources",) if "resources" in c.data else c.path + ("name",)
        yield ctx.report(
            t.resource,
            res,
            f"Ray container {c.name!r} sets no memory limit or request, so the /dev/shm that "
            "KubeRay adds for the object store gets no sizeLimit and can grow to the node's memory",
        )


# --- EML303 shm-exceeds-memory ---------------------------------------------------------------


def shm_exceeds_memory(ctx, t: PodTemplate):
    limit = pod_memory_limit_mib(t)
    if limit is None:
        return
    mounted = {m.get("name") for c in t.containers + t.init_containers for _, m in c.volume_mounts}
    sized = [
        (i, v, s)
        for i, v in t.volumes
        if is_memory_emptydir(v) and v.get("name") in mounted and (s := size_limit_mib(v)) is not None
    ]
    total = sum(s for _, _, s in sized)
    if not sized or total <= limit:
        return
    fraction = ctx.options.get("budget-fraction", DEFAULT_BUDGET_FRACTION)
    try:
        fraction = float(fraction)
    except (TypeError, ValueError):
        fraction = DEFAULT_BUDGET_FRACTION
    if not 0 < fraction < 1:
        fraction = DEFAULT_BUDGET_FRACTION
    budget = limit * fraction
    ops = []
    for i, _, s in sized:
        new = _floor_size(s * budget / total)
        if new < 1:
            ops = []
            break
        ops.append(SetValue(t.spec_path + ("volumes", i, "emptyDir", "sizeLimit"), format_mib(new)))
    fix = (
        Fix(
            f"Scale the memory-backed emptyDirs down to {int(fraction * 100)}% of the pod's "
            f"{format_mib(limit)} memory limit",
            tuple(ops),
        )
        if ops
        else None
    )
    i0, _, _ = max(sized, key=lambda x: x[2])
    parts = ", ".join(f"{v.get('name')!r} {format_mib(s)}" for _, v, s in sized)
    related = [
        t.resource.location(t.spec_path + ("volumes", i, "emptyDir", "sizeLimit")) for i, _, _ in sized if i != i0
    ]
    yield ctx.report(
        t.resource,
        t.spec_path + ("volumes", i0, "emptyDir", "sizeLimit"),
        f"memory-backed emptyDirs ({parts}) total {format_mib(total)}, more than the pod's "
        f"{format_mib(limit)} memory limit they are charged to; filling them OOM-kills the pod",
        fix=fix,
        related=related,
    )


# --- EML304 shm-not-memory -------------------------------------------------------------------


def _source_keys(volume: dict) -> list[str]:
    return [k for k in volume if k != "name"]


def shm_not_memory(ctx, t: PodTemplate):
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
            what = (
                f"mounts the node's {host} (hostPath volume {name!r}) at /dev/shm, sharing it with every "
                "pod on the node outside the pod's memory accounting"
            )
        elif key == "emptyDir":
            what = (
                f"mounts the disk-backed emptyDir {name!r} at /dev/shm (no medium: Memory): shared memory "
                "then goes through the node's disk and counts against ephemeral storage"
            )
        else:
            what = f"mounts the {key} volume {name!r} at /dev/shm instead of a memory-backed emptyDir"
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
        yield ctx.report(t.resource, vpath + (key,), f"container {who} {what}", fix=fix)
