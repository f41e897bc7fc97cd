"""Small shared helpers for checks (kept here so no rule re-implements them)."""

from __future__ import annotations

import re
from typing import Iterable

from eksmllint.workload import Container, PodTemplate

SHM_PATH = "/dev/shm"
_NUM_WORKERS = re.compile(r"--(?:dataloader_)?num[_-]workers(?:=|\s+)(\d+)")


def mount_at(container: Container, mount_path: str) -> tuple[int, dict] | None:
    for i, m in container.volume_mounts:
        if str(m.get("mountPath", "")).rstrip("/") == mount_path:
            return i, m
    return None


def dataloader_workers(container: Container) -> int:
    """DataLoader worker count from ``--num_workers`` / ``--dataloader_num_workers`` flags."""
    command, args = container.argv_lists()
    text = " ".join((command or []) + (args or []))
    m = _NUM_WORKERS.search(text)
    return int(m.group(1)) if m else 0


def unique_volume_name(template: PodTemplate, base: str) -> str:
    names = {v.get("name") for _, v in template.volumes}
    if base not in names:
        return base
    n = 1
    while f"{base}-{n}" in names:
        n += 1
    return f"{base}-{n}"


def fmt_list(items: Iterable[str], limit: int = 4) -> str:
    items = list(items)
    shown = ", ".join(items[:limit])
    return shown + (f" (+{len(items) - limit} more)" if len(items) > limit else "")
