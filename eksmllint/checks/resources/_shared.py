"""Helpers shared by the 6xx rules (accelerator and resource math).

Every rule here compares two numbers that must agree: what a pod asks for against what the node
it can land on has (EML602, EML603, EML609), what a launcher is told against what the pod owns
(EML604, EML605, EML606, EML608), what a NodePool may grow to against what one job needs
(EML607), and requests against limits of device-plugin resources (EML601).

Silence policy: a number that is not a literal (a templated ``$GPUS``, ``$(VAR)`` Kubernetes
cannot resolve from a literal env, ``auto``) or an instance type that is not pinned
(``placement(run, t).instance_types is None``, :mod:`eksmllint.analysis.placement`) makes a rule
stay silent rather than guess. When no NodePool of the run can take a pod (an empty landing:
EML701/EML702 say why) the types the pod pins itself are used, because the pod can never run
anywhere else; a resource none of the landing types offers at all is left to EML702.

Launch commands are read through :func:`~eksmllint.checks.helpers.container_invocations`
(``eksmllint.launch.analyse_container`` with the container's env, so ``$(VAR)`` resolves exactly as
the kubelet resolves it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from eksmllint.analysis.placement import placement
from eksmllint.catalogue import InstanceType
from eksmllint.checks.helpers import fmt_list
from eksmllint.core.finding import DocPath, Fix, SetValue
from eksmllint.launch.model import Invocation, Option, canonical_name, parse_int
from eksmllint.quantity import format_mib, parse_quantity, to_mib
from eksmllint.scheduling import instance_types_for, pod_requirement_terms
from eksmllint.workload import (
    NEURON,
    NEURONCORE,
    NEURONDEVICE,
    Container,
    PodTemplate,
    Workload,
)

if TYPE_CHECKING:
    from eksmllint.core.context import LintRun, RuleContext

#: Runtime variable grouping physical NeuronCores into logical ones on LNC types (trn2: default 2,
#: catalogue source neuron-lnc); the cores a container sees are devices x physical cores / LNC.
LNC_ENV = "NEURON_LOGICAL_NC_CONFIG"


def resources_path(c: Container, which: str, r: str) -> DocPath:
    return c.path + ("resources", which, r)


def count_path(c: Container, r: str) -> DocPath:
    """Where a device count comes from: limits win (requests default to them)."""
    return resources_path(c, "limits" if r in c.limits else "requests", r)


def declared(c: Container, r: str) -> Any:
    return c.requests.get(r, c.limits.get(r))


def _is_sidecar(c: Container) -> bool:
    return c.init and c.data.get("restartPolicy") == "Always"


@dataclass(frozen=True)
class PodRequest:
    """A pod's effective request of one resource (Kubernetes' formula) and the container that
    contributes most to it (where a finding points)."""

    total: Decimal
    container: Container
    exact: bool  # False when some container declares a value that is not a quantity


def pod_request(t: PodTemplate, r: str) -> PodRequest | None:
    """Effective pod request of ``r`` as the scheduler (and Karpenter) computes it:
    max(sum of app containers + sidecars, max over init containers of (init + sidecars started
    before it)) + ``spec.overhead``. Requests default to limits. None when nobody declares ``r``."""
    found: list[tuple[Decimal, Container]] = []
    exact = True

    def q(c: Container) -> Decimal:
        nonlocal exact
        raw = declared(c, r)
        if raw is None:
            return Decimal(0)
        v = c.request_quantity(r)
        if v is None:
            exact = False
            return Decimal(0)
        found.append((v, c))
        return v

    sidecar_sum = Decimal(0)
    init_peak = Decimal(0)
    for c in t.init_containers:
        v = q(c)
        if _is_sidecar(c):
            sidecar_sum += v
        else:
            init_peak = max(init_peak, v + sidecar_sum)
    regular = sum((q(c) for c in t.containers), Decimal(0)) + sidecar_sum
    if not found:
        return None
    overhead = t.spec.get("overhead")
    extra = parse_quantity(overhead.get(r)) if isinstance(overhead, dict) else None
    total = max(regular, init_peak) + (extra or Decimal(0))
    top = max(found, key=lambda vc: vc[0])[1]
    return PodRequest(total, top, exact)


def pod_pinned_types(t: PodTemplate) -> tuple[InstanceType, ...] | None:
    """Instance types the pod's own node selector / required affinity allow, whatever the
    NodePools; None when the pod does not pin the type (or names types the catalogue lacks)."""
    found: dict[str, InstanceType] = {}
    for term in pod_requirement_terms(t):
        types = instance_types_for(term)
        if types is None:
            return None
        found.update((it.name, it) for it in types)
    return tuple(found.values()) or None


def landing_types(ctx: RuleContext, t: PodTemplate) -> tuple[InstanceType, ...] | None:
    """Instance types ``t`` can land on. When no NodePool of the run can take the pod (an empty
    landing: EML701/EML702 report why), the types the pod pins itself still bound where it could
    ever run, so those are used; None when neither is known."""
    types = placement(ctx.run, t).instance_types
    if types is None:
        return None
    return types or pod_pinned_types(t)


def type_names(types: Iterable[InstanceType]) -> str:
    return fmt_list(sorted(it.name for it in types))


def cores_per_device(types: Iterable[InstanceType] | None, lnc: int | None = None) -> int | None:
    """NeuronCores per Neuron device the runtime exposes (logical cores under the LNC ``lnc``, else
    each type's default), when every landing type agrees; None otherwise."""
    if not types:
        return None
    per = {it.logical_cores_per_device(lnc) for it in types}
    return per.pop() if len(per) == 1 and None not in per else None


def container_lnc(c: Container) -> int | bool | None:
    """The container's literal ``NEURON_LOGICAL_NC_CONFIG`` (None: unset, the type's default
    applies; False: set to something that is not a number, so the core count is unknown)."""
    value = c.env.get(LNC_ENV)
    if value is None:
        return None
    return parse_int(value) or False


def neuron_cores_of(ctx: RuleContext, t: PodTemplate, c: Container) -> int | None:
    """NeuronCores the Neuron runtime gives container ``c``: ``aws.amazon.com/neuroncore`` plus Neuron
    devices x (logical) cores per device of the landing types. None when the container has none or
    it is unknown (a non-literal LNC, or ``neuroncore`` counts on an LNC type, where the plugin
    counts physical cores and the runtime logical ones)."""
    cores = c.count(NEURONCORE)
    devices = c.count(NEURON) + c.count(NEURONDEVICE)
    types = landing_types(ctx, t)
    lnc = container_lnc(c)
    if types and any(it.default_lnc for it in types) and (lnc is False or cores):
        return None
    if devices:
        per = cores_per_device(types, lnc or None)
        if per is None:
            return None
        return cores + devices * per
    return cores or None


def literal_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        return parse_int(value)
    return None


def _replica_values(w: Workload) -> Iterator[Any]:
    """Every field a pod count is computed from (to refuse templated values like ``$NUM_NODES``,
    which the workload view reads as the default 1)."""
    r = w.resource
    for t in w.templates:
        holder = r.get(t.path[:-1]) if t.path and t.path[-1] == "template" else None
        if isinstance(holder, dict) and "replicas" in holder:
            yield holder["replicas"]
    for path in (
        ("spec", "parallelism"),
        ("spec", "completions"),
        ("spec", "leaderWorkerTemplate", "size"),
        ("spec", "replicas"),
    ):
        value = r.get(path)
        if value is not None:
            yield value
    rjobs = r.get(("spec", "replicatedJobs"))
    if isinstance(rjobs, list):
        for rj in rjobs:
            if isinstance(rj, dict):
                for p in (("replicas",), ("template", "spec", "parallelism"), ("template", "spec", "completions")):
                    v = _dig(rj, p)
                    if v is not None:
                        yield v


def _dig(data: Any, path: tuple) -> Any:
    for p in path:
        if not isinstance(data, dict):
            return None
        data = data.get(p)
    return data


def run_collective_pods(run: LintRun, w: Workload) -> int | None:
    """:func:`collective_pods`, computed once per run (EML604 and EML605 both ask)."""
    return run.once("collective-pods", w, lambda _run, w: collective_pods(w))


def collective_pods(w: Workload) -> int | None:
    """Pods one torchrun rendezvous spans (``--nnodes``), or None when unknown or not a collective."""
    if w.has("no-nnodes"):
        return None
    if any(literal_int(v) is None for v in _replica_values(w)):
        return None
    r = w.resource
    group_size = w.row.group_size if w.row is not None else None
    if group_size is not None:  # one collective per group (LWS)
        return literal_int(r.get(group_size)) or 1
    if w.is_batch_job:
        par = literal_int(r.get(("spec", "parallelism")))
        comp = literal_int(r.get(("spec", "completions")))
        if par is not None and comp is not None and par != comp:
            return None  # pods come in waves: which count is meant is unclear
        return par if par is not None else (comp if comp is not None else 1)
    size = w.collective_size
    return size or None


def _fmt_cpu(q: Decimal) -> str:
    return f"{q.normalize():f}" if q == q.to_integral_value() else f"{int(q * 1000)}m"


def fmt_qty(r: str, q: Decimal) -> str:
    if r == "memory":
        return format_mib(to_mib(q)) if to_mib(q) == int(to_mib(q)) else f"{to_mib(q):.0f}Mi"
    if r == "cpu":
        return _fmt_cpu(q)
    return f"{q.normalize():f}"


def option(inv: Invocation, *names: str) -> Option | None:
    for n in names:
        opt = inv.option(n)
        if opt is not None:
            return opt
    return None


def option_fix(c: Container, opt: Option, new: int, title: str) -> Fix | None:
    """Set ``opt``'s value to ``new`` where it is written literally: the list element of the
    value (``--flag 8``), the ``--flag=8`` element (form preserved) or, in a ``bash -c`` script,
    the single occurrence of the flag in the script. None when the value is not literal."""
    if opt.value is None or opt.resolved is None or opt.resolved != opt.value:
        return None
    command, args = c.argv_lists()
    lists = {"command": command or [], "args": args or []}
    vpos = opt.value_position or opt.position
    items = lists.get(vpos.list_name)
    if items is None or not 0 <= vpos.index < len(items):
        return None
    text = items[vpos.index]
    path = c.path + (vpos.list_name, vpos.index)
    if text == opt.value:
        return Fix(title, (SetValue(path, str(new)),))
    replaced = replace_flag_value(text, canonical_name(opt.name), opt.value, str(new))
    return Fix(title, (SetValue(path, replaced),)) if replaced is not None else None


def option_path(c: Container, opt: Option) -> DocPath:
    """Path of the list element holding the option's value (the script string for ``sh -c``)."""
    vpos = opt.value_position or opt.position
    return c.path + (vpos.list_name, vpos.index)


def replace_flag_value(text: str, canonical: str, old: str, new: str) -> str | None:
    """``text`` with the value of the one ``--name=old`` / ``--name old`` occurrence (any of the
    ``-``/``_`` spellings) replaced by ``new``; None when it is not there exactly once."""
    name = "[-_]".join(re.escape(p) for p in canonical.split("_"))
    pattern = re.compile(rf"(?<![\w-])(--?{name})(\s*=\s*|\s+)(['\"]?){re.escape(old)}\3(?![\w.:$-])")
    matches = list(pattern.finditer(text))
    if len(matches) != 1:
        return None
    m = matches[0]
    return text[: m.start()] + f"{m.group(1)}{m.group(2)}{m.group(3)}{new}{m.group(3)}" + text[m.end() :]


def neuron_summary(c: Container) -> str:
    parts = [f"{c.count(r)} {r}" for r in (NEURON, NEURONDEVICE, NEURONCORE) if c.count(r)]
    return ", ".join(parts)
