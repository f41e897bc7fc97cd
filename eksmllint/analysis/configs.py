"""The one reader of embedded training configs: which configs a container's launch line names
(DeepSpeed, accelerate, PyTorch Lightning, Hugging Face ``TrainingArguments``... — the forms and
their keys are the table :mod:`eksmllint.platform.configs`), and the facts every rule family reads
from them: precision, micro / global batch, gradient accumulation and clipping, offload and
checkpoint paths.

How a container's config is found:

- a launch option that names a ``.json``/``.yaml``/``.yml`` file (``--deepspeed ds.json``,
  ``--config_file accelerate.yaml``, LightningCLI's ``--config``, any ``--*_config``), or the
  script's only argument (``train.py args.json``: ``HfArgumentParser.parse_json_file``), when the
  file is a ConfigMap key the container mounts (``workingDir`` applies to relative paths; a
  unique path suffix is accepted) or a JSON / YAML file of the run beside the manifest (the one
  file of that name in the manifest's directory or below);
- in a Slurm batch script (:func:`script_configs`), the same words of the script's program calls,
  naming a file of the run beside the script (sbatch runs it from the submit directory, normally
  the script's own): a batch script mounts no ConfigMap;
- what the file is comes from its content (the table's ``recognise`` keys), never from its name
  alone; an option of the form (``--deepspeed``) only accepts that form;
- a container that starts ``deepspeed`` without naming a file reads the one DeepSpeed config it
  mounts, when there is exactly one.

Texts are parsed once per distinct text (JSON, else YAML with the loader's limits: a ConfigMap
is user input), and each container's configs once per run.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from eksmllint.analysis.commands import CommandWord, ProgramCall, batch_script_calls, container_calls
from eksmllint.checks.helpers import MountedFile, configmap_refs, find_configmap, mounted_files
from eksmllint.launch.deepspeed import looks_like_deepspeed
from eksmllint.resource import Resource, SourceFile
from eksmllint.workload import Container
from eksmllint.yamlpos import YAMLLoadError, load_data

if TYPE_CHECKING:
    from eksmllint.platform.configs import ConfigForm

__all__ = [
    "ConfigRef",
    "EmbeddedConfig",
    "container_configs",
    "load",
    "mounted_configmaps",
    "mounted_file_at",
    "recognise",
    "script_configs",
    "unmodelled_configmap_keys",
]

_CONFIG_FILE = re.compile(r"\.(?:json|ya?ml)$", re.IGNORECASE)
_FLAG_PRECISION = {
    **dict.fromkeys(("fp16", "16", "16-mixed", "16_mixed", "16-true", "float16", "half"), "fp16"),
    **dict.fromkeys(("bf16", "bf16-mixed", "bf16_mixed", "bf16-true", "bfloat16"), "bf16"),
    **dict.fromkeys(("no", "32", "32-true", "fp32", "float32"), "fp32"),
}
_TRUE = frozenset({"true", "1", "yes", "on"})


@lru_cache(maxsize=1024)
def _load_cached(text: str) -> object:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        pass
    try:
        return load_data(text)  # the loader's limits (aliases, depth, nodes): this is a user's ConfigMap
    except YAMLLoadError:
        return None


def config_forms() -> tuple[ConfigForm, ...]:
    """The table of config forms, imported on first use: a run without configs never builds its
    pydantic models (start-up time of every lint process and the webhook)."""
    from eksmllint.platform.configs import config_forms as forms

    return forms()


def load(text: str | None) -> object:
    """A config text's data: JSON, else YAML; None when neither (never raises)."""
    return _load_cached(text) if text else None


def _get(data: object, dotted: str) -> object:
    for key in dotted.split("."):
        if not isinstance(data, dict) or key not in data:
            return None
        data = data[key]
    return data


def _has(data: object, dotted: str) -> bool:
    head, _, rest = dotted.rpartition(".")
    parent = _get(data, head) if head else data
    return isinstance(parent, dict) and rest in parent


def recognise(data: object) -> ConfigForm | None:
    """The form a config's data is (first row of the table that matches), or None."""
    if not isinstance(data, dict):
        return None
    for form in config_forms():
        r = form.recognise
        if r.deepspeed and not looks_like_deepspeed(data):
            continue
        if not all(_has(data, k) for k in r.all_of):
            continue
        if r.any_of and not any(_has(data, k) for k in r.any_of):
            continue
        return form
    return None


