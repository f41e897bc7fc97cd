"""Family 4xx: training precision (fp16 / bf16) against the accelerators and the Neuron/XLA env.

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
unknown: its flags are ignored. Which accelerators a pod runs on comes from the catalogue through
the run's placement answer (:mod:`eksmllint.analysis.placement`); Neuron devices are BF16-capable wherever they land; an NVIDIA pod whose
instance type is not pinned is unknown, and the rules stay silent.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from eksmllint.analysis.commands import CommandWord as Word
from eksmllint.analysis.commands import argument_words, word_location
from eksmllint.analysis.placement import placement
from eksmllint.catalogue import InstanceType
from eksmllint.checks.helpers import MountedFile, fmt_list, mounted_files
from eksmllint.core.finding import (
    Applicability,
    DocPath,
    Finding,
    Fix,
    FixOp,
    Location,
    SetValue,
)
from eksmllint.quantity import DIGITS
from eksmllint.resource import Resource
from eksmllint.workload import (
    GPU,
    NEURON,
    NEURONCORE,
    NEURONDEVICE,
    Container,
    PodTemplate,
)
from eksmllint.yamlpos import YAMLLoadError, load_data

FP16, BF16, FP32 = "fp16", "bf16", "fp32"
NEURON_RESOURCES = (NEURON, NEURONCORE, NEURONDEVICE)

# Origins, in the order findings prefer to point at them.
FLAG, ACCEL_ENV, XLA_ENV, CONFIG, DS_CONFIG = "flag", "accelerate-env", "xla-env", "config", "deepspeed-config"
_ORIGIN_ORDER = {FLAG: 0, ACCEL_ENV: 1, XLA_ENV: 2, CONFIG: 3, DS_CONFIG: 4}

_VALUE_PRECISION = {
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
    resource: Resource = field(repr=False)
    path: DocPath
    word: Word | None = None
    command: int | None = None
    edits: dict[str, tuple[Edit, ...]] = field(default_factory=dict)  # target precision -> edits

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


def flag_uses(resource: Resource, words: list[Word]) -> list[Use]:
    """Precision flags among ``words`` (see the module docstring for the spellings)."""
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
                edits = {}
                if (e := _word_edit(value_word, key, other)) is not None:
                    edits[other] = (e,)
                uses.append(Use(key, FLAG, shown, resource, w.path, w, w.command, edits))
            elif key in ("precision", "mixed_precision"):
                value_word = w
                if not eq:
                    if nxt is None or nxt.text.startswith("-"):
                        continue
                    value, value_word = nxt.text, nxt
                prec = _VALUE_PRECISION.get(value.strip().lower())
                if prec is None:
                    continue
                shown = w.text if eq else f"{w.text} {value}"
                uses.append(
                    Use(prec, FLAG, shown, resource, w.path, w, w.command, _value_edits(key, value_word, value))
                )
        elif (m := _HYDRA.match(text)) is not None:
            key = m.group(1).replace("-", "_")
            prec = _VALUE_PRECISION.get(m.group(2).strip().lower())
            if prec is not None:
                uses.append(Use(prec, FLAG, text, resource, w.path, w, w.command, _value_edits(key, w, m.group(2))))
    return uses


def _unambiguous(uses: list[Use]) -> list[Use]:
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
        return _VALUE_PRECISION.get(value.strip().lower())
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
        edits = {}
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


# --- configs held in mounted ConfigMaps --------------------------------------------------------


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
            for key, prec in ((FP16, FP16), (BF16, BF16), ("bfloat16", BF16)):
                section = data.get(key)
                enabled = section.get("enabled") if isinstance(section, dict) else None
                if enabled is True or (isinstance(enabled, str) and enabled.strip().lower() == "true"):
                    uses.append(Use(prec, DS_CONFIG, f"DeepSpeed {key}.enabled: true {where}", f.configmap, path))
        else:
            mp = data.get("mixed_precision")
            prec = _VALUE_PRECISION.get(mp.strip().lower()) if isinstance(mp, str) else None
            if prec is not None:
                uses.append(Use(prec, CONFIG, f"accelerate mixed_precision: {mp} {where}", f.configmap, path))
    return uses


@dataclass
class ContainerPrecision:
    container: Container
    uses: list[Use]

    def requested(self) -> list[Use]:
        """What the training code is told to use (everything except the XLA casts)."""
        return [u for u in self.uses if u.origin != XLA_ENV]

    def of(self, precision: str, uses: Iterable[Use] | None = None) -> list[Use]:
        return [u for u in (self.uses if uses is None else uses) if u.precision == precision]


def analyse(run, c: Container) -> ContainerPrecision:
    """The container's precision choices; computed once per container and run (EML401-404 all
    ask). Kept in the run, not on the container: the answer reads the run's ConfigMaps, and the
    webhook reuses its context's containers in every request's run."""
    return run.once("precision-of-container", c, _analyse)


def _analyse(run, c: Container) -> ContainerPrecision:
    words = container_words(c)
    uses = _unambiguous(flag_uses(c.template.resource, words))
    uses += env_uses(c, words) + config_uses(run, c, words)
    uses.sort(key=lambda u: _ORIGIN_ORDER[u.origin])
    return ContainerPrecision(c, uses)


# --- where the pod runs ------------------------------------------------------------------------


@dataclass(frozen=True)
class Accelerators:
    bf16: bool | None  # None: unknown or mixed
    description: str = ""


def _device_templates(t: PodTemplate) -> list[PodTemplate]:
    """Templates whose devices run ``t``'s command: itself, or for an accelerator-less MPIJob
    launcher (mpirun starts the script on the workers) the workload's accelerated templates."""
    if t.accelerator_total > 0:
        return [t]
    if t.role == "launcher":
        return [u for u in t.workload.templates if u is not t and u.accelerator_total > 0]
    return []


