"""Configuration: ``.eksmllint.yaml`` (or ``[tool.eksmllint]`` in pyproject.toml), validated.

Layering, lowest first: built-in defaults < the closest config file found upwards from the working
directory (or ``--config``) < command-line flags. ``select`` replaces the rule set, ``ignore`` and
``extend-select`` add to it. Unknown keys are errors naming the key and the file. Flags are
validated like the file (``--kubernetes-version banana`` is an error, exit 2).

The JSON schema of this model ships as ``eksmllint/config.schema.json`` (editors validate and
complete with it); ``python -m eksmllint.config`` regenerates it and a test keeps them in step.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, WithJsonSchema, field_validator

from eksmllint.paths import relative_inside
from eksmllint.platform import Platform, parse_assignments

CONFIG_NAMES = (".eksmllint.yaml", ".eksmllint.yml")
#: The largest max-file-size accepted: far above any manifest, and an int every read can take.
MAX_FILE_SIZE_LIMIT = 1 << 32
SCHEMA_PATH = Path(__file__).with_name("config.schema.json")
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_VERSION_RE = re.compile(r"1\.(\d{1,3})")


class RawFloat(float):
    """A number that remembers how it was written: ``kubernetes-version: 1.30`` unquoted is the
    float 1.3 to YAML and TOML, and only the text says the user meant 1.30."""

    text: str

    def __new__(cls, text: str) -> RawFloat:
        obj = super().__new__(cls, text.replace("_", ""))
        obj.text = text
        return obj


class _ConfigLoader(_Loader):  # type: ignore[misc, valid-type]
    """The safe loader, with floats kept as :class:`RawFloat`."""


def _raw_float(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> float:
    value = loader.construct_yaml_float(node)
    try:
        return RawFloat(node.value) if float(node.value.replace("_", "")) == value else value
    except ValueError:  # YAML 1.1 spellings Python does not read (.inf, 1:30): the plain float
        return value


_ConfigLoader.add_constructor("tag:yaml.org,2002:float", _raw_float)


def _version_hint() -> str:
    from eksmllint.schema import supported_versions  # only on an error: schemas load lazily

    versions = supported_versions()
    return (
        (f"schemas are bundled for {versions[0]} to {versions[-1]}; other 1.x versions are checked against the nearest")
        if versions
        else "no schemas are bundled"
    )


KubernetesVersion = Annotated[
    str,
    WithJsonSchema(
        {
            "description": 'Target Kubernetes minor version, such as "1.33" (quote it; an unquoted 1.30 is '
            "read as written, not as the number 1.3).",
            "anyOf": [
                {"type": "string", "pattern": r"^1\.\d{1,3}$"},
                {"type": "number", "minimum": 1, "exclusiveMaximum": 2},
            ],
        }
    ),
]


class ConfigError(Exception):
    """Invalid configuration; the CLI exits 2 with this message."""


class Config(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    kubernetes_version: KubernetesVersion = Field("1.33", alias="kubernetes-version")
    select: tuple[str, ...] = Field(("ALL",), description="Rules to run: codes, slugs, families or prefixes (EML3).")
    extend_select: tuple[str, ...] = Field((), alias="extend-select", description="Rules added to select.")
    ignore: tuple[str, ...] = Field((), description="Rules removed from the selection.")
    severity: dict[str, Literal["error", "warning", "info"]] = Field(
        default_factory=dict, description="Per-rule severity override (code or slug -> severity)."
    )
    fail_on: Literal["error", "warning", "info", "never"] = Field(
        "warning", alias="fail-on", description="Lowest severity that makes the run fail (exit 1)."
    )
    exclude: tuple[str, ...] = Field(
        (), description=("Paths never linted: gitignore-style patterns relative to the config file's folder.")
    )
    per_path_ignores: dict[str, tuple[str, ...]] = Field(
        default_factory=dict, alias="per-path-ignores", description="Glob -> rules not reported for those files."
    )
    rules: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="Per-rule options (see `eksmllint explain CODE`)."
    )
    context: tuple[str, ...] = Field(
        (), description="Paths loaded for cross-file rules only; their own findings are dropped."
    )
    max_file_size: int = Field(
        5 * 1024 * 1024,
        alias="max-file-size",
        gt=0,
        le=MAX_FILE_SIZE_LIMIT,
        description="Files larger than this many bytes are reported (EML001), not parsed.",
    )
    unsafe_fixes: bool = Field(False, alias="unsafe-fixes", description="`eksmllint fix` also applies unsafe fixes.")
    reference_kinds: tuple[str, ...] | None = Field(None, alias="reference-kinds")
    platform: Platform = Field(
        default_factory=Platform,
        description="Releases of the platform components rule premises depend on (karpenter, kueue, kuberay, "
        "neuron-sdk, training-operator, mpi-operator, volcano), such as {karpenter: '1.8'}; each defaults "
        "to the newest release eksmllint knows. Findings and `eksmllint explain` name the release assumed. "
        "`eks-auto-mode: true|false` says whether the cluster runs EKS Auto Mode (its built-in NodePools); "
        "unset, it is assumed when the run holds an Auto Mode NodePool or NodeClass.",
    )

    source: str | None = Field(None, exclude=True)

    @field_validator("kubernetes_version", mode="before")
    @classmethod
    def _version(cls, v: Any) -> str:
        if isinstance(v, float) and not isinstance(v, bool):
            if not isinstance(v, RawFloat):
                raise ValueError(
                    f'write the version as a string such as "1.30": the number {v!r} cannot tell 1.3 from 1.30'
                )
            v = v.text
        m = _VERSION_RE.fullmatch(v.strip()) if isinstance(v, str) else None
        if m is None:
            raise ValueError(f'expected a Kubernetes version such as "1.33", got {v!r} ({_version_hint()})')
        return f"1.{int(m.group(1))}"

    @field_validator("exclude")
    @classmethod
    def _patterns(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        if v:
            import pathspec

            for pattern in v:
                try:
                    pathspec.GitIgnoreSpec.from_lines([pattern])
                except (ValueError, TypeError, re.error) as err:  # GitIgnorePatternError: a ValueError
                    raise ValueError(f"invalid gitignore pattern {pattern!r}: {err}") from None
        return v

    def path_filter(self) -> PathFilter:
        """The ``exclude`` patterns, relative to the config file's folder (else the working dir)."""
        base = Path(self.source).parent if self.source and Path(self.source).is_file() else Path.cwd()
        return PathFilter(self.exclude, str(base))


