"""DeepSpeed configs of a run: JSON files and mounted ConfigMap keys, and which one a launcher's
``--deepspeed PATH`` names (EML809 compares them with the launcher, EML005 reports the ones that
cannot be loaded).

How a ``--deepspeed PATH`` reference finds its config:

- from a **Slurm script**: the JSON file of the run at ``PATH`` relative to the script's directory
  (sbatch runs the script from the submit directory, normally the script's own); else the one
  JSON file of the run with the same file name; else, when exactly one DeepSpeed config (by name
  ``ds_config*``/``*deepspeed*`` or by content) lies in the script's directory or below, that one
  (the seed names ``configs/ds_config_zero3.json`` for a file shipped as
  ``25-deepspeed-zero3-config.json`` beside it);
- from a **container**: the ConfigMap key the container mounts at that path (``workingDir``
  applies to relative paths; a unique path suffix is accepted); else the one JSON file of the run
  with the same file name in the manifest's directory or below.

Parsing is pure and cached per input text, like :mod:`eksmllint.analysis.launch_sites`.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from functools import lru_cache

from eksmllint.analysis.configs import load, mounted_configmaps, mounted_file_at
from eksmllint.analysis.launch_sites import Site, all_sites
from eksmllint.checks.helpers import MountedFile, mounted_files
from eksmllint.launch.deepspeed import DeepSpeedConfig, DeepSpeedError, looks_like_deepspeed, parse_deepspeed
from eksmllint.launch.model import Option
from eksmllint.resource import Resource, SourceFile
from eksmllint.workload import Container


@lru_cache(maxsize=1024)
def deepspeed_of(text: str, filename: str) -> DeepSpeedConfig | DeepSpeedError:
    """The parsed DeepSpeed config (never raises); ``filename`` decides JSON vs YAML."""
    return parse_deepspeed(text, filename)


_DS_NAME = re.compile(r"^ds_config|deepspeed", re.IGNORECASE)


def ds_named(name: str) -> bool:
    """File names that say "DeepSpeed config": ``ds_config*`` or ``*deepspeed*``."""
    return bool(_DS_NAME.search(posixpath.basename(name)))


def first_doc(f: SourceFile) -> object:
    return f.documents[0].data if f.documents else None


def is_deepspeed_file(f: SourceFile) -> bool:
    return f.kind == "json" and isinstance(f.text, str) and (ds_named(f.path) or looks_like_deepspeed(first_doc(f)))


def json_files(run) -> list[SourceFile]:
    return [f for f in run.files if f.kind == "json" and isinstance(f.text, str)]


def norm(path: str) -> str:
    return posixpath.normpath(path.replace("\\", "/"))


def under_dir(path: str, base: str) -> bool:
    d = posixpath.dirname(norm(path))
    base = norm(base) if base else "."
    return base == "." or d == base or d.startswith(base.rstrip("/") + "/")


def resolve_file_ref(run, ref: str, base_dir: str, allow_only: bool) -> tuple[SourceFile, str] | None:
    """The JSON file of the run a path reference means (see the module docstring): (file, how)
    with ``how`` one of ``exact``, ``basename``, ``only``."""
    files = json_files(run)
    target = norm(ref if ref.startswith("/") else posixpath.join(base_dir or ".", ref))
    for f in files:
        if norm(f.path) == target:
            return f, "exact"
    base = posixpath.basename(ref)
    same = [f for f in files if posixpath.basename(norm(f.path)) == base and under_dir(f.path, base_dir)]
    if len(same) == 1:
        return same[0], "basename"
    if allow_only:
        local = [f for f in files if is_deepspeed_file(f) and under_dir(f.path, base_dir)]
        if len(local) == 1:
            return local[0], "only"
    return None


def mounted_keys(run, c: Container) -> dict[str, MountedFile]:
    """Absolute path -> ConfigMap key of every ConfigMap file the container mounts."""
    return {norm(k): v for k, v in mounted_files(run, c).items()}


@dataclass(frozen=True, eq=False)
class DSConfig:
    """A parsed DeepSpeed config and where it lives: a JSON file or a ConfigMap key."""

    config: DeepSpeedConfig
    text: str
    file: SourceFile | None = None
    mounted: MountedFile | None = None
    how: str = "exact"

    @property
    def configmap_key(self) -> MountedFile:
        """The ConfigMap key holding a config that is not a file of the run."""
        if self.mounted is None:
            raise ValueError("a DeepSpeed config lives in a file or in a ConfigMap key")
        return self.mounted

    @property
    def ident(self) -> tuple:
        if self.file is not None:
            return ("file", self.file.path)
        return ("cm", id(self.configmap_key.configmap), self.configmap_key.key)

    @property
    def name(self) -> str:
        if self.file is not None:
            return self.file.path
        cm = self.configmap_key.configmap
        return f"ConfigMap {cm.ref.display().split(' ', 1)[1]} key {self.configmap_key.key}"

    def key_line(self, dotted: str) -> int | None:
        return self.config.line_of(dotted)


def ds_config_for(run, site: Site, ref: Option) -> DSConfig | None:
    """The DeepSpeed config a launcher's ``--deepspeed PATH`` names, when it is in the run."""
    path = ref.resolved
    if not path or "$" in path:
        return None
    if site.container is not None:
        c = site.container
        hit = mounted_file_at(mounted_keys(run, c), path, c.data.get("workingDir"))
        if hit is not None:
            text = hit.text
            cfg = deepspeed_of(text, hit.key) if text is not None else None
            return DSConfig(cfg, text, mounted=hit) if text is not None and isinstance(cfg, DeepSpeedConfig) else None
    found = resolve_file_ref(run, path, site_dir(site), allow_only=site.container is None)
    if found is None:
        return None
    f, how = found
    return file_config(f, how)


