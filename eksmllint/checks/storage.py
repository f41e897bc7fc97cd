"""Family 9xx: storage and platform versions (FSx for Lustre, EC2NodeClass AMI family and EBS).

FSx facts (facts file section 13): the CSI driver's StorageClass ``parameters`` are strings;
``deploymentType`` defaults to SCRATCH_1; ``perUnitStorageThroughput`` is a PERSISTENT-only
setting with a fixed set of values per deployment and storage type; capacity comes in fixed
increments, which the driver rounds a PVC's request up to (``RoundUpVolumeSize``) and which the
FSx API enforces exactly for a file system created directly (the ACK ``FileSystem`` kind).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass

from eksmllint.core.finding import Applicability, DocPath, Fix, SetValue
from eksmllint.quantity import DIGITS, parse_int, parse_quantity
from eksmllint.resource import Resource
from eksmllint.workload import Container, PodTemplate

FSX_PROVISIONER = "fsx.csi.aws.com"
ACK_FSX_GROUP = "fsx.services.k8s.aws"
NODECLASS_GROUP = "karpenter.k8s.aws"
SCRATCH = ("SCRATCH_1", "SCRATCH_2")
PERSISTENT = ("PERSISTENT_1", "PERSISTENT_2")
DEPLOYMENT_TYPES = SCRATCH + PERSISTENT
DEFAULT_DEPLOYMENT = "SCRATCH_1"
#: Allowed perUnitStorageThroughput (MB/s/TiB) per (deployment type, storage type).
THROUGHPUT = {
    ("PERSISTENT_1", "SSD"): (50, 100, 200),
    ("PERSISTENT_1", "HDD"): (12, 40),
    ("PERSISTENT_2", "SSD"): (125, 250, 500, 1000),
}
GIB = 2**30
#: Intelligent-Tiering: PERSISTENT_2 only, throughput set per file system (``throughputCapacity``,
#: MB/s) in steps of 4000 up to 2,000,000, no perUnitStorageThroughput (FSx Lustre guide,
#: "Managing provisioned throughput capacity"; API CreateFileSystemLustreConfiguration).
INTELLIGENT_TIERING = "INTELLIGENT_TIERING"
STORAGE_TYPES = ("SSD", "HDD", INTELLIGENT_TIERING)
IT_THROUGHPUT_STEP, IT_THROUGHPUT_MAX = 4000, 2_000_000


# --- FSx helpers ----------------------------------------------------------------------------------
def _str(value: object) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    return str(value).strip()


def _int(value: object) -> int | None:
    n = parse_int(value)
    return n if n is not None and n >= 0 else None


def is_fsx_storage_class(sc: Resource) -> bool:
    return sc.kind == "StorageClass" and sc.get(("provisioner",)) == FSX_PROVISIONER


def fsx_parameters(sc: Resource) -> dict:
    params = sc.get(("parameters",))
    return params if isinstance(params, dict) else {}


def provisions_new_filesystem(sc: Resource) -> bool:
    """A StorageClass naming ``fileSystemId`` shares an existing file system (its other
    parameters are ignored); otherwise each PVC creates a new file system."""
    return is_fsx_storage_class(sc) and "fileSystemId" not in fsx_parameters(sc)


def fsx_deployment_type(sc: Resource) -> str | None:
    """Deployment type of the file systems an FSx StorageClass creates (SCRATCH_1 when unset);
    None when the value is not literal."""
    value = fsx_parameters(sc).get("deploymentType")
    return DEFAULT_DEPLOYMENT if value is None else _str(value)


def capacity_increment_ok(gib: int, deployment: str, storage: str, throughput: int | None) -> bool:
    """Whether ``gib`` is a capacity FSx for Lustre accepts (facts section 13)."""
    if storage == "HDD":
        unit = 6000 if throughput == 12 else 1800
        return gib > 0 and gib % unit == 0
    if deployment == "SCRATCH_1":
        return gib in (1200, 2400) or (gib > 0 and gib % 3600 == 0)
    return gib == 1200 or (gib > 0 and gib % 2400 == 0)


def round_up_capacity(size_bytes: int, deployment: str, storage: str, throughput: int | None) -> int:
    """GiB the CSI driver provisions for a request of ``size_bytes`` (``RoundUpVolumeSize``)."""

    def up(unit: int) -> int:
        return math.ceil(size_bytes / (unit * GIB)) * unit

    if storage == "HDD":
        return up(6000 if throughput == 12 else 1800)
    if deployment == "SCRATCH_1":
        return up(1200) if size_bytes < 3600 * GIB else up(3600)
    return up(1200) if size_bytes < 2400 * GIB else up(2400)


def increment_text(deployment: str, storage: str, throughput: int | None) -> str:
    if storage == "HDD":
        return f"multiples of {6000 if throughput == 12 else 1800} GiB"
    if deployment == "SCRATCH_1":
        return "1200 GiB, 2400 GiB or multiples of 3600 GiB"
    return "1200 GiB or multiples of 2400 GiB"


@dataclass(frozen=True)
class LustreSettings:
    """The deployment-relevant settings of an FSx StorageClass or ACK FileSystem, with paths."""

    deployment: str | None
    deployment_path: DocPath
    storage: str | None
    storage_path: DocPath
    throughput: object
    throughput_path: DocPath
    capacity_throughput: object  # throughputCapacity (MB/s), Intelligent-Tiering only
    capacity_throughput_path: DocPath
    kms: object
    kms_path: DocPath
    drive_cache: object
    drive_cache_path: DocPath
    parent_path: DocPath


def _settings_of(r: Resource) -> LustreSettings | None:
    if is_fsx_storage_class(r):
        if not provisions_new_filesystem(r):
            return None
        p = fsx_parameters(r)
        base = ("parameters",)
        storage = p.get("storageType")
        return LustreSettings(
            fsx_deployment_type(r),
            base + ("deploymentType",),
            "SSD" if storage is None else _str(storage),
            base + ("storageType",),
            p.get("perUnitStorageThroughput"),
            base + ("perUnitStorageThroughput",),
            p.get("throughputCapacity"),
            base + ("throughputCapacity",),
            p.get("kmsKeyId"),
            base + ("kmsKeyId",),
            p.get("driveCacheType"),
            base + ("driveCacheType",),
            base,
        )
    if r.kind == "FileSystem" and r.group == ACK_FSX_GROUP:
        fs_type = r.get(("spec", "fileSystemType"))
        if fs_type is not None and str(fs_type).upper() != "LUSTRE":
            return None
        lc = r.get(("spec", "lustreConfiguration"))
        lc = lc if isinstance(lc, dict) else {}
        base = ("spec", "lustreConfiguration")
        dt, storage = lc.get("deploymentType"), r.get(("spec", "storageType"))
        return LustreSettings(
            DEFAULT_DEPLOYMENT if dt is None else _str(dt),
            base + ("deploymentType",),
            "SSD" if storage is None else _str(storage),
            ("spec", "storageType"),
            lc.get("perUnitStorageThroughput"),
            base + ("perUnitStorageThroughput",),
            lc.get("throughputCapacity"),
            base + ("throughputCapacity",),
            r.get(("spec", "kmsKeyID")),
            ("spec", "kmsKeyID"),
            lc.get("driveCacheType"),
            base + ("driveCacheType",),
            base if isinstance(r.get(base), dict) else ("spec",),
        )
    return None


def _lustre_problems(r: Resource, s: LustreSettings, api: bool) -> Iterator[tuple[DocPath, str]]:
    """(path, message) of every invalid deployment-dependent setting. ``api``: the resource calls
    the FSx API directly (ACK), where a PERSISTENT file system must state its throughput."""
    dt = s.deployment
    if dt not in DEPLOYMENT_TYPES:
        if dt is not None:
            yield s.deployment_path, f"deploymentType {dt!r} is not one of {', '.join(DEPLOYMENT_TYPES)}"
        return
    storage = s.storage
    if storage not in STORAGE_TYPES:
        if storage is not None:
            yield s.storage_path, f"storageType {storage!r} is not one of {', '.join(STORAGE_TYPES)}"
        return
    if storage == INTELLIGENT_TIERING:
        yield from _intelligent_tiering_problems(s, api)
        return
    if storage == "HDD" and dt != "PERSISTENT_1":
        yield s.storage_path, f"storageType HDD is only available with PERSISTENT_1, not {dt}"
        return
    if s.throughput is not None:
        value = _int(s.throughput)
        if dt in SCRATCH:
            yield (
                s.throughput_path,
                (
                    f"perUnitStorageThroughput {_str(s.throughput)!r} is only valid for "
                    f"PERSISTENT_1/PERSISTENT_2; a {dt} file system does not accept it "
                    "and creating it fails"
                ),
            )
        elif value is None:
            yield (
                s.throughput_path,
                f"perUnitStorageThroughput {_str(s.throughput)!r} is not a whole number of MB/s/TiB",
            )
        elif value not in THROUGHPUT[(dt, storage)]:
            allowed = ", ".join(str(v) for v in THROUGHPUT[(dt, storage)])
            yield (
                s.throughput_path,
                (
                    f"perUnitStorageThroughput {value} is not allowed for {dt} {storage}; "
                    f"allowed values are {allowed} MB/s/TiB"
                ),
            )
    elif api and dt in PERSISTENT:
        allowed = ", ".join(str(v) for v in THROUGHPUT[(dt, storage)])
        yield s.parent_path, f"a {dt} file system requires perUnitStorageThroughput ({allowed} MB/s/TiB for {storage})"
    if s.kms is not None and dt in SCRATCH:
        yield s.kms_path, f"a KMS key can only be set on PERSISTENT file systems, not {dt}"
    if storage == "HDD":
        if s.drive_cache is None:
            yield s.parent_path, "storageType HDD requires driveCacheType (NONE or READ)"
        elif _str(s.drive_cache) not in ("NONE", "READ"):
            yield s.drive_cache_path, f"driveCacheType {_str(s.drive_cache)!r} is not NONE or READ"


def _intelligent_tiering_problems(s: LustreSettings, api: bool) -> Iterator[tuple[DocPath, str]]:
    if s.deployment != "PERSISTENT_2":
        yield s.storage_path, f"storageType INTELLIGENT_TIERING is only available with PERSISTENT_2, not {s.deployment}"
        return
    if s.capacity_throughput is None:
        if api:
            yield (
                s.parent_path,
                (
                    f"an INTELLIGENT_TIERING file system requires throughputCapacity "
                    f"(multiples of {IT_THROUGHPUT_STEP} MB/s)"
                ),
            )
        return
    value = _int(s.capacity_throughput)
    if value is None or value == 0 or value % IT_THROUGHPUT_STEP or value > IT_THROUGHPUT_MAX:
        yield (
            s.capacity_throughput_path,
            (
                f"throughputCapacity {_str(s.capacity_throughput)!r} is not valid for INTELLIGENT_TIERING: use "
                f"{IT_THROUGHPUT_STEP} MB/s or a multiple of it, up to {IT_THROUGHPUT_MAX}"
            ),
        )


_ENUMS = {
    "dataCompressionType": ("NONE", "LZ4"),
    "metadataConfigurationMode": ("AUTOMATIC", "USER_PROVISIONED"),
}


def _storage_class_extras(sc: Resource, dt: str | None) -> Iterator[tuple[DocPath, str]]:
    p = fsx_parameters(sc)
    base = ("parameters",)
    for key, allowed in _ENUMS.items():
        if key in p and _str(p[key]) not in allowed:
            yield base + (key,), f"{key} {_str(p[key])!r} is not one of {', '.join(allowed)}"
    if _str(p.get("metadataConfigurationMode")) == "USER_PROVISIONED" and "metadataIops" not in p:
        yield base + ("metadataConfigurationMode",), "metadataConfigurationMode USER_PROVISIONED requires metadataIops"
    if _str(p.get("efaEnabled")) == "true" and dt in DEPLOYMENT_TYPES and dt != "PERSISTENT_2":
        yield base + ("efaEnabled",), f"efaEnabled is only supported on PERSISTENT_2 file systems, not {dt}"
    if "automaticBackupRetentionDays" in p:
        days = _int(p["automaticBackupRetentionDays"])
        if days is None or days > 35:
            yield (
                base + ("automaticBackupRetentionDays",),
                (f"automaticBackupRetentionDays {_str(p['automaticBackupRetentionDays'])!r} must be 0-35"),
            )


def _pvc_capacity(ctx, pvc: Resource) -> Iterator[tuple[DocPath, str]]:
    sc_name = pvc.get(("spec", "storageClassName"))
    if not isinstance(sc_name, str) or not sc_name or pvc.get(("spec", "volumeName")):
        return
    for sc in ctx.run.find("StorageClass", sc_name)[:1]:
        settings = _settings_of(sc) if is_fsx_storage_class(sc) else None
        if settings is None or settings.deployment not in DEPLOYMENT_TYPES or settings.storage not in ("SSD", "HDD"):
            return
        size = parse_quantity(pvc.get(("spec", "resources", "requests", "storage")))
        if size is None or size <= 0:
            return
        dt, storage, tp = settings.deployment, settings.storage, _int(settings.throughput)
        size_bytes = math.ceil(size)
        rounded = round_up_capacity(size_bytes, dt, storage, tp)
        if size_bytes == rounded * GIB:
            return
        yield (
            ("spec", "resources", "requests", "storage"),
            (
                f"requests {pvc.get(('spec', 'resources', 'requests', 'storage'))} from FSx StorageClass {sc_name} "
                f"({dt} {storage}), whose capacity comes in {increment_text(dt, storage, tp)}: the driver "
                f"creates (and bills) a {rounded} GiB file system"
            ),
        )


def fsx_parameters_check(ctx, r: Resource):
    """EML901: FSx for Lustre settings invalid for the deployment type, or capacity off-increment."""
    if r.kind == "PersistentVolumeClaim":
        for path, message in _pvc_capacity(ctx, r):
            yield ctx.report(r, path, message)
        return
    settings = _settings_of(r)
    if settings is None:
        return
    api = r.kind == "FileSystem"
    problems = list(_lustre_problems(r, settings, api))
    if r.kind == "StorageClass":
        problems += list(_storage_class_extras(r, settings.deployment))
    elif settings.deployment in DEPLOYMENT_TYPES and settings.storage in ("SSD", "HDD"):
        cap = _int(r.get(("spec", "storageCapacity")))
        tp = _int(settings.throughput)
        if cap is not None and not capacity_increment_ok(cap, settings.deployment, settings.storage, tp):
            problems.append(
                (
                    ("spec", "storageCapacity"),
                    (
                        f"storageCapacity {cap} GiB is not valid for {settings.deployment} {settings.storage}: "
                        f"use {increment_text(settings.deployment, settings.storage, tp)}"
                    ),
                )
            )
    for path, message in problems:
        yield ctx.report(r, path, message)


# --- EML902: checkpoints on SCRATCH -----------------------------------------------------------
_CKPT_FLAG = re.compile(
    r"--(?:output[_-]dir|checkpoint[_-]?(?:dir|path)|ckpt[_-]?(?:dir|path)|save[_-]dir|save)"
    r"(?:=|\s+)[\"']?(/[^\s\"';]*)"
)
_CKPT_FLAG_ONLY = re.compile(
    r"^--(?:output[_-]dir|checkpoint[_-]?(?:dir|path)|ckpt[_-]?(?:dir|path)|save[_-]dir|save)$"
)
_CKPT_ENV = re.compile(r"^(?:[A-Z0-9_]*_)?(?:CHECKPOINT|CKPT)S?_?(?:DIR|PATH|ROOT)$")
_CKPT_MOUNT = re.compile(r"checkpoint|ckpt", re.IGNORECASE)


def checkpoint_paths(c: Container) -> Iterator[tuple[DocPath, str]]:
    """(path of the statement, absolute directory) of every checkpoint directory ``c`` names."""
    for key in ("command", "args"):
        items = c.data.get(key)
        if not isinstance(items, list):
            continue
        for i, item in enumerate(items):
            text = str(item)
            for m in _CKPT_FLAG.finditer(text):
                yield c.path + (key, i), m.group(1)
            if _CKPT_FLAG_ONLY.match(text.strip()) and i + 1 < len(items) and str(items[i + 1]).startswith("/"):
                yield c.path + (key, i), str(items[i + 1]).split()[0]
    for i, e in enumerate(c.env_list):
        name, value = e.get("name"), e.get("value")
        if isinstance(name, str) and _CKPT_ENV.match(name) and isinstance(value, str) and value.startswith("/"):
            yield c.path + ("env", i, "value"), value


def _mount_for(c: Container, directory: str) -> tuple[int, dict] | None:
    """The volume mount holding ``directory`` (longest mountPath prefix)."""
    best = None
    for i, m in c.volume_mounts:
        mp = str(m.get("mountPath", "")).rstrip("/") or "/"
        if directory == mp or directory.startswith(mp.rstrip("/") + "/"):
            if best is None or len(mp) > len(str(best[1].get("mountPath", "")).rstrip("/")):
                best = (i, m)
    return best


def _scratch_class(ctx, t: PodTemplate, volume: dict) -> tuple[str, str, str] | None:
    """(PVC name, StorageClass name, deployment type) when ``volume`` is a SCRATCH FSx volume."""
    claim = volume.get("persistentVolumeClaim")
    name = claim.get("claimName") if isinstance(claim, dict) else None
    if not isinstance(name, str):
        return None
    for pvc in ctx.run.find("PersistentVolumeClaim", name, t.resource.namespace)[:1]:
        sc_name = pvc.get(("spec", "storageClassName"))
        if not isinstance(sc_name, str):
            return None
        for sc in ctx.run.find("StorageClass", sc_name)[:1]:
            if provisions_new_filesystem(sc) and (dt := fsx_deployment_type(sc)) in SCRATCH:
                return name, sc_name, dt
    return None


def scratch_for_checkpoints(ctx, t: PodTemplate):
    """EML902: a checkpoint directory is on a PVC of an FSx SCRATCH StorageClass."""
    for c in t.containers:
        found: dict[str, tuple[DocPath, str]] = {}  # volume name -> (where stated, directory)
        for path, directory in checkpoint_paths(c):
            mount = _mount_for(c, directory)
            if mount and isinstance(mount[1].get("name"), str):
                found.setdefault(mount[1]["name"], (path, directory))
        if t.is_training:
            for i, m in c.volume_mounts:
                mp, name = str(m.get("mountPath", "")), m.get("name")
                if _CKPT_MOUNT.search(mp) and isinstance(name, str) and not m.get("readOnly"):
                    found.setdefault(name, (c.path + ("volumeMounts", i, "mountPath"), mp))
        for vol_name, (path, directory) in found.items():
            vol = t.volume(vol_name)
            scratch = _scratch_class(ctx, t, vol[1]) if vol else None
            if scratch is None:
                continue
            pvc, sc, dt = scratch
            yield ctx.report(
                t.resource,
                path,
                f"checkpoints in {directory} go to PVC {pvc} of StorageClass {sc}, an FSx for Lustre {dt} "
                "file system whose data is not replicated and is lost when a file server fails",
            )


# --- EML903 / EML904: EC2NodeClass ---------------------------------------------------------------
AL2_LAST_VERSION = (1, 32)


def _version(text: str) -> tuple[int, int] | None:
    m = re.fullmatch(rf"\s*v?({DIGITS})\.({DIGITS})(?:\.\d+)?\s*", str(text))
    return (int(m.group(1)), int(m.group(2))) if m else None


def _is_nodeclass(r: Resource) -> bool:
    return r.kind == "EC2NodeClass" and r.group == NODECLASS_GROUP


AL2023_ALIAS = "al2023@latest"


def ami_family_unsupported(ctx, r: Resource):
    """EML903: AL2 (amiFamily or ``al2@`` alias) with a target Kubernetes version of 1.33 or later."""
    version = _version(ctx.run.settings.kubernetes_version)
    if not _is_nodeclass(r) or version is None or version <= AL2_LAST_VERSION:
        return
    ops: list[SetValue] = []
    first: DocPath | None = None
    family = r.get(("spec", "amiFamily"))
    if isinstance(family, str) and family.strip().upper() == "AL2":
        first = ("spec", "amiFamily")
        ops.append(SetValue(first, "AL2023"))
    terms = r.get(("spec", "amiSelectorTerms"))
    aliases = []
    if isinstance(terms, list):
        for i, term in enumerate(terms):
            alias = term.get("alias") if isinstance(term, dict) else None
            if isinstance(alias, str) and alias.strip().lower().startswith("al2@"):
                path = ("spec", "amiSelectorTerms", i, "alias")
                aliases.append(alias.strip())
                first = first or path
                # al2023@latest, not the AL2 pin: a release tag from before the target Kubernetes
                # version reached EKS has no AL2023 AMI for it, and Karpenter would resolve nothing
                ops.append(SetValue(path, AL2023_ALIAS))
    if first is None:
        return
    what = " and ".join(
        filter(
            None,
            [
                "amiFamily AL2" if first == ("spec", "amiFamily") else "",
                f"alias {', '.join(aliases)}" if aliases else "",
            ],
        )
    )
    target = ".".join(str(v) for v in version)
    yield ctx.report(
        r,
        first,
        f"{what} selects Amazon Linux 2, but EKS publishes no AL2 AMIs for Kubernetes {target} "
        "(1.32 was the last; AL2 support ended 2025-11-26): nodes cannot be launched",
        fix=Fix(
            "Switch to AL2023 (alias al2023@latest: pin a release that exists for your Kubernetes "
            "version afterwards; review userData: AL2023 bootstraps with nodeadm, not bootstrap.sh)",
            tuple(ops),
            Applicability.UNSAFE,
        ),
    )


def ebs_unencrypted(ctx, r: Resource):
    """EML904: an EBS block device mapping of an EC2NodeClass without ``encrypted: true``."""
    if not _is_nodeclass(r):
        return
    mappings = r.get(("spec", "blockDeviceMappings"))
    if not isinstance(mappings, list):
        return
    for i, bdm in enumerate(mappings):
        ebs = bdm.get("ebs") if isinstance(bdm, dict) else None
        if not isinstance(ebs, dict):
            continue
        enc = ebs.get("encrypted")
        if enc is True or (isinstance(enc, str) and enc.strip().lower() == "true"):
            continue
        device = bdm.get("deviceName") if isinstance(bdm.get("deviceName"), str) else f"#{i}"
        ebs_path = ("spec", "blockDeviceMappings", i, "ebs")
        state = "has encrypted: false" if "encrypted" in ebs else "does not set encrypted: true"
        yield ctx.report(
            r,
            ebs_path + (("encrypted",) if "encrypted" in ebs else ()),
            f"EBS volume {device} {state}: the node's disk (container images, logs, emptyDir "
            "and local checkpoint data) is stored unencrypted at rest",
            fix=Fix(f"Set encrypted: true on block device {device}", (SetValue(ebs_path + ("encrypted",), True),)),
        )