@dataclass(frozen=True, eq=False)
class EmbeddedConfig:
    """A recognised config and where it lives: a ConfigMap key or a file of the run."""

    form: ConfigForm
    data: dict
    mounted: MountedFile | None = None
    file: SourceFile | None = None

    @property
    def where(self) -> str:
        """For messages: ``in ConfigMap NAME key KEY`` or ``in PATH``."""
        if self.mounted is not None:
            return f"in ConfigMap {self.mounted.configmap.name} key {self.mounted.key}"
        return f"in {self.file.path}" if self.file is not None else ""

    def precisions(self) -> list[tuple[str, str]]:
        """(precision, setting as shown) for every precision the config selects."""
        out = []
        for p in self.form.precision:
            value = _get(self.data, p.key)
            if p.means is not None:
                if value is True or (isinstance(value, str) and value.strip().lower() in _TRUE):
                    out.append((p.means, f"{p.key}: true"))
            elif isinstance(value, (str, int)) and not isinstance(value, bool):
                prec = _FLAG_PRECISION.get(str(value).strip().lower())
                if prec is not None:
                    out.append((prec, f"{p.key}: {value}"))
        return out

    def _int(self, keys: tuple[str, ...]) -> int | None:
        for k in keys:
            v = _get(self.data, k)
            if isinstance(v, int) and not isinstance(v, bool):
                return v
        return None

    def micro_batch(self) -> int | None:
        return self._int(self.form.micro_batch)

    def global_batch(self) -> int | None:
        return self._int(self.form.global_batch)

    def grad_accumulation(self) -> int | None:
        return self._int(self.form.grad_accumulation)

    def grad_clipping(self) -> float | None:
        for k in self.form.grad_clipping:
            v = _get(self.data, k)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                return float(v)
        return None

    def _paths(self, keys: tuple[str, ...]) -> list[tuple[str, str]]:
        return [(k, v.strip()) for k in keys if isinstance(v := _get(self.data, k), str) and v.strip()]

    def offload_paths(self) -> list[tuple[str, str]]:
        """(key, path) of every offload directory the config names (DeepSpeed NVMe offload)."""
        return self._paths(self.form.offload_paths)

    def checkpoint_paths(self) -> list[tuple[str, str]]:
        """(key, directory) of every checkpoint/output directory the config names."""
        return self._paths(self.form.checkpoint_paths)


@dataclass(frozen=True, eq=False)
class ConfigRef:
    """A config a container's launch line reads, and the word that names it (None when it is the
    only DeepSpeed config a ``deepspeed`` launch without a file reads)."""

    config: EmbeddedConfig
    word: CommandWord | None


def _references(calls: tuple[ProgramCall, ...]) -> Iterator[tuple[str | None, CommandWord]]:
    """(option name or None for the script's only argument, word holding the path) of config
    files the programs are given."""
    for call in calls:
        if not call.reads_arguments:
            continue
        words = call.words
        for i, w in enumerate(words):
            text = w.text
            if text.startswith("-"):
                name, eq, value = text.lstrip("-").partition("=")
                name = name.replace("-", "_").lower()
                if not eq and i + 1 < len(words) and not words[i + 1].text.startswith("-"):
                    value, w = words[i + 1].text, words[i + 1]
                if _CONFIG_FILE.search(value) or ("/" in value and name in _known_options()):
                    yield name, w
            elif _CONFIG_FILE.search(text) and i == len(words) - 1 and i > 0:
                prev = words[i - 1].text
                if not prev.startswith("-") or "=" in prev:
                    yield None, w


def _known_options() -> dict[str, ConfigForm]:
    return {o: f for f in config_forms() for o in f.options}


def _path_of(word: CommandWord, option: str | None) -> str:
    text = word.text
    if option is not None and text.startswith("-"):
        return text.partition("=")[2]
    return text


def mounted_file_at(files: dict[str, MountedFile], path: str, workdir: object) -> MountedFile | None:
    """The mounted ConfigMap file (absolute path -> key) a path names: absolute, relative to
    ``workdir``, else the one file whose path ends with it."""
    if path.startswith("/"):
        return files.get(posixpath.normpath(path))
    if isinstance(workdir, str) and workdir.startswith("/"):
        hit = files.get(posixpath.normpath(posixpath.join(workdir, path)))
        if hit is not None:
            return hit
    tail = "/" + posixpath.normpath(path)
    matches = [f for p, f in files.items() if p.endswith(tail)]
    return matches[0] if len(matches) == 1 else None


def _files_by_name(run) -> dict[str, list[SourceFile]]:
    """The run's JSON files and its YAML files that hold no Kubernetes object, by file name (once
    per run: every launch asks)."""

    def build(r, _) -> dict[str, list[SourceFile]]:
        out: dict[str, list[SourceFile]] = {}
        for f in r.files:
            if not (isinstance(f.text, str) and f.text) or not (f.kind == "json" or _not_manifest(f)):
                continue
            out.setdefault(posixpath.basename(_norm(f.path)), []).append(f)
        return out

    return run.once("config-files-of-run", run, build)


def _not_manifest(f: SourceFile) -> bool:
    return f.kind == "yaml" and not any(isinstance(d.data, dict) and "apiVersion" in d.data for d in f.documents)


def _norm(path: str) -> str:
    return posixpath.normpath(path.replace("\\", "/"))


def _beside(run, home: SourceFile, path: str) -> SourceFile | None:
    """The one JSON / YAML file of the run with that name in ``home``'s directory or below."""
    base = posixpath.dirname(_norm(home.path))
    found = [
        f
        for f in _files_by_name(run).get(posixpath.basename(path), ())
        if f is not home and (base in ("", ".") or _norm(f.path).startswith(base.rstrip("/") + "/"))
    ]
    return found[0] if len(found) == 1 else None