def site_dir(site: Site) -> str:
    """The directory a launcher's relative file references are read from: its manifest's or its
    Slurm script's."""
    if site.container is not None:
        return posixpath.dirname(norm(site.container.template.resource.doc.file.path))
    return posixpath.dirname(norm(site.src.path)) if site.src is not None else "."


def file_config(f: SourceFile, how: str = "exact") -> DSConfig | None:
    """The parsed DeepSpeed config of a JSON file of the run; None when it cannot be loaded."""
    if not isinstance(f.text, str):
        return None
    cfg = deepspeed_of(f.text, f.path)
    return DSConfig(cfg, f.text, file=f, how=how) if isinstance(cfg, DeepSpeedConfig) else None


def run_ds_configs(run) -> list[DSConfig]:
    """Every parseable DeepSpeed config of the run: JSON files and mounted ConfigMap keys."""
    out: list[DSConfig] = []
    for f in json_files(run):
        if not is_deepspeed_file(f):
            continue
        ds = file_config(f)
        if ds is not None:
            out.append(ds)
    for cm, key, text, _ in configmap_ds_candidates(run):
        cfg = deepspeed_of(text, key)
        if isinstance(cfg, DeepSpeedConfig):
            out.append(DSConfig(cfg, text, mounted=MountedFile(cm, key)))
    return out


def configmap_ds_candidates(run) -> list[tuple[Resource, str, str, object]]:
    """(ConfigMap, key, text, loosely parsed data or None) of mounted keys that look like
    DeepSpeed configs by name (``ds_config*``, ``*deepspeed*``) or by content."""
    out = []
    for cm in mounted_configmaps(run):
        data = cm.get(("data",))
        if not isinstance(data, dict):
            continue
        for key, text in data.items():
            if not isinstance(key, str) or not isinstance(text, str):
                continue
            loose = load(text)
            if ds_named(key) or looks_like_deepspeed(loose):
                out.append((cm, key, text, loose))
    return out


def referenced_json(run) -> dict[str, str]:
    """JSON files of the run that some launcher names as its DeepSpeed config (exact path or
    file name match only) -> the reference as written."""
    out: dict[str, str] = {}
    for site in all_sites(run):
        ref = site.inv.deepspeed_config()
        if ref is None or not ref.resolved or "$" in ref.resolved:
            continue
        if site.container is not None and norm(ref.resolved) in mounted_keys(run, site.container):
            continue
        found = resolve_file_ref(run, ref.resolved, site_dir(site), allow_only=False)
        if found is not None:
            out.setdefault(found[0].path, ref.resolved)
    return out
