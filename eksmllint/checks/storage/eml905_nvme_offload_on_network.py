"""EML905 nvme-offload-on-network: a DeepSpeed ZeRO-Infinity config offloads optimizer state or
parameters to NVMe (``device: nvme``) at an ``nvme_path`` that the launching container mounts from
a network file system (FSx for Lustre, EFS, S3, NFS) instead of node-local NVMe."""

from __future__ import annotations

import posixpath
from collections.abc import Iterator

from eksmllint.analysis.deepspeed_configs import DSConfig, ds_config_for
from eksmllint.analysis.launch_sites import all_sites
from eksmllint.checks.storage._shared import network_filesystem
from eksmllint.core.context import LintRun, RuleContext
from eksmllint.core.finding import Finding, Location
from eksmllint.workload import Container

_BLOCKS = ("offload_optimizer", "offload_param")


def check(ctx: RuleContext, run: LintRun) -> Iterator[Finding]:
    hits: dict[tuple[int, int], tuple[Container, str, DSConfig, dict[str, str]]] = {}
    for site in all_sites(run):
        c = site.container
        ref = site.inv.deepspeed_config()
        if c is None or ref is None or not ctx.judges(c.template):
            continue  # a Slurm script's mounts are not in the run
        ds = ds_config_for(run, site, ref)
        if ds is None:
            continue
        for block, path in nvme_paths(ds):
            found = _network_mount(run, c, path)
            if found is not None:  # one finding per mount, naming every block that offloads there
                hits.setdefault((id(c), found[0]), (c, found[1], ds, {}))[3].setdefault(block, path)
    for (_, index), (c, what, ds, blocks) in hits.items():
        paths = sorted(set(blocks.values()))
        yield ctx.report(
            c.template.resource,
            c.path + ("volumeMounts", index, "mountPath"),
            f"DeepSpeed NVMe offload ({', '.join(blocks)}) at {', '.join(paths)} is on {what}",
            related=[_config_location(ds, next(iter(blocks)))],
        )


def nvme_paths(ds: DSConfig) -> Iterator[tuple[str, str]]:
    """(block, absolute nvme_path) of every ZeRO offload block with ``device: nvme``."""
    zero = ds.config.zero_optimization
    for block in _BLOCKS:
        off = getattr(zero, block, None) if zero is not None else None
        path = getattr(off, "nvme_path", None) if off is not None else None
        if off is not None and off.device == "nvme" and isinstance(path, str) and path.startswith("/"):
            yield block, posixpath.normpath(path)


def _network_mount(run: LintRun, c: Container, path: str) -> tuple[int, str] | None:
    mount = c.mount_for(path)
    if mount is None:
        return None
    name = mount[1].get("name")
    volume = c.template.volume(name) if isinstance(name, str) else None
    what = network_filesystem(run, c.template.resource.namespace, volume[1]) if volume else None
    return (mount[0], what) if what else None


def _config_location(ds: DSConfig, block: str) -> Location:
    if ds.file is None:
        mounted = ds.configmap_key
        return mounted.configmap.location(("data", mounted.key))
    return Location(ds.file.path, ds.key_line(f"zero_optimization.{block}") or 1, 1)
