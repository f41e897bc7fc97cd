"""EML902 scratch-for-checkpoints: a container's checkpoint directory is on a PVC of an FSx for
Lustre SCRATCH StorageClass (not replicated, lost when a file server fails)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from eksmllint.checks.storage._shared import SCRATCH, fsx_deployment_type, provisions_new_filesystem
from eksmllint.core.context import LintRun, RuleContext
from eksmllint.core.finding import DocPath, Finding
from eksmllint.resource import Resource
from eksmllint.workload import Container, PodTemplate

#: Arguments naming where checkpoints are written (``--checkpoint-file``: torchelastic's ImageNet
#: example saves to that file); ``--resume_from_checkpoint`` and the like only read.
_CKPT_ARGS = r"--(?:output[_-]dir|checkpoint[_-]?(?:dir|path|file)|ckpt[_-]?(?:dir|path)|save[_-]dir|save)"
_CKPT_FLAG = re.compile(_CKPT_ARGS + r"(?:=|\s+)[\"']?(/[^\s\"';]*)")
_CKPT_FLAG_ONLY = re.compile(f"^{_CKPT_ARGS}$")
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


def _scratch_class(ctx: RuleContext, t: PodTemplate, volume: dict) -> tuple[str, str, str] | None:
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
            if dt := _scratch_type(sc):
                return name, sc_name, dt
    return None


def _scratch_type(sc: Resource) -> str | None:
    """The SCRATCH deployment type of the FSx file systems StorageClass ``sc`` provisions, or None."""
    dt = fsx_deployment_type(sc) if provisions_new_filesystem(sc) else None
    return dt if dt in SCRATCH else None


def _has_scratch_class(run: LintRun, _: object) -> bool:
    return any(_scratch_type(sc) for sc in run.of_kind("StorageClass"))


def check(ctx: RuleContext, t: PodTemplate) -> Iterator[Finding]:
    """EML902: a checkpoint directory is on a PVC of an FSx SCRATCH StorageClass."""
    if not ctx.run.once("eml902-scratch-classes", ctx.run, _has_scratch_class):
        return  # the usual run: no SCRATCH class, so no command line needs reading
    for c in t.containers:
        found: dict[str, tuple[DocPath, str]] = {}  # volume name -> (where stated, directory)
        for path, directory in checkpoint_paths(c):
            mount = c.mount_for(directory)
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
                f"checkpoints in {directory} go to PVC {pvc}, an FSx for Lustre {dt} file system",
                detail=f"StorageClass {sc} creates {dt} file systems, whose data is not replicated and is lost "
                "when a file server fails.",
            )
