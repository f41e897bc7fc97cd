"""Configuration: ``.eksmllint.yaml`` (or ``[tool.eksmllint]`` in pyproject.toml), validated.

Layering, lowest first: built-in defaults < the closest config file found upwards from the working
directory (or ``--config``) < command-line flags. ``select`` replaces the rule set, ``ignore`` and
``extend-select`` add to it. Unknown keys are errors naming the key and the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

CONFIG_NAMES = (".eksmllint.yaml", ".eksmllint.yml")
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class ConfigError(Exception):
    """Invalid configuration; the CLI exits 2 with this message."""


class Config(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    kubernetes_version: str = Field("1.33", alias="kubernetes-version")
    select: tuple[str, ...] = ("ALL",)
    extend_select: tuple[str, ...] = Field((), alias="extend-select")
    ignore: tuple[str, ...] = ()
    severity: dict[str, Literal["error", "warning", "info"]] = Field(default_factory=dict)
    fail_on: Literal["error", "warning", "info", "never"] = Field("warning", alias="fail-on")
    exclude: tuple[str, ...] = ()
    per_path_ignores: dict[str, tuple[str, ...]] = Field(default_factory=dict, alias="per-path-ignores")
    rules: dict[str, dict[str, Any]] = Field(default_factory=dict, description="per-rule options")
    context: tuple[str, ...] = ()
    max_file_size: int = Field(5 * 1024 * 1024, alias="max-file-size", gt=0)
    unsafe_fixes: bool = Field(False, alias="unsafe-fixes")
    reference_kinds: tuple[str, ...] | None = Field(None, alias="reference-kinds")

    source: str | None = Field(None, exclude=True)

    @field_validator("kubernetes_version", mode="before")
    @classmethod
    def _version(cls, v: Any) -> str:
        text = str(v)
        parts = text.split(".")
        if len(parts) != 2 or not all(p.isdigit() for p in parts):
            raise ValueError(f"kubernetes-version must look like 1.33, got {text!r}")
        return text


def _format_error(err: ValidationError, source: str) -> str:
    lines = []
    for e in err.errors():
        where = ".".join(str(p) for p in e["loc"]) or "<root>"
        if e["type"] == "extra_forbidden":
            lines.append(f"{source}: unknown key '{where}'")
        else:
            lines.append(f"{source}: '{where}': {e['msg']}")
    return "\n".join(lines)


def parse_config(data: Any, source: str) -> Config:
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the configuration must be a mapping")
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
    if path.name == "pyproject.toml":
        import tomllib  # only when a pyproject.toml is read (~3 ms of start-up otherwise)

        try:
            data = tomllib.loads(text).get("tool", {}).get("eksmllint", {})
        except tomllib.TOMLDecodeError as err:
            raise ConfigError(f"{path}: invalid TOML: {err}") from None
    else:
        try:
            data = yaml.load(text, Loader=_Loader)
        except yaml.YAMLError as err:
            raise ConfigError(f"{path}: invalid YAML: {err}") from None
    return parse_config(data, str(path))


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
            except (OSError, tomllib.TOMLDecodeError):
                continue
    return None


def resolve_config(explicit: str | None, cwd: Path | None = None) -> Config:
    if explicit:
        return load_config_file(Path(explicit))
    found = find_config((cwd or Path.cwd()).resolve())
    return load_config_file(found) if found else Config()


def with_overrides(cfg: Config, **overrides: Any) -> Config:
    """CLI flags win; ``None`` means 'not given'."""
    update = {k: v for k, v in overrides.items() if v is not None}
    return cfg.model_copy(update=update) if update else cfg