def _describe(types: Iterable[InstanceType]) -> str:
    types = list(types)
    names = sorted({it.accelerator for it in types})
    return f"{'/'.join(names)} ({fmt_list(sorted(it.name for it in types), 3)})"


def accelerators(run, t: PodTemplate) -> Accelerators:
    """Whether the template's accelerators support bf16; computed once per template and run
    (it depends on the run's NodePools)."""
    return run.once("bf16-of-template", t, _accelerators)


def _accelerators(run, t: PodTemplate) -> Accelerators:
    verdicts: list[Accelerators] = []
    for u in _device_templates(t):
        neuron = {r: n for r, n in u.accelerators.items() if r in NEURON_RESOURCES}
        if neuron:
            types = placement(run, u).instance_types
            types = [it for it in types or () if it.is_neuron]
            desc = (
                _describe(types)
                if types
                else "Neuron devices (" + ", ".join(f"{r}: {n}" for r, n in neuron.items()) + ")"
            )
            verdicts.append(Accelerators(True, desc))
        elif u.accelerators.get(GPU):
            types = [it for it in placement(run, u).instance_types or () if it.is_nvidia]
            flags = {it.bf16 for it in types}
            verdicts.append(Accelerators(flags.pop() if len(flags) == 1 else None, _describe(types) if types else ""))
        else:
            verdicts.append(Accelerators(None))
    if not verdicts or any(v.bf16 is None for v in verdicts) or len({v.bf16 for v in verdicts}) > 1:
        return Accelerators(None)
    return Accelerators(verdicts[0].bf16, "; ".join(dict.fromkeys(v.description for v in verdicts)))


def uses_neuron(t: PodTemplate) -> bool:
    return any(r in NEURON_RESOURCES for u in _device_templates(t) for r in u.accelerators)


# --- reporting ---------------------------------------------------------------------------------


def use_location(u: Use) -> Location:
    """Location of a use: the word itself when it is one, else its document path."""
    if u.word is None:
        return u.resource.location(u.path)
    return word_location(u.resource, u.word)


