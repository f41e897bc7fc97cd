"""DeepSpeed configuration (JSON, or YAML when held in a ConfigMap key).

Rules compare a DeepSpeed config with the launcher's arguments (gradient accumulation,
micro batch, precision) and with the world size.  Values may be ``"auto"`` (filled in by
the HF Trainer / accelerate from their own arguments), so every numeric helper returns a
literal int or None — a rule then knows to stay silent.

Parsing follows DeepSpeed: a JSON object, duplicate keys rejected (DeepSpeed loads configs
with a duplicate-key check), wrong value types rejected.  Errors carry the 1-based line and
column of the problem.  Each key's line is recorded (dotted path, e.g.
``zero_optimization.stage``) so findings point at the offending key.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, PrivateAttr, ValidationError

from eksmllint.yamlpos import DuplicateJSONKey, duplicate_json_key_line, unique_json_pairs

__all__ = ["DeepSpeedConfig", "DeepSpeedError", "looks_like_deepspeed", "parse_deepspeed"]

Auto = Literal["auto"]


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


class PrecisionBlock(_Lenient):
    """``fp16``/``bf16``/``amp`` block.  A block that is present without ``enabled`` is
    enabled for bf16/fp16 only if DeepSpeed says so: DeepSpeed defaults ``enabled`` to
    False, so absence means off."""

    enabled: bool | Auto = False


class Offload(_Lenient):
    device: str | None = None


class ZeroConfig(_Lenient):
    stage: int | Auto | None = None
    offload_optimizer: Offload | None = None
    offload_param: Offload | None = None


class DeepSpeedConfig(_Lenient):
    """The parts of a DeepSpeed config that rules read; everything else is kept (extra)."""

    fp16: PrecisionBlock | None = None
    bf16: PrecisionBlock | None = None
    bfloat16: PrecisionBlock | None = None  # DeepSpeed's alias of "bf16"
    amp: PrecisionBlock | None = None
    zero_optimization: ZeroConfig | None = None
    train_batch_size: int | Auto | None = None
    train_micro_batch_size_per_gpu: int | Auto | None = None
    gradient_accumulation_steps: int | Auto | None = None
    gradient_clipping: float | Auto | None = None

    _filename: str = PrivateAttr(default="")
    _key_lines: dict[str, int] = PrivateAttr(default_factory=dict)

    @property
    def filename(self) -> str:
        return self._filename

    @property
    def key_lines(self) -> dict[str, int]:
        """Dotted key path (``zero_optimization.stage``) -> 1-based line."""
        return self._key_lines

    # -- helpers ---------------------------------------------------------------
    def precision(self) -> set[str]:
        """Precisions literally enabled (``enabled: true``): subset of {"fp16","bf16","amp"}."""
        found: set[str] = set()
        for name, block in (("fp16", self.fp16), ("bf16", self.bf16), ("bf16", self.bfloat16), ("amp", self.amp)):
            if block is not None and block.enabled is True:
                found.add(name)
        return found

    def auto_precision(self) -> set[str]:
        """Precisions whose ``enabled`` is ``"auto"`` (decided by the trainer's arguments)."""
        found: set[str] = set()
        for name, block in (("fp16", self.fp16), ("bf16", self.bf16), ("bf16", self.bfloat16)):
            if block is not None and block.enabled == "auto":
                found.add(name)
        return found

    def micro_batch(self) -> int | None:
        return _literal_int(self.train_micro_batch_size_per_gpu)

    def grad_accum(self) -> int | None:
        return _literal_int(self.gradient_accumulation_steps)

    def train_batch(self) -> int | None:
        return _literal_int(self.train_batch_size)

    def zero_stage(self) -> int | None:
        z = self.zero_optimization
        return _literal_int(z.stage) if z is not None else None

    def offload_devices(self) -> dict[str, str]:
        """``{"optimizer": "cpu", "param": "nvme"}`` for offloads whose device is not none."""
        out: dict[str, str] = {}
        z = self.zero_optimization
        if z is None:
            return out
        for key, off in (("optimizer", z.offload_optimizer), ("param", z.offload_param)):
            if off is not None and off.device and off.device.lower() != "none":
                out[key] = off.device
        return out

    def line_of(self, path: str) -> int | None:
        """1-based line of a key (``gradient_accumulation_steps``, ``bf16.enabled``)."""
        return self.key_lines.get(path)


def _literal_int(v: object) -> int | None:
    if isinstance(v, bool) or not isinstance(v, int):
        return None
    return v


@dataclass(frozen=True)
class DeepSpeedError:
    """Why a DeepSpeed config cannot be used (1-based line/column when known)."""

    filename: str
    message: str
    line: int | None = None
    col: int | None = None


# --------------------------------------------------------------------------- key lines

# Rules and validation errors name keys at most three levels deep (``zero_optimization.offload_param
# .device``).  Recording every path of a deeply nested config costs its depth times its key count
# (a path string per key): a 1 MB file nested 900 levels deep asked for gigabytes.  Paths deeper
# or longer than this are not recorded (a finding there falls back to the file's first line).
_KEY_DEPTH = 8
_KEY_PATH_CHARS = 512


def _json_key_lines(text: str) -> dict[str, int]:
    """Dotted key path -> 1-based line of the key, by scanning the JSON text.

    Only strings and brackets matter: a string followed by ``:`` inside an object is a key;
    its path is the enclosing object's path plus the key.  Runs on text that already parsed,
    so it need not handle malformed input beyond not crashing."""
    lines: dict[str, int] = {}
    frames: list[tuple[str, str | None]] = []  # (kind "obj"/"arr", path; None once too deep to record)
    pending: str | None = None  # path of the key whose value comes next
    line = 1
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
        elif c == '"':
            try:
                s, end = json.decoder.scanstring(text, i + 1)  # type: ignore[attr-defined]
            except ValueError:
                break
            j = end
            while j < n and text[j] in " \t\r\n":
                j += 1
            if j < n and text[j] == ":" and frames and frames[-1][0] == "obj":
                pending = _key_path(frames[-1][1], s, len(frames))
                if pending is not None:
                    lines.setdefault(pending, line)
            i = end
            continue
        elif c in "{[":
            path = pending if pending is not None else (frames[-1][1] if frames else "")
            if pending is None and frames and frames[-1][0] == "obj":
                path = None  # a value whose key was not recorded
            frames.append(("obj" if c == "{" else "arr", path))
            pending = None
        elif c in "}]":
            if frames:
                frames.pop()
            pending = None
        elif c == ",":
            pending = None
        i += 1
    return lines


def _key_path(parent: str | None, key: str, depth: int) -> str | None:
    """``parent.key``, or None when the parent was not recorded or the path is too deep or long."""
    if parent is None or depth > _KEY_DEPTH:
        return None
    path = f"{parent}.{key}" if parent else key
    return path if len(path) <= _KEY_PATH_CHARS else None


def _yaml_key_lines(text: str) -> dict[str, int]:
    lines: dict[str, int] = {}
    try:
        node = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        return lines

    seen: set[int] = set()  # an alias repeats a node: walk it once (nested aliases multiply)

    def walk(n: yaml.Node, prefix: str, depth: int) -> None:
        if not isinstance(n, yaml.MappingNode) or id(n) in seen:
            return
        seen.add(id(n))
        for k, v in n.value:
            if isinstance(k, yaml.ScalarNode):
                path = _key_path(prefix, str(k.value), depth + 1)
                if path is not None:
                    lines.setdefault(path, k.start_mark.line + 1)
                    walk(v, path, depth + 1)

    if node is not None:
        walk(node, "", 0)
    return lines


# --------------------------------------------------------------------------- parse


def _is_json(text: str, filename: str) -> bool:
    if filename.lower().endswith((".yaml", ".yml")):
        return False
    return text.lstrip().startswith("{") or filename.lower().endswith(".json")


def _load(text: str, filename: str) -> tuple[Any, dict[str, int]] | DeepSpeedError:
    if _is_json(text, filename):
        try:
            obj = json.loads(text, object_pairs_hook=unique_json_pairs)
        except DuplicateJSONKey as exc:
            line = duplicate_json_key_line(text, exc.key)
            return DeepSpeedError(filename, f"duplicate key '{exc.key}'", line, None)
        except json.JSONDecodeError as exc:
            return DeepSpeedError(filename, f"invalid JSON: {exc.msg}", exc.lineno, exc.colno)
        except (ValueError, RecursionError) as exc:
            return DeepSpeedError(filename, f"invalid JSON: {exc}", None, None)
        return obj, _json_key_lines(text)
    try:
        obj = yaml.load(text, Loader=_UniqueKeyLoader)
    except _DuplicateKeyYaml as exc:
        return DeepSpeedError(filename, f"duplicate key '{exc.key}'", exc.line, exc.col)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        return DeepSpeedError(
            filename,
            f"invalid YAML: {exc.problem or exc.context}",
            mark.line + 1 if mark else None,
            mark.column + 1 if mark else None,
        )
    except (yaml.YAMLError, RecursionError, ValueError, KeyError, AttributeError, TypeError) as exc:
        # KeyError ... : what PyYAML's constructors raise on `!!bool maybe`, `!!timestamp x`
        return DeepSpeedError(filename, f"invalid YAML: {exc}", None, None)
    return obj, _yaml_key_lines(text)


class _DuplicateKeyYaml(Exception):
    def __init__(self, key: str, line: int, col: int) -> None:
        super().__init__(key)
        self.key, self.line, self.col = key, line, col


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that rejects duplicate mapping keys (as DeepSpeed does for JSON)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for k, _ in node.value:
            key = self.construct_object(k, deep=deep)
            try:
                dup = key in seen
            except TypeError:
                continue
            if dup:
                raise _DuplicateKeyYaml(str(key), k.start_mark.line + 1, k.start_mark.column + 1)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def parse_deepspeed(text: str, filename: str = "") -> DeepSpeedConfig | DeepSpeedError:
    """Parse a DeepSpeed config; returns the model or an error (never raises)."""
    if not isinstance(text, str):
        return DeepSpeedError(filename, "config is not text")
    loaded = _load(text, filename)
    if isinstance(loaded, DeepSpeedError):
        return loaded
    obj, lines = loaded
    if not isinstance(obj, dict):
        return DeepSpeedError(filename, "a DeepSpeed config must be a mapping (JSON object)", 1, 1)
    data = {str(k): v for k, v in obj.items()}
    try:
        cfg = DeepSpeedConfig.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = [
            str(p)
            for p in err.get("loc", ())
            if not str(p).startswith(("int", "float", "bool", "literal", "str", "function"))
        ]
        path = _known_path(loc, lines)
        return DeepSpeedError(
            filename,
            f"invalid value for '{'.'.join(loc) or '?'}': {err.get('msg', 'invalid')}",
            lines.get(path) if path else None,
            None,
        )
    except (RecursionError, ValueError, TypeError) as exc:
        return DeepSpeedError(filename, f"invalid config: {exc}")
    cfg._filename = filename
    cfg._key_lines = lines
    return cfg


def _known_path(loc: list[str], lines: dict[str, int]) -> str | None:
    for k in range(len(loc), 0, -1):
        path = ".".join(loc[:k])
        if path in lines:
            return path
    return None


_STRONG_KEYS = frozenset(
    {
        "zero_optimization",
        "train_micro_batch_size_per_gpu",
        "zero_allow_untested_optimizer",
        "zero_force_ds_cpu_optimizer",
        "steps_per_print",
        "wall_clock_breakdown",
        "activation_checkpointing",
        "flops_profiler",
        "communication_data_type",
        "prescale_gradients",
    }
)


def looks_like_deepspeed(obj: object) -> bool:
    """Does this mapping look like a DeepSpeed config (so a ConfigMap value is one)?

    DeepSpeed-only keys decide; ``train_batch_size``/``gradient_accumulation_steps`` count
    only next to a DeepSpeed-style precision block (``{"enabled": ...}``), because HF
    TrainingArguments JSON has those names too (with ``"bf16": true``)."""
    if not isinstance(obj, dict):
        return False
    keys = {str(k) for k in obj}
    if keys & _STRONG_KEYS:
        return True
    if keys & {"train_batch_size", "gradient_accumulation_steps", "gradient_clipping", "optimizer", "scheduler"}:
        for name in ("fp16", "bf16", "bfloat16", "amp"):
            block = obj.get(name)
            if isinstance(block, dict) and "enabled" in block:
                return True
    return False
