"""EML901 fsx-parameters: FSx for Lustre StorageClass or ACK FileSystem settings invalid for the
deployment type, or a capacity (PVC request, storageCapacity) off the FSx increments.

FSx facts (facts file section 13): ``perUnitStorageThroughput`` is a PERSISTENT-only setting with a
fixed set of values per deployment and storage type; capacity comes in fixed increments, which the
driver rounds a PVC's request up to (``RoundUpVolumeSize``) and which the FSx API enforces exactly
for a file system created directly (the ACK ``FileSystem`` kind).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

from eksmllint.checks.storage._shared import (
    DEFAULT_DEPLOYMENT,
    DEPLOYMENT_TYPES,
    PERSISTENT,
    SCRATCH,
    fsx_deployment_type,
    fsx_parameters,
    is_fsx_storage_class,
    provisions_new_filesystem,
    text,
)
from eksmllint.core.context import RuleContext
from eksmllint.core.finding import DocPath, Finding
from eksmllint.quantity import parse_int, parse_quantity
from eksmllint.resource import Resource

ACK_FSX_GROUP = "fsx.services.k8s.aws"
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


def _int(value: object) -> int | None:
    n = parse_int(value)
    return n if n is not None and n >= 0 else None


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
        base: DocPath = ("parameters",)
        storage = p.get("storageType")
        return LustreSettings(
            fsx_deployment_type(r),
            base + ("deploymentType",),
            "SSD" if storage is None else text(storage),
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
            DEFAULT_DEPLOYMENT if dt is None else text(dt),
            base + ("deploymentType",),
            "SSD" if storage is None else text(storage),
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
                f"perUnitStorageThroughput {text(s.throughput)!r} is not accepted by a {dt} file system (creating it fails)",
            )
        elif value is None:
            yield (
                s.throughput_path,
                f"perUnitStorageThroughput {text(s.throughput)!r} is not a whole number of MB/s/TiB",
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
        elif text(s.drive_cache) not in ("NONE", "READ"):
            yield s.drive_cache_path, f"driveCacheType {text(s.drive_cache)!r} is not NONE or READ"


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
                f"throughputCapacity {text(s.capacity_throughput)!r} is not valid for INTELLIGENT_TIERING: use "
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
        if key in p and text(p[key]) not in allowed:
            yield base + (key,), f"{key} {text(p[key])!r} is not one of {', '.join(allowed)}"
    if text(p.get("metadataConfigurationMode")) == "USER_PROVISIONED" and "metadataIops" not in p:
        yield base + ("metadataConfigurationMode",), "metadataConfigurationMode USER_PROVISIONED requires metadataIops"
    if text(p.get("efaEnabled")) == "true" and dt in DEPLOYMENT_TYPES and dt != "PERSISTENT_2":
        yield base + ("efaEnabled",), f"efaEnabled is only supported on PERSISTENT_2 file systems, not {dt}"
    if "automaticBackupRetentionDays" in p:
        days = _int(p["automaticBackupRetentionDays"])
        if days is None or days > 35:
            yield (
                base + ("automaticBackupRetentionDays",),
                (f"automaticBackupRetentionDays {text(p['automaticBackupRetentionDays'])!r} must be 0-35"),
            )


def _pvc_capacity(ctx: RuleContext, pvc: Resource) -> Iterator[tuple[DocPath, str, str]]:
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
            f"requests {pvc.get(('spec', 'resources', 'requests', 'storage'))} from FSx StorageClass {sc_name}, "
            f"which creates (and bills) {rounded} GiB",
            f"A {dt} {storage} file system's capacity comes in {increment_text(dt, storage, tp)}.",
        )


def check(ctx: RuleContext, r: Resource) -> Iterator[Finding]:
    """EML901: FSx for Lustre settings invalid for the deployment type, or capacity off-increment."""
    if r.kind == "PersistentVolumeClaim":
        for path, message, detail in _pvc_capacity(ctx, r):
            yield ctx.report(r, path, message, detail=detail)
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
