"""What a training container asks for: fp16, bf16 or fp32, from its flags and env (configs: _configs).

What a container asks for is read from what the manifest shows, never guessed:

- the words of the programs the container runs (:mod:`eksmllint.analysis.commands`: argv, or the
  simple commands of a ``bash -c`` script; ``echo``/``printf`` text, comments and here-documents
  written to files are not read): ``--fp16``, ``--bf16 [true|false]``,
  ``--mixed_precision fp16`` (accelerate), ``--precision 16-mixed`` (Lightning), Hydra overrides
  ``trainer.precision=bf16``; Kubernetes ``$(VAR)`` and shell ``$VAR`` references are expanded
  from the container's literal env;
- env: ``ACCELERATE_MIXED_PRECISION``, and the torch-xla casts ``XLA_USE_BF16`` /
  ``XLA_DOWNCAST_BF16`` (container env, or ``VAR=value`` words such as ``export``/``mpirun -x``);
- a DeepSpeed JSON (``fp16.enabled`` / ``bf16.enabled``) or accelerate config (``mixed_precision``)
  held in a ConfigMap key the container mounts and names on its command line (``--deepspeed``,
  ``--deepspeed_config``, ``--config_file``), or the only DeepSpeed config it mounts when it
  launches DeepSpeed without naming a file.

A script whose commands disagree (``--fp16`` in one branch, ``--bf16`` in another) is treated as
unknown: its flags are ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from eksmllint.analysis.commands import CommandWord as Word
from eksmllint.analysis.commands import argument_words
from eksmllint.core.finding import DocPath
from eksmllint.resource import Resource
from eksmllint.workload import Container

FP16, BF16, FP32 = "fp16", "bf16", "fp32"

# Origins, in the order findings prefer to point at them.
FLAG, ACCEL_ENV, XLA_ENV, CONFIG, DS_CONFIG = "flag", "accelerate-env", "xla-env", "config", "deepspeed-config"
ORIGIN_ORDER = {FLAG: 0, ACCEL_ENV: 1, XLA_ENV: 2, CONFIG: 3, DS_CONFIG: 4}

VALUE_PRECISION = {
    **dict.fromkeys(("fp16", "16", "16-mixed", "16_mixed", "16-true", "16_true", "float16", "half"), FP16),
    **dict.fromkeys(("bf16", "bf16-mixed", "bf16_mixed", "bf16-true", "bf16_true", "bfloat16"), BF16),
    **dict.fromkeys(("no", "32", "32-true", "32_true", "fp32", "float32"), FP32),
}
#: Spelling-preserving value rewrites: accelerate / DeepSpeed-style names and Lightning-style ones.
_TO_BF16 = {
    "fp16": "bf16",
    "16": "bf16",
    "16-mixed": "bf16-mixed",
    "16_mixed": "bf16_mixed",
    "16-true": "bf16-true",
    "16_true": "bf16_true",
    "float16": "bfloat16",
}
_TO_FP16_ACCELERATE = {"bf16": "fp16", "bfloat16": "float16", "bf16-mixed": "16-mixed", "bf16-true": "16-true"}
_TO_FP16_LIGHTNING = {
    "bf16": "16",
    "bfloat16": "float16",
    "bf16-mixed": "16-mixed",
    "bf16_mixed": "16_mixed",
    "bf16-true": "16-true",
    "bf16_true": "16_true",
}
_TRUE = frozenset({"true", "1", "yes", "y", "on"})
_FALSE = frozenset({"false", "0", "no", "n", "off"})
_PRECISION_ENV = ("ACCELERATE_MIXED_PRECISION", "XLA_USE_BF16", "XLA_DOWNCAST_BF16")

_HYDRA = re.compile(r"^\+{0,2}(?:[A-Za-z_][\w-]*\.)+(precision|mixed_precision|mixed-precision)=(.*)$")
_ENV_WORD = re.compile(r"^(" + "|".join(_PRECISION_ENV) + r")=(.*)$")

# --- words of a container's command line -------------------------------------------------------


def container_words(c: Container) -> list[Word]:
    """The words the container's programs read (the one command reader: echo/printf text,
    comments and here-documents are not among them)."""
    return argument_words(c)


# --- precision uses ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Edit:
    """Replace ``old`` by ``new`` at ``start`` of a script element, or set a whole value."""

    path: DocPath
    new: str
    start: int | None = None
    old: str = ""


@dataclass(frozen=True)
class Use:
    """One place that selects a precision."""

    precision: str  # fp16 | bf16 | fp32
    origin: str  # flag | accelerate-env | xla-env | config (accelerate) | deepspeed-config
    text: str  # as shown in messages
    resource: Resource | None = field(repr=False)  # None: a Slurm batch script's word
    path: DocPath
    word: Word | None = None
    command: int | None = None
    edits: dict[str, tuple[Edit, ...]] = field(default_factory=dict)  # target precision -> edits

    @property
    def home(self) -> Resource:
        """The resource the use is written in (a workload's or a ConfigMap)."""
        if self.resource is None:
            raise ValueError("a use in a Slurm script is in no resource")
        return self.resource

    def rewrite(self, target: str) -> tuple[Edit, ...] | None:
        return self.edits.get(target)


def _bool_word(text: str) -> bool | None:
    low = text.strip().lower()
    return True if low in _TRUE else False if low in _FALSE else None


def _word_edit(w: Word, old: str, new: str) -> Edit | None:
    """Replace the last ``old`` in the word as written (None when it is not written literally)."""
    at = w.raw.rfind(old)
    if at < 0:
        return None
    new_raw = w.raw[:at] + new + w.raw[at + len(old) :]
    if w.start is None:
        return Edit(w.path, new_raw)
    return Edit(w.path, new_raw, w.start, w.raw)


def _value_edits(key: str, w: Word, value: str) -> dict[str, tuple[Edit, ...]]:
    low = value.strip()
    out: dict[str, tuple[Edit, ...]] = {}
    if low in _TO_BF16 and (e := _word_edit(w, low, _TO_BF16[low])):
        out[BF16] = (e,)
    to_fp16 = _TO_FP16_LIGHTNING if key == "precision" else _TO_FP16_ACCELERATE
    if low in to_fp16 and (e := _word_edit(w, low, to_fp16[low])):
        out[FP16] = (e,)
    return out


def flag_uses(resource: Resource | None, words: list[Word]) -> list[Use]:
    """Precision flags among ``words`` (see the module docstring for the spellings); ``resource``
    is None for the words of a Slurm batch script."""
    uses: list[Use] = []
    for i, w in enumerate(words):
        nxt = words[i + 1] if i + 1 < len(words) and words[i + 1].command == w.command else None
        text = w.text
        if text.startswith("--"):
            name, eq, value = text[2:].partition("=")
            key = name.replace("-", "_").lower().rsplit(".", 1)[-1]
            if key in (FP16, BF16):
                shown, value_word = w.text, w
                if eq:
                    enabled = _bool_word(value)
                elif nxt is not None and _bool_word(nxt.text) is not None:
                    enabled, shown = _bool_word(nxt.text), f"{w.text} {nxt.text}"
                else:
                    enabled = True
                if enabled is not True:
                    continue
                other = BF16 if key == FP16 else FP16
                edits: dict[str, tuple[Edit, ...]] = {}
                if (e := _word_edit(value_word, key, other)) is not None:
                    edits[other] = (e,)
                uses.append(Use(key, FLAG, shown, resource, w.path, w, w.command, edits))
            elif key in ("precision", "mixed_precision"):
                value_word = w
                if not eq:
                    if nxt is None or nxt.text.startswith("-"):
                        continue
                    value, value_word = nxt.text, nxt
                prec = VALUE_PRECISION.get(value.strip().lower())
                if prec is None:
                    continue
                shown = w.text if eq else f"{w.text} {value}"
                uses.append(
                    Use(prec, FLAG, shown, resource, w.path, w, w.command, _value_edits(key, value_word, value))
                )
        elif (m := _HYDRA.match(text)) is not None:
            key = m.group(1).replace("-", "_")
            prec = VALUE_PRECISION.get(m.group(2).strip().lower())
            if prec is not None:
                uses.append(Use(prec, FLAG, text, resource, w.path, w, w.command, _value_edits(key, w, m.group(2))))
    return uses


def unambiguous(uses: list[Use]) -> list[Use]:
    """Drop the script flags when different commands of a script ask for different precisions
    (``if ...; then --fp16; else --bf16; fi``): which one runs is not knowable statically."""
    by_script: dict[DocPath, list[Use]] = {}
    for u in uses:
        if u.word is not None and u.word.start is not None:
            by_script.setdefault(u.word.path, []).append(u)
    drop: set[int] = set()
    for group in by_script.values():
        per_command: dict[int, set[str]] = {}
        for u in group:
            per_command.setdefault(u.command or 0, set()).add(u.precision)
        if len({frozenset(p) for p in per_command.values()}) > 1:
            drop.update(id(u) for u in group)
    return [u for u in uses if id(u) not in drop]


def _env_precision(name: str, value: str) -> str | None:
    if name == "ACCELERATE_MIXED_PRECISION":
        return VALUE_PRECISION.get(value.strip().lower())
    return BF16 if value.strip().lower() in ("1", "true") else None


def env_uses(c: Container, words: list[Word]) -> list[Use]:
    """The effective value of each precision env var: a ``VAR=value`` word on the command line
    (``export``, ``env``, ``mpirun -x``) overrides the container env."""
    resource = c.template.resource
    found: dict[str, Use | None] = {}
    for name in _PRECISION_ENV:
        value = c.env.get(name)
        idx = c.env_index(name)
        if value is None or idx is None:
            continue
        prec = _env_precision(name, value)
        if prec is None:
            found[name] = None
            continue
        origin = ACCEL_ENV if name == "ACCELERATE_MIXED_PRECISION" else XLA_ENV
        vpath = c.path + ("env", idx, "value")
        edits: dict[str, tuple[Edit, ...]] = {}
        if origin == ACCEL_ENV:
            low = value.strip()
            for target, table in ((BF16, _TO_BF16), (FP16, _TO_FP16_ACCELERATE)):
                if low in table:
                    edits[target] = (Edit(vpath, table[low]),)
        found[name] = Use(prec, origin, f"{name}={value}", resource, vpath, None, None, edits)
    for w in words:
        m = _ENV_WORD.match(w.text)
        if m is None:
            continue
        name, value = m.group(1), m.group(2)
        prec = _env_precision(name, value)
        if prec is None:
            found[name] = None
            continue
        origin = ACCEL_ENV if name == "ACCELERATE_MIXED_PRECISION" else XLA_ENV
        edits = {}
        if origin == ACCEL_ENV:
            for target, table in ((BF16, _TO_BF16), (FP16, _TO_FP16_ACCELERATE)):
                if value in table and (e := _word_edit(w, value, table[value])):
                    edits[target] = (e,)
        found[name] = Use(prec, origin, w.text, resource, w.path, w, w.command, edits)
    return [u for u in found.values() if u is not None]
