"""DeepSpeed and accelerate configs held in ConfigMap keys a container mounts: which precisions they
select (``fp16.enabled`` / ``bf16.enabled``, accelerate ``mixed_precision``)."""

from __future__ import annotations

import json
import posixpath

from eksmllint.analysis.commands import CommandWord as Word
from eksmllint.checks.helpers import MountedFile, mounted_files
from eksmllint.checks.precision._uses import BF16, CONFIG, DS_CONFIG, FP16, VALUE_PRECISION, Use
from eksmllint.workload import Container
from eksmllint.yamlpos import YAMLLoadError, load_data


def parse_config(text: str | None) -> dict | None:
    """A JSON (or YAML) mapping, or None; never raises."""
    if not text:
        return None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        try:
            data = load_data(text)  # the loader's limits and tags: this is a user's ConfigMap
        except YAMLLoadError:
            return None
    return data if isinstance(data, dict) else None


_DS_MARKERS = ("zero_optimization", "train_micro_batch_size_per_gpu", "train_batch_size")


def _option_values(words: list[Word], names: tuple[str, ...]) -> list[str]:
    out = []
    for i, w in enumerate(words):
        if not w.text.startswith("--"):
            continue
        name, eq, value = w.text[2:].partition("=")
        if name.replace("-", "_") not in names:
            continue
        if not eq:
            nxt = words[i + 1] if i + 1 < len(words) and words[i + 1].command == w.command else None
            if nxt is None or nxt.text.startswith("-"):
                continue
            value = nxt.text
        if "/" in value or value.endswith((".json", ".yaml", ".yml")):
            out.append(value)
    return out


def _resolve(path: str, files: dict[str, MountedFile], workdir: object) -> MountedFile | None:
    if path.startswith("/"):
        return files.get(posixpath.normpath(path))
    if isinstance(workdir, str) and workdir.startswith("/"):
        hit = files.get(posixpath.normpath(posixpath.join(workdir, path)))
        if hit is not None:
            return hit
    tail = "/" + posixpath.normpath(path)
    matches = [f for p, f in files.items() if p.endswith(tail)]
    return matches[0] if len(matches) == 1 else None


def _uses_deepspeed(words: list[Word]) -> bool:
    for w in words:
        if posixpath.basename(w.text) == "deepspeed":
            return True
        if w.text.startswith("--") and w.text[2:].replace("-", "_").split("=")[0] in (
            "deepspeed",
            "deepspeed_config",
            "deepspeed_config_file",
            "use_deepspeed",
        ):
            return True
    return False


def config_uses(run, c: Container, words: list[Word]) -> list[Use]:
    """Precisions set in DeepSpeed / accelerate configs the command line reads from a ConfigMap."""
    files = mounted_files(run, c)
    if not files:
        return []
    workdir = c.data.get("workingDir")
    chosen: list[tuple[MountedFile, str]] = []
    ds_refs = _option_values(words, ("deepspeed", "deepspeed_config", "deepspeed_config_file"))
    for ref in ds_refs:
        if (f := _resolve(ref, files, workdir)) is not None:
            chosen.append((f, "deepspeed"))
    if not ds_refs and _uses_deepspeed(words):
        candidates = {
            (f.configmap.key, f.key): f
            for f in files.values()
            if (d := parse_config(f.text)) is not None and any(k in d for k in _DS_MARKERS)
        }
        if len(candidates) == 1:
            chosen.append((next(iter(candidates.values())), "deepspeed"))
    if any(posixpath.basename(w.text) == "accelerate" for w in words):
        for ref in _option_values(words, ("config_file",)):
            if (f := _resolve(ref, files, workdir)) is not None:
                chosen.append((f, "accelerate"))
    uses: list[Use] = []
    seen: set[tuple] = set()
    for f, kind in chosen:
        ident = (f.configmap.key, f.key, kind)
        if ident in seen:
            continue
        seen.add(ident)
        data = parse_config(f.text)
        if data is None:
            continue
        where = f"in ConfigMap {f.configmap.name} key {f.key}"
        path = ("data", f.key)
        if kind == "deepspeed":
            for key, block_prec in ((FP16, FP16), (BF16, BF16), ("bfloat16", BF16)):
                section = data.get(key)
                enabled = section.get("enabled") if isinstance(section, dict) else None
                if enabled is True or (isinstance(enabled, str) and enabled.strip().lower() == "true"):
                    uses.append(Use(block_prec, DS_CONFIG, f"DeepSpeed {key}.enabled: true {where}", f.configmap, path))
        else:
            mp = data.get("mixed_precision")
            prec = VALUE_PRECISION.get(mp.strip().lower()) if isinstance(mp, str) else None
            if prec is not None:
                uses.append(Use(prec, CONFIG, f"accelerate mixed_precision: {mp} {where}", f.configmap, path))
    return uses
