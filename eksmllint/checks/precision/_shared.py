"""Helpers shared by the precision rules: each container's precision choices (computed once per run),
whether the accelerators a pod lands on support bf16, and how findings and fixes point at a choice.

Which accelerators a pod runs on comes from the catalogue through the run's placement answer
(:mod:`eksmllint.analysis.placement`); Neuron devices are BF16-capable wherever they land; an NVIDIA
pod whose instance type is not pinned is unknown, and the rules stay silent.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from eksmllint.analysis.commands import word_location
from eksmllint.analysis.placement import placement
from eksmllint.catalogue import InstanceType
from eksmllint.checks.helpers import configmap_refs, find_configmap, fmt_list
from eksmllint.checks.precision._configs import config_uses
from eksmllint.checks.precision._slurm import script_choices
from eksmllint.checks.precision._uses import (
    ORIGIN_ORDER,
    XLA_ENV,
    Edit,
    Use,
    container_words,
    env_uses,
    flag_uses,
    unambiguous,
)
from eksmllint.core.finding import Applicability, DocPath, Finding, Fix, FixOp, Location, SetValue
from eksmllint.workload import GPU, NEURON, NEURONCORE, NEURONDEVICE, Container, PodTemplate

if TYPE_CHECKING:
    pass

NEURON_RESOURCES = (NEURON, NEURONCORE, NEURONDEVICE)


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
    uses = unambiguous(flag_uses(c.template.resource, words))
    uses += env_uses(c, words) + config_uses(run, c)
    uses.sort(key=lambda u: ORIGIN_ORDER[u.origin])
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
            types = [it for it in placement(run, u).instance_types or () if it.is_neuron]
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
        return u.home.location(u.path)
    return word_location(u.home, u.word)


def report(
    ctx, u: Use, message: str, *, fix: Fix | None = None, related: Iterable[Use] = (), detail: str | None = None
) -> Finding:
    f = ctx.report(u.home, u.path, message, fix=fix, related=[use_location(r) for r in related], detail=detail)
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


def texts_of(uses: list[Use]) -> str:
    return fmt_list([u.text for u in uses], 3)


def who(c: Container, u: Use) -> str:
    """The container, naming its workload when the finding sits in another resource (a ConfigMap)."""
    t = c.template
    return f"container {c.name!r}" if u.resource is t.resource else f"container {c.name!r} of {t.display()}"


# --- EML401 / EML402 ----------------------------------------------------------------------------


def judged_templates(ctx, run) -> Iterator[PodTemplate]:
    """The templates EML401/EML402 judge: those of the classes the rule judges, except context
    workloads (--context, the webhook's cluster view) that mount no ConfigMap of the run's own: a
    finding about a context workload is reported only when it sits in an admitted ConfigMap."""
    for t in run.templates:
        if ctx.judges(t) and (not t.resource.doc.file.context_only or _mounts_own_configmap(run, t)):
            yield t


def _mounts_own_configmap(run, t: PodTemplate) -> bool:
    for _, v in t.volumes:
        for ref in configmap_refs(v):
            cm = find_configmap(run, ref.get("name"), t.resource.namespace)
            if cm is not None and not cm.doc.file.context_only:
                return True
    return False


def unsupported_everywhere(
    ctx, run, *, bf16_capable: bool, chosen: str, other: str, applicability: Applicability, what: str, why: str
) -> Iterator[Finding]:
    """EML401/EML402 over the run: every judged template (:func:`unsupported_choice`) and every
    Slurm batch script on a partition of known hardware (no fix there)."""
    for t in judged_templates(ctx, run):
        yield from unsupported_choice(
            ctx,
            t,
            bf16_capable=bf16_capable,
            chosen=chosen,
            other=other,
            applicability=applicability,
            what=what,
            why=why,
        )
    yield from script_choices(ctx, bf16_capable=bf16_capable, chosen=chosen, other=other, what=what, why=why)


def unsupported_choice(
    ctx,
    t: PodTemplate,
    *,
    bf16_capable: bool,
    chosen: str,
    other: str,
    applicability: Applicability,
    what: str,
    why: str,
):
    """EML401/EML402 in one place: containers that select ``chosen`` (and not ``other``) on
    accelerators whose bf16 support is ``bf16_capable``; the fix switches them to ``other``.
    ``what`` (the message) and ``why`` (its detail) are formatted with ``who``, ``texts``, ``acc``."""
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
            what.format(who=who(c, uses[0]), texts=texts_of(uses), acc=acc.description),
            fix=switch_fix(t, uses, other, applicability),
            related=uses[1:],
            detail=why.format(who=who(c, uses[0]), texts=texts_of(uses), acc=acc.description),
        )