def report(ctx, u: Use, message: str, *, fix: Fix | None = None, related: Iterable[Use] = ()) -> Finding:
    f = ctx.report(u.resource, u.path, message, fix=fix, related=[use_location(r) for r in related])
    return f.with_(location=use_location(u))


def combine_edits(edits: Iterable[Edit], template: PodTemplate) -> tuple[FixOp, ...]:
    """One SetValue per element: edits of the same script are applied together (right to left)."""
    whole: dict[DocPath, str] = {}
    partial: dict[DocPath, list[Edit]] = {}
    for e in edits:
        if e.start is None:
            whole[e.path] = e.new
        else:
            partial.setdefault(e.path, []).append(e)
    ops: list[FixOp] = [SetValue(p, v) for p, v in whole.items()]
    for p, group in partial.items():
        text = template.resource.get(p)
        if not isinstance(text, str):
            continue
        for e in sorted(group, key=lambda e: e.start or 0, reverse=True):
            assert e.start is not None
            if text[e.start : e.start + len(e.old)] != e.old:
                return ()
            text = text[: e.start] + e.new + text[e.start + len(e.old) :]
        ops.append(SetValue(p, text))
    return tuple(ops)


def switch_fix(t: PodTemplate, uses: list[Use], target: str, applicability: Applicability) -> Fix | None:
    """A fix switching every use to ``target``; None unless all of them can be rewritten."""
    edits: list[Edit] = []
    for u in uses:
        e = u.rewrite(target)
        if e is None:
            return None
        edits.extend(e)
    ops = combine_edits(edits, t)
    if not ops:
        return None
    shown = fmt_list([u.text for u in uses], 3)
    return Fix(f"Switch {shown} to {target}", ops, applicability)


def _texts(uses: list[Use]) -> str:
    return fmt_list([u.text for u in uses], 3)


def _who(c: Container, u: Use) -> str:
    """The container, naming its workload when the finding sits in another resource (a ConfigMap)."""
    t = c.template
    return f"container {c.name!r}" if u.resource is t.resource else f"container {c.name!r} of {t.display()}"


# --- EML401 prefer-bf16 ------------------------------------------------------------------------


def _unsupported_choice(
    ctx, t: PodTemplate, *, bf16_capable: bool, chosen: str, other: str, applicability: Applicability, why: str
):
    """EML401/EML402 in one place: containers that select ``chosen`` (and not ``other``) on
    accelerators whose bf16 support is ``bf16_capable``; the fix switches them to ``other``."""
    if not t.is_training:
        return
    acc = accelerators(ctx.run, t)
    if acc.bf16 is not bf16_capable:
        return
    for c in t.containers:
        p = analyse(ctx.run, c)
        req = p.requested()
        uses = p.of(chosen, req)
        if not uses or p.of(other, req):
            continue
        yield report(
            ctx,
            uses[0],
            why.format(who=_who(c, uses[0]), texts=_texts(uses), acc=acc.description),
            fix=switch_fix(t, uses, other, applicability),
            related=uses[1:],
        )


def prefer_bf16(ctx, t: PodTemplate):
    yield from _unsupported_choice(
        ctx,
        t,
        bf16_capable=True,
        chosen=FP16,
        other=BF16,
        applicability=Applicability.SAFE,
        why="{who} trains in fp16 ({texts}) on {acc}, which support bf16: it keeps fp32's exponent "
        "range, so it needs no loss scaling and does not overflow to inf/NaN",
    )


# --- EML402 bf16-unsupported -------------------------------------------------------------------


def bf16_unsupported(ctx, t: PodTemplate):
    yield from _unsupported_choice(
        ctx,
        t,
        bf16_capable=False,
        chosen=BF16,
        other=FP16,
        applicability=Applicability.UNSAFE,
        why="{who} requests bf16 ({texts}) but lands on {acc}, which have no bf16 support: "
        "training fails to start or falls back to slow emulation",
    )


# --- EML403 precision-conflict -----------------------------------------------------------------