class PathFilter:
    """``exclude`` as gitignore-style patterns (``pathspec``), relative to ``base``: ``charts/``,
    ``**/templates/**``, ``!keep.yaml``. A path is matched however it was typed (``./x``, absolute);
    outside ``base``, unanchored patterns (no ``/`` but a trailing one) still match its names."""

    def __init__(self, patterns: tuple[str, ...] | list[str], base: str) -> None:
        self.base = os.path.abspath(base)
        self.spec = None
        if patterns:
            import pathspec  # only when something is excluded

            self.spec = pathspec.GitIgnoreSpec.from_lines(patterns)

    def __call__(self, path: str, is_dir: bool = False) -> bool:
        if self.spec is None:
            return False
        rel = relative_inside(path, self.base)
        if rel is None:  # outside base: its names from the file-system root
            rel = os.path.splitdrive(os.path.abspath(path))[1].replace(os.sep, "/").lstrip("/")
        if rel == ".":
            return False
        return self.spec.match_file(rel + "/" if is_dir else rel)


def _format_error(err: ValidationError, source: str) -> str:
    lines = []
    for e in err.errors():
        where = ".".join(str(p) for p in e["loc"]) or "<root>"
        if e["type"] == "extra_forbidden":
            lines.append(f"{source}: unknown key '{where}'")
        else:
            msg = e["msg"].removeprefix("Value error, ")  # pydantic's prefix for our own messages
            lines.append(f"{source}: '{where}': {msg}")
    return "\n".join(lines)


def parse_config(data: Any, source: str) -> Config:
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the configuration must be a mapping")
    if "source" in data:  # a model field set by the loader, not a setting
        raise ConfigError(f"{source}: unknown key 'source'")
    try:
        cfg = Config.model_validate(data)
    except ValidationError as err:
        raise ConfigError(_format_error(err, source)) from None
    return cfg.model_copy(update={"source": source})