def _accepts(form: ConfigForm, option: str | None) -> bool:
    if option is None:
        return "positional" in form.options
    if option in form.options:
        return True
    return option not in _known_options() and option.endswith(("config", "config_file", "config_path"))


def _config(data: object, option: str | None = None, **where) -> EmbeddedConfig | None:
    """The config ``data`` is: by content, or the form whose own option names it (``options-decide``)."""
    if not isinstance(data, dict):
        return None
    form = recognise(data)
    named = _known_options().get(option or "")
    if form is None and named is not None and named.options_decide:
        form = named
    return EmbeddedConfig(form, data, **where) if form is not None else None


def container_configs(run, c: Container) -> list[ConfigRef]:
    """Every recognised config container ``c``'s launch line reads (module docstring), modelled or
    not (``config.form.modelled``); computed once per container and run."""
    return run.once("embedded-configs-of-container", c, _container_configs)


def _container_configs(run, c: Container) -> list[ConfigRef]:
    files = {posixpath.normpath(k): v for k, v in mounted_files(run, c).items()}
    if not files and not _files_by_name(run):
        return []  # nothing a config could be read from
    home = c.template.resource.doc.file
    out, seen, named_deepspeed = _named_configs(run, container_calls(c), home, files, c.data.get("workingDir"))
    if not named_deepspeed and _launches_deepspeed(c):
        only = {
            (id(f.configmap), f.key): cfg
            for f in files.values()
            if (cfg := _config(load(f.text), mounted=f)) is not None and cfg.form.name == "deepspeed"
        }
        if len(only) == 1 and next(iter(only)) not in {(r[1], r[2]) for r in seen if r[0] == "cm"}:
            out.append(ConfigRef(next(iter(only.values())), None))
    return out


def script_configs(run, src: SourceFile) -> list[ConfigRef]:
    """Every recognised config a Slurm batch script's program calls name (module docstring), as
    files of the run beside the script; computed once per script and run."""
    return run.once("embedded-configs-of-script", src, _script_configs)


def _script_configs(run, src: SourceFile) -> list[ConfigRef]:
    if not isinstance(src.text, str) or not _files_by_name(run):
        return []
    return _named_configs(run, batch_script_calls(src), src, {}, None)[0]


def _named_configs(
    run, calls: tuple[ProgramCall, ...], home: SourceFile, files: dict[str, MountedFile], workdir: object
) -> tuple[list[ConfigRef], set[tuple], bool]:
    """The configs the calls name: a mounted ConfigMap file (``files``), else a file of the run
    beside ``home`` (the manifest or batch script); with their identities, and whether a
    ``--deepspeed*`` option named one."""
    out: list[ConfigRef] = []
    seen: set[tuple] = set()
    named_deepspeed = False
    for option, word in _references(calls):
        path = _path_of(word, option)
        if "$" in path:
            continue
        hit = mounted_file_at(files, path, workdir) if files else None
        if hit is not None:
            cfg = _config(load(hit.text), option, mounted=hit)
            ident: tuple = ("cm", id(hit.configmap), hit.key)
        else:
            f = _beside(run, home, path)
            cfg = _config(load(f.text), option, file=f) if f is not None else None
            ident = ("file", f.path if f is not None else "")
        if option is not None and option.startswith("deepspeed"):
            named_deepspeed = True
        if cfg is None or ident in seen or not _accepts(cfg.form, option):
            continue
        seen.add(ident)
        out.append(ConfigRef(cfg, word))
    return out, seen, named_deepspeed


def _launches_deepspeed(c: Container) -> bool:
    for call in container_calls(c):
        for w in call.words:
            if posixpath.basename(w.text) == "deepspeed":
                return True
            if w.text.startswith("--") and w.text[2:].replace("-", "_").split("=")[0] == "use_deepspeed":
                return True
    return False


def unmodelled_configmap_keys(cm: Resource) -> list[tuple[str, ConfigForm]]:
    """(key, form) of the ConfigMap's keys that hold a config form eksmllint recognises but does
    not read (EML004 says so once, "not judged")."""
    data = cm.get(("data",))
    if not isinstance(data, dict):
        return []
    out = []
    for key, text in data.items():
        if isinstance(key, str) and isinstance(text, str) and _CONFIG_FILE.search(key):
            form = recognise(load(text))
            if form is not None and not form.modelled:
                out.append((key, form))
    return out


def mounted_configmaps(run) -> list[Resource]:
    """ConfigMaps of the run that some pod template mounts (volume or projected source)."""
    out: dict[int, Resource] = {}
    for t in run.templates:
        for _, v in t.volumes:
            for ref in configmap_refs(v):
                cm = find_configmap(run, ref.get("name"), t.resource.namespace)
                if cm is not None:
                    out[id(cm)] = cm
    return list(out.values())