def precision_conflict(ctx, t: PodTemplate):
    if not t.is_training:
        return
    for c in t.containers:
        p = analyse(ctx.run, c)
        launch = [u for u in p.requested() if u.origin != DS_CONFIG]
        groups = [launch]
        by_config: dict[tuple, list[Use]] = {}
        for u in p.uses:
            if u.origin == DS_CONFIG:
                by_config.setdefault((u.resource.key, u.path), []).append(u)
        groups += list(by_config.values())
        for group in groups:
            fp16, bf16 = p.of(FP16, group), p.of(BF16, group)
            if not fp16 or not bf16:
                continue
            first, second = (fp16, bf16) if group.index(fp16[0]) <= group.index(bf16[0]) else (bf16, fp16)
            yield report(
                ctx,
                second[0],
                f"{_who(c, second[0])} enables both fp16 ({_texts(fp16)}) and bf16 ({_texts(bf16)}); only one "
                "can take effect (HF Trainer and DeepSpeed reject the combination, other launchers silently pick one)",
                related=first + second[1:],
            )


# --- EML404 neuron-precision-env ---------------------------------------------------------------


#: Neuron SDK release from which torch-xla ignores XLA_USE_BF16 / XLA_DOWNCAST_BF16 (Neuron 2.24 was
#: the last to support them: announce-eos-bf16-vars; Torch-XLA 2.8 removed them).
XLA_BF16_ENV_IGNORED_FROM = (2, 25)
_NEURON_SDK_TAG = re.compile(rf"[-_.]sdk({DIGITS})\.({DIGITS})(?:\.\d+)?(?:[-_.]|$)")


def neuron_sdk_of_image(image: str | None) -> tuple[int, int] | None:
    """Neuron SDK (major, minor) a Neuron DLC tag names (``...-neuronx-py310-sdk2.20.0-ubuntu20.04``)."""
    tag = image.rsplit("/", 1)[-1].partition(":")[2] if isinstance(image, str) else ""
    m = _NEURON_SDK_TAG.search(tag)
    return (int(m.group(1)), int(m.group(2))) if m else None


def neuron_precision_env(ctx, t: PodTemplate):
    """Without an SDK version in the image tag, the current Neuron SDK (2.25 or later) is assumed."""
    if not t.is_training or not uses_neuron(t):
        return
    for c in t.containers:
        p = analyse(ctx.run, c)
        xla = [u for u in p.uses if u.origin == XLA_ENV and u.precision == BF16]
        if not xla:
            continue
        sdk = neuron_sdk_of_image(c.image)
        if sdk is None or sdk >= XLA_BF16_ENV_IGNORED_FROM:
            basis = (
                f"the image names Neuron SDK {sdk[0]}.{sdk[1]}"
                if sdk
                else "assumed: the image tag names no Neuron SDK version, so the current SDK is assumed"
            )
            yield report(
                ctx,
                xla[0],
                f"{_who(c, xla[0])} sets {_texts(xla)}, which Neuron SDK 2.25 and later ignore ({basis}): "
                "torch-xla no longer casts to bf16, so the run uses whatever precision autocast, "
                "model.to(torch.bfloat16) or its flags select; remove the variable and choose bf16 there",
                related=xla[1:],
            )
            continue
        req = p.requested()
        if p.of(BF16, req):
            continue
        other = [u for u in req if u.precision in (FP16, FP32)]
        if not other:
            continue
        u = other[0]
        if u.precision == FP16:
            asked, consequence = "fp16", "the model trains in bf16 while the code and its fp16 loss scaling assume fp16"
        else:
            asked, consequence = "full fp32 precision", "the model trains in bf16 although fp32 was asked for"
        yield report(
            ctx,
            u,
            f"{_who(c, u)} asks for {asked} ({u.text}) but {_texts(xla)} makes torch-xla cast fp32 "
            f"tensors to bf16 on the Neuron devices, so {consequence}",
            related=other[1:] + xla,
        )
