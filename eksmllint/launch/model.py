"""Typed results of launch analysis.

Rules compare what a launcher *says* (``torchrun --nproc_per_node=8``) with the resources
around it (8 GPUs per pod).  They need three things from every argument: its canonical name,
its value (as written, and resolved where the value can be known without running anything)
and where it came from, so that a finding points at the right line.  These dataclasses carry
exactly that and nothing rule-specific.

Resolution policy: a value is *resolved* only when every piece of it is known literally
(constants, variables assigned unconditionally to constants, SLURM_* variables derived from
``#SBATCH`` directives, arithmetic over those).  Anything else (command substitution, a
variable from the environment, one assigned in an ``if``) leaves ``resolved`` as ``None`` so
rules stay silent instead of guessing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from eksmllint.quantity import DIGITS

_INT_RE = re.compile(rf"[+-]?{DIGITS}")  # longer: not a real setting
#: Launchers that start one agent per node which then forks one process per device.
PER_NODE_LAUNCHERS = frozenset({"torchrun", "deepspeed", "accelerate"})

_TRUE = frozenset({"", "true", "1", "yes", "y", "on"})
_FALSE = frozenset({"false", "0", "no", "n", "off", "none"})


def canonical_name(name: str) -> str:
    """Option name without leading dashes and with ``-`` folded to ``_``.

    torchrun (and most Python argparse launchers) accept ``--nproc-per-node`` and
    ``--nproc_per_node`` alike, so rules must never see the difference.
    """
    return name.lstrip("-").replace("-", "_")


def parse_int(text: str | None) -> int | None:
    """A literal base-10 integer, or None (``"8"`` -> 8, ``"$N"``/``"auto"``/``"1:4"`` -> None)."""
    if text is None:
        return None
    text = text.strip()
    if _INT_RE.fullmatch(text):
        return int(text)
    return None


@dataclass(frozen=True, slots=True)  # hundreds per Slurm script, all kept: no __dict__ each
class ArgPosition:
    """Where an argument was written.

    ``list_name``/``index`` point into the container's ``command`` or ``args`` list (for a
    Slurm script ``list_name`` is ``"script"`` and ``index`` is the argument's index in its
    command).  ``script_line`` is, for a ``bash -c`` script inside a container, the 0-based
    line offset inside that script string (add it to the YAML line of the block scalar), and
    for a Slurm script the 1-based line in the file.
    """

    list_name: str
    index: int
    script_line: int | None = None


@lru_cache(maxsize=8192)
def position_at(list_name: str, index: int, script_line: int | None = None) -> ArgPosition:
    """The (immutable) position, shared: a Slurm run keeps hundreds of arguments a script, and
    their positions repeat (argument k of line n)."""
    return ArgPosition(list_name, index, script_line)


@dataclass(frozen=True)
class Arg:
    """One argument of a command line after shell processing.

    ``value`` is the text after quote removal with unexpanded references kept as written
    (``$SLURM_NTASKS_PER_NODE``); ``resolved`` is the fully expanded text when it is
    literally known, else None.  ``opaque`` marks an unquoted expansion of unknown value
    that could stand for zero or several words; ``option_like`` says whether every value it
    could have starts with ``-`` (or is empty), which lets option parsing step over it.
    """

    value: str
    resolved: str | None
    raw: str
    position: ArgPosition
    opaque: bool = False
    option_like: bool = False

    @property
    def text(self) -> str:
        """Best text for matching: the resolved value if known, else the written value."""
        return self.resolved if self.resolved is not None else self.value

    def at_index(self, index: int) -> Arg:
        """This argument with its position's ``index`` set: ``dataclasses.replace`` without its
        per-field work (called for every argument of every Slurm step)."""
        where = self.position
        arg = object.__new__(Arg)
        arg.__dict__.update(self.__dict__, position=position_at(where.list_name, index, where.script_line))
        return arg


@dataclass(frozen=True)
class Option:
    """A named option (``--nproc_per_node=8``, ``-np 32``, ``--bf16``).

    ``value`` is None for boolean flags.  ``resolved`` is the literal value when known (for
    literal arguments it equals ``value``).  ``position`` is where the option name was
    written; ``value_position`` where its value was (they differ for ``--opt value`` split
    over two lines or list items).
    """

    name: str
    value: str | None
    raw: str
    position: ArgPosition
    resolved: str | None = None
    value_position: ArgPosition | None = None

    def int_value(self) -> int | None:
        """The value as a literal int, or None when it is a flag or not a known integer."""
        return parse_int(self.resolved)

    def is_enabled(self) -> bool | None:
        """Truth of a boolean-ish flag: ``--bf16`` / ``--bf16 true`` -> True,
        ``--bf16=False`` -> False, unknown (``--bf16 $X``) -> None."""
        if self.value is None:
            return True
        if self.resolved is None:
            return None
        low = self.resolved.strip().lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        return None


@dataclass(frozen=True)
class SrunInfo:
    """The ``srun`` step a launcher runs under, with srun's own options (canonical long
    names: ``ntasks_per_node``, ``nodes``, ``ntasks``, ``gpus_per_node`` ...)."""

    options: dict[str, Option]
    position: ArgPosition

    def option(self, name: str) -> Option | None:
        return self.options.get(canonical_name(name))

    def int_option(self, name: str) -> int | None:
        opt = self.option(name)
        return opt.int_value() if opt is not None else None


@dataclass(frozen=True)
class Source:
    """Where an invocation was found: ``kind`` is ``"exec"`` (container command/args used
    directly), ``"shell"`` (a ``bash -c`` script in a container) or ``"slurm"`` (a batch
    script); ``position`` is that of the launcher word; ``text`` the command as written."""

    kind: str
    position: ArgPosition
    text: str


_PRECISION_VALUES = {
    "bf16": "bf16",
    "bf16_mixed": "bf16",
    "bf16_true": "bf16",
    "bfloat16": "bf16",
    "fp16": "fp16",
    "16": "fp16",
    "16_mixed": "fp16",
    "16_true": "fp16",
    "float16": "fp16",
    "half": "fp16",
    "fp8": "fp8",
    "transformer_engine": "fp8",
}


def precision_from_value(value: str | None) -> str | None:
    """Map a ``--precision``/``--mixed_precision`` value to ``bf16``/``fp16``/``fp8``.

    Lightning spells them ``bf16-mixed``/``16-mixed``, accelerate ``bf16``/``fp16``/``no``;
    full precision (``32``, ``no``) maps to None because no rule cares about it.
    """
    if value is None:
        return None
    return _PRECISION_VALUES.get(value.strip().lower().replace("-", "_"))


@dataclass(frozen=True)
class Invocation:
    """One launch: the launcher with its options, the training script and its arguments.

    ``launcher`` is one of ``torchrun``, ``mpirun``, ``deepspeed``, ``accelerate``, ``srun``
    (srun running something that is not a known launcher) or ``python`` (the training
    script started directly).  ``program`` is the launcher as written
    (``python -m torch.distributed.run``).  ``env`` holds variables the command sets for the
    launched processes: leading ``VAR=x``, ``env VAR=x`` and ``mpirun -x VAR[=x]`` (value None
    when only the name is passed through). ``ray_job`` holds the options of the ``ray job submit``
    whose entrypoint the launch is (``address`` names the Ray cluster it runs in).
    """

    launcher: str
    options: dict[str, Option]
    script: str | None
    script_args: dict[str, Option]
    wrappers: tuple[str, ...]
    under_srun: SrunInfo | None
    source: Source
    program: str = ""
    script_module: bool = False
    script_position: ArgPosition | None = None
    positionals: tuple[str, ...] = ()
    env: dict[str, Option] = field(default_factory=dict)
    ray_job: dict[str, Option] | None = None

    def option(self, name: str) -> Option | None:
        """A launcher option by any spelling (``nproc-per-node`` == ``nproc_per_node``)."""
        return self.options.get(canonical_name(name))

    def script_flag(self, name: str) -> Option | None:
        """A training-script argument by any spelling (``--bf16``, ``gradient-accumulation-steps``)."""
        return self.script_args.get(canonical_name(name))

    def deepspeed_config(self) -> Option | None:
        """The DeepSpeed config file passed to the script (HF ``--deepspeed FILE``,
        DeepSpeed ``--deepspeed_config FILE``) or to accelerate (``--deepspeed_config_file``)."""
        for name in ("deepspeed_config", "deepspeed"):
            opt = self.script_args.get(name)
            if opt is not None and opt.value is not None:
                return opt
        opt = self.options.get("deepspeed_config_file")
        if opt is not None and opt.value is not None:
            return opt
        return None

    def precision(self) -> set[str]:
        """Precisions the command line enables: ``--bf16``/``--fp16`` flags that are on,
        ``--precision``/``--mixed_precision`` values, accelerate's ``--mixed_precision``."""
        found: set[str] = set()
        for name in ("bf16", "fp16"):
            opt = self.script_args.get(name)
            if opt is not None and opt.is_enabled() is True:
                found.add(name)
        for opt in (
            self.script_args.get("precision"),
            self.script_args.get("mixed_precision"),
            self.options.get("mixed_precision"),
        ):
            if opt is not None:
                prec = precision_from_value(opt.resolved)
                if prec is not None:
                    found.add(prec)
        return found