def load_config_file(path: Path) -> Config:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise ConfigError(f"{path}: cannot read config: {err.strerror}") from None
    except UnicodeDecodeError as err:
        raise ConfigError(
            f"{path}: not UTF-8 text (byte 0x{err.object[err.start]:02x} at offset {err.start})"
        ) from None
    if path.name == "pyproject.toml":
        import tomllib  # only when a pyproject.toml is read (~3 ms of start-up otherwise)

        try:
            data = tomllib.loads(text, parse_float=RawFloat).get("tool", {}).get("eksmllint", {})
        except tomllib.TOMLDecodeError as err:
            raise ConfigError(f"{path}: invalid TOML: {err}") from None
    else:
        try:
            data = yaml.load(text, Loader=_ConfigLoader)
        except yaml.YAMLError as err:
            raise ConfigError(f"{path}: invalid YAML: {err}") from None
    return parse_config(data, str(path))


def repository_of(config_file: str) -> Path:
    """The repository a config file belongs to (symlinks resolved): the closest folder upwards
    holding ``.git``, else the config file's own folder."""
    folder = Path(config_file).resolve().parent
    for directory in (folder, *folder.parents):
        if (directory / ".git").exists():
            return directory
    return folder


def check_context_inside(cfg: Config) -> None:
    """Refuse ``context:`` paths of a config file that lead outside its repository (symlinks
    resolved): a repository's config must not make CI read, and report names from, trees
    outside the checkout. The command line opts out with ``--allow-outside-context``."""
    if not cfg.context or not cfg.source:
        return
    root = repository_of(cfg.source)
    for path in cfg.context:
        if relative_inside(os.path.realpath(path), str(root)) is None:
            raise ConfigError(
                f"{cfg.source}: 'context': {path!r} is outside the repository {root} "
                "(pass --allow-outside-context to read it)"
            )


def find_config(start: Path) -> Path | None:
    """The closest ``.eksmllint.yaml``, or ``pyproject.toml`` with ``[tool.eksmllint]``, upwards."""
    for directory in (start, *start.parents):
        for name in CONFIG_NAMES:
            if (directory / name).is_file():
                return directory / name
        pyproject = directory / "pyproject.toml"
        if pyproject.is_file():
            import tomllib

            try:
                if "eksmllint" in tomllib.loads(pyproject.read_text(encoding="utf-8")).get("tool", {}):
                    return pyproject
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
                continue
    return None


def resolve_config(explicit: str | None, cwd: Path | None = None) -> Config:
    if explicit:
        return load_config_file(Path(explicit))
    found = find_config((cwd or Path.cwd()).resolve())
    return load_config_file(found) if found else Config()


def with_overrides(cfg: Config, **overrides: Any) -> Config:
    """CLI flags win; ``None`` means 'not given'. Validated like the file."""
    update = {k: v for k, v in overrides.items() if v is not None}
    if not update:
        return cfg
    fields = Config.model_fields
    data = cfg.model_dump(by_alias=True)
    # Only the components the file named: the others stay "assumed" (Platform.describe says which).
    data["platform"] = cfg.platform.model_dump(by_alias=True, exclude_unset=True)
    if "platform" in update:  # --platform NAME=VERSION: each flag overrides that one component
        try:
            given = parse_assignments(update.pop("platform"))
        except ValueError as err:
            raise ConfigError(f"command line: {err}") from None
        data["platform"].update(given)
    data.update({(fields[k].alias or k) if k in fields else k: v for k, v in update.items()})
    try:
        merged = Config.model_validate(data)
    except ValidationError as err:
        raise ConfigError(_format_error(err, "command line")) from None
    return merged.model_copy(update={"source": cfg.source})


def json_schema() -> dict:
    """The config file's JSON schema, from the model (what ``config.schema.json`` holds)."""
    schema = Config.model_json_schema(by_alias=True)
    schema["properties"].pop("source", None)  # set by the loader, rejected in files
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "eksmllint configuration (.eksmllint.yaml, [tool.eksmllint])"
    return schema


def schema_text() -> str:
    return json.dumps(json_schema(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":  # python -m eksmllint.config > eksmllint/config.schema.json
    import sys

    sys.stdout.write(schema_text())
