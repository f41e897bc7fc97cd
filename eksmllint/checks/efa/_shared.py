"""Helpers shared by several EFA rules: where a pod lands and how many EFA devices its nodes get,
how findings name pods and instance types, and the transport settings (env and launcher
arguments) that steer NCCL/libfabric.

Where a template lands and which instance types it gets on each NodePool is the run's one
placement answer (:mod:`eksmllint.analysis.placement`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from eksmllint.analysis.commands import container_calls
from eksmllint.analysis.placement import Placement, placement
from eksmllint.catalogue import InstanceType
from eksmllint.catalogue.network_interfaces import network_interface_facts
from eksmllint.checks.helpers import fmt_list
from eksmllint.core.finding import DocPath, Location
from eksmllint.resource import Resource
from eksmllint.scheduling import NodePoolView
from eksmllint.workload import EFA, Container, PodTemplate

if TYPE_CHECKING:
    from eksmllint.core.context import LintRun, RuleContext

REQUIREMENTS: DocPath = ("spec", "template", "spec", "requirements")


def pool_of(run: LintRun, resource: Resource) -> NodePoolView | None:
    return run.nodepool_of(resource)


def types_on(run: LintRun, t: PodTemplate, pool: NodePoolView) -> tuple[InstanceType, ...] | None:
    """Catalogue instance types ``t`` can get on ``pool`` with all its accelerators (the run's
    placement answer); None when unknown."""
    return placement(run, t).hosting_types(pool)


# --- EFA devices per node (instance maximum, or the EC2NodeClass's networkInterfaces) ------------


@dataclass(frozen=True)
class ClassEfa:
    """The EFA devices every node of a NodePool gets from its EC2NodeClass ``networkInterfaces``."""

    node_class: str
    devices: int

    def describe(self) -> str:
        listed = f"{self.devices} efa-only" if self.devices else "no efa-only"
        return f"EC2NodeClass {self.node_class!r} lists {listed} networkInterfaces"


def class_efa(run: LintRun, pool: NodePoolView) -> ClassEfa | None:
    """What the pool's EC2NodeClass sets with ``spec.networkInterfaces`` (Karpenter launches every
    instance with exactly those interfaces, from the release in ``network_interfaces.yaml``); None
    when the class is not in the run, lists no interfaces (the instance maximum applies), the list
    cannot be read, or the platform's Karpenter predates the field."""
    return run.once("efa-node-class", pool, _class_efa)


def _class_efa(run: LintRun, pool: NodePoolView) -> ClassEfa | None:
    facts = network_interface_facts()
    name = pool.node_class_name
    if not name or not run.settings.platform.at_least("karpenter", facts.since_karpenter):
        return None
    counts = {facts.efa_devices(nc.get(("spec", "networkInterfaces"))) for nc in pool.node_class(run)}
    if len(counts) != 1:
        return None  # not in the run, or several classes of that name that disagree
    devices = counts.pop()
    return None if devices is None else ClassEfa(name, devices)


@dataclass(frozen=True)
class EfaOffer:
    """An instance type a pod can land on and the EFA devices a node of it gets there."""

    instance: InstanceType
    devices: int
    limited_by: ClassEfa | None = None  # set when the node class attaches fewer than the maximum


def efa_offers(run: LintRun, t: PodTemplate) -> tuple[EfaOffer, ...] | None:
    """The nodes ``t`` can land on (the run's placement answer) with their EFA devices: the
    instance maximum, capped by the EC2NodeClass of each pool that lists networkInterfaces.
    None when the instance types are unknown (rules stay silent)."""
    # Templates that agree on where they land share one placement answer, and so one offer list.
    return run.once("efa-offers", placement(run, t), _offers)


def _offers(run: LintRun, where: Placement) -> tuple[EfaOffer, ...] | None:
    if not where.present:
        types = where.own_types
        return None if types is None else tuple(EfaOffer(it, it.max_efa) for it in types)
    offers: dict[tuple[str, int], EfaOffer] = {}
    for pool in where.usable:
        types = where.types_on(pool)
        if types is None:
            return None
        cls = class_efa(run, pool)
        for it in types:
            if cls is not None and cls.devices < it.max_efa:
                offer = EfaOffer(it, cls.devices, cls)
            else:
                offer = EfaOffer(it, it.max_efa)
            offers.setdefault((it.name, offer.devices), offer)
    return tuple(offers.values())


def offered_types(offers: Iterable[EfaOffer]) -> tuple[InstanceType, ...]:
    return tuple({o.instance.name: o.instance for o in offers}.values())


# --- a NodePool judged by its own definition (a platform repository linted without workloads) --

#: Words in a NodePool's name, template labels or taints that say it is for training or for EFA.
_TRAINING_WORDS = frozenset({"train", "training", "trainer", "pretrain", "pretraining", "finetune", "finetuning"})
_EFA_WORDS = frozenset({"efa"})
_WORD_SPLIT = re.compile(r"[^a-z0-9]+")


def _marked(text: str) -> bool:
    return bool(set(_WORD_SPLIT.split(text.lower())) & (_TRAINING_WORDS | _EFA_WORDS))


def efa_training_pool(run: LintRun, pool: NodePoolView) -> str | None:
    """Why ``pool`` is evidently a pool for multi-node EFA training by its own definition, or None.

    Precision first, both must hold: every instance type it offers is known, accelerated, EFA-capable
    and not Inferentia; and it says what it is for: its EC2NodeClass attaches efa-only interfaces,
    or its name, a template label or a taint names training or EFA (``gpu-training``,
    ``workload: llm-pretrain``, ``vpc.amazonaws.com/efa:NoSchedule``). An accelerator family alone
    is not enough (trn1 and p5 pools serve inference too)."""
    types = pool.instance_types
    if not types or not all(it.is_efa_capable and not it.family.startswith("inf") for it in types):
        return None
    cls = class_efa(run, pool)
    why: str | None = _training_mark(pool)
    if cls is not None and cls.devices > 0:
        why = f"its EC2NodeClass {cls.node_class!r} attaches {cls.devices} efa-only interfaces"
    if why is None:
        return None
    return (
        f"it offers only EFA-capable accelerated instance types, {fmt_list(sorted(it.name for it in types))}, and {why}"
    )


def _training_mark(pool: NodePoolView) -> str | None:
    for taint in pool.taints:
        if _marked(taint.key) or _marked(taint.value):
            return f"taints its nodes {taint.key}{'=' + taint.value if taint.value else ''}:{taint.effect}"
    for key, value in pool.labels.items():
        if _marked(key) or _marked(value):
            return f"labels its nodes {key}={value}"
    if _marked(pool.name):
        return "its name says so"
    return None


def accelerator_tenants(run: LintRun, pool: NodePoolView) -> bool:
    """Some pod of the run that requests accelerators or EFA lands on ``pool`` (a DaemonSet's pods
    do not tell what a pool is for; a pod a taint keeps off does not land there: EML701's case)."""
    return id(pool) in run.once("efa-aimed-pools", run, _aimed_pools)


def _aimed_pools(run: LintRun, _: object) -> frozenset[int]:
    answers = {
        id(where): where
        for t in run.templates
        if t.resource.kind != "DaemonSet" and (t.accelerator_total or t.device_count(EFA))
        for where in (placement(run, t),)
    }  # templates that land alike share one answer: each is read once
    return frozenset(id(p) for where in answers.values() for p in where.usable)


def judged_by_definition(ctx: RuleContext, pool: NodePoolView) -> str | None:
    """For a pool no accelerator pod of the run lands on (a platform repository linted alone):
    why it is a pool for multi-node EFA training, said with the fact that no workload was seen;
    None when a workload was seen, the evidence is thin, or the rule's ``unused-training-pools``
    option is off."""
    if not ctx.options.get("unused-training-pools", True) or accelerator_tenants(ctx.run, pool):
        return None
    why = efa_training_pool(ctx.run, pool)
    if why is None:
        return None
    return (
        f"a pool for multi-node EFA training by its own definition ({why}; no pod of this run that "
        "requests accelerators lands on it)"
    )


def template_location(t: PodTemplate) -> Location:
    return t.resource.location(t.path)


def who(templates: list[PodTemplate]) -> str:
    return fmt_list([t.display() for t in templates], limit=2)


def type_list(types: Iterable[InstanceType], attr: str = "max_efa") -> str:
    return fmt_list([f"{it.name} ({getattr(it, attr)})" for it in sorted(types, key=lambda i: i.name)])


def efa_containers(t: PodTemplate) -> list[Container]:
    return [c for c in t.containers if c.count(EFA) > 0]


# --- transport settings (EML103 reads FI_PROVIDER, EML104 every variable) ------------------

TRANSPORT_VARS = ("FI_PROVIDER", "NCCL_NET", "NCCL_NET_PLUGIN")
_ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.S)


@dataclass
class EnvSetting:
    name: str
    value: str
    path: DocPath
    how: str  # "env", "mpirun -x", "export"


def env_settings(c: Container) -> Iterator[EnvSetting]:
    for i, e in enumerate(c.env_list):
        name, value = e.get("name"), e.get("value")
        if name in TRANSPORT_VARS and "valueFrom" not in e and value is not None:
            yield EnvSetting(name, str(value), c.path + ("env", i, "value"), "env")


def argv_settings(c: Container) -> Iterator[EnvSetting]:
    """``mpirun -x VAR=value`` / ``-genv VAR value`` / ``export VAR=value`` among the arguments the
    container's programs read (:mod:`eksmllint.analysis.commands`: not echo text, comments or
    here-documents); a setting pairs with the word after it only within one command."""
    for call in container_calls(c):
        if not call.reads_arguments:
            continue
        words = call.words
        for j, w in enumerate(words):
            tok = w.text
            nxt = words[j + 1] if j + 1 < len(words) else None
            if tok in ("-x", "export") and nxt is not None and nxt.text:
                m = _ASSIGN.match(nxt.text)
                if m and m.group(1) in TRANSPORT_VARS:
                    yield EnvSetting(m.group(1), m.group(2), nxt.path, "mpirun -x" if tok == "-x" else "export")
                elif tok == "-x" and nxt.text in TRANSPORT_VARS and c.env.get(nxt.text) is not None:
                    yield EnvSetting(nxt.text, c.env[nxt.text] or "", nxt.path, "mpirun -x")
            elif tok in ("-genv", "-env") and nxt is not None and nxt.text in TRANSPORT_VARS and j + 2 < len(words):
                yield EnvSetting(nxt.text, words[j + 2].text, words[j + 2].path, f"mpirun {tok}")
            elif tok.startswith("-x") and len(tok) > 2 and (m := _ASSIGN.match(tok[2:].lstrip("="))):
                if m.group(1) in TRANSPORT_VARS:
                    yield EnvSetting(m.group(1), m.group(2), w.path, "mpirun -x")
