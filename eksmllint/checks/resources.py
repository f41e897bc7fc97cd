"""Family 6xx: accelerator and resource math.

Every rule here compares two numbers that must agree: what a pod asks for against what the node
it can land on has (EML602, EML603, EML609), what a launcher is told against what the pod owns
(EML604, EML605, EML606, EML608), what a NodePool may grow to against what one job needs
(EML607), and requests against limits of device-plugin resources (EML601).

Silence policy: a number that is not a literal (a templated ``$GPUS``, ``$(VAR)`` Kubernetes
cannot resolve from a literal env, ``auto``) or an instance type that is not pinned
(``placement(run, t).instance_types is None``, :mod:`eksmllint.analysis.placement`) makes a rule stay silent rather than guess. When no
NodePool of the run can take a pod (an empty landing: EML701/EML702 say why) the types the pod
pins itself are used, because the pod can never run anywhere else; a resource none of the
landing types offers at all is left to EML702.

Launch commands are read through :func:`~eksmllint.checks.helpers.container_invocations` (``eksmllint.launch.analyse_container``
with the container's env, so ``$(VAR)`` resolves exactly as the kubelet resolves it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from eksmllint.analysis.placement import placement
from eksmllint.catalogue import InstanceType, kubelet_allocatable
from eksmllint.checks.helpers import container_invocations, fmt_list, index_ranges
from eksmllint.core.finding import DocPath, Fix, SetValue
from eksmllint.launch.model import (
    PER_NODE_LAUNCHERS,
    Invocation,
    Option,
    canonical_name,
    parse_int,
)
from eksmllint.quantity import DIGITS, format_mib, parse_count, parse_quantity, to_mib
from eksmllint.resource import Resource
from eksmllint.scheduling import instance_types_for, pod_requirement_terms
from eksmllint.workload import (
    ACCELERATORS,
    DEVICE_PLUGIN_RESOURCES,
    GPU,
    NEURON,
    NEURONCORE,
    NEURONDEVICE,
    Container,
    PodTemplate,
    Workload,
)

#: Runtime variable grouping physical NeuronCores into logical ones on LNC types (trn2: default 2,
#: catalogue source neuron-lnc); the cores a container sees are devices x physical cores / LNC.
LNC_ENV = "NEURON_LOGICAL_NC_CONFIG"

#: Kinds whose pod count is not a collective size torchrun's ``--nnodes`` could refer to.
_NO_COLLECTIVE_KINDS = frozenset(
    {"Deployment", "StatefulSet", "ReplicaSet", "DaemonSet", "Pod", "CronJob", "RayCluster", "RayJob", "TFJob"}
)
#: Kinds that are not "one job" for EML607 (long-running or per-node).
_NOT_A_JOB_KINDS = frozenset({"Deployment", "StatefulSet", "ReplicaSet", "DaemonSet"})
_NODEPOOL_LIMIT_RESOURCES = ACCELERATORS + ("cpu", "memory")


# =============================================================================================
# Small shared helpers (candidates for the core: pod_request, neuron_cores_of, workload_of_run)
# =============================================================================================
def _resources_path(c: Container, which: str, r: str) -> DocPath:
    return c.path + ("resources", which, r)


def count_path(c: Container, r: str) -> DocPath:
    """Where a device count comes from: limits win (requests default to them)."""
    return _resources_path(c, "limits" if r in c.limits else "requests", r)


def request_path(c: Container, r: str) -> DocPath:
    """Where the scheduler's request comes from: requests, defaulting to limits."""
    return _resources_path(c, "requests" if r in c.requests else "limits", r)


def _declared(c: Container, r: str) -> Any:
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
        raw = _declared(c, r)
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


def _landing_types(ctx, t: PodTemplate) -> tuple[InstanceType, ...] | None:
    """Instance types ``t`` can land on. When no NodePool of the run can take the pod (an empty
    landing: EML701/EML702 report why), the types the pod pins itself still bound where it could
    ever run, so those are used; None when neither is known."""
    types = placement(ctx.run, t).instance_types
    if types is None:
        return None
    return types or pod_pinned_types(t)


def _names(types: Iterable[InstanceType]) -> str:
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


def neuron_cores_of(ctx, t: PodTemplate, c: Container) -> int | None:
    """NeuronCores the Neuron runtime gives container ``c``: ``aws.amazon.com/neuroncore`` plus Neuron
    devices x (logical) cores per device of the landing types. None when the container has none or
    it is unknown (a non-literal LNC, or ``neuroncore`` counts on an LNC type, where the plugin
    counts physical cores and the runtime logical ones)."""
    cores = c.count(NEURONCORE)
    devices = c.count(NEURON) + c.count(NEURONDEVICE)
    types = _landing_types(ctx, t)
    lnc = container_lnc(c)
    if types and any(it.default_lnc for it in types) and (lnc is False or cores):
        return None
    if devices:
        per = cores_per_device(types, lnc or None)
        if per is None:
            return None
        return cores + devices * per
    return cores or None


def workload_of_run(ctx, resource: Resource) -> Workload | None:
    """The run's (cached) workload view of ``resource`` (landing results are cached per template)."""
    return ctx.run.workload_for(resource)


def _literal_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        return parse_int(value)
    return None


def _fmt_cpu(q: Decimal) -> str:
    return f"{q.normalize():f}" if q == q.to_integral_value() else f"{int(q * 1000)}m"


def _fmt_qty(r: str, q: Decimal) -> str:
    if r == "memory":
        return format_mib(to_mib(q)) if to_mib(q) == int(to_mib(q)) else f"{to_mib(q):.0f}Mi"
    if r == "cpu":
        return _fmt_cpu(q)
    return f"{q.normalize():f}"


# =============================================================================================
# Launch commands
# =============================================================================================
def is_per_node_launch(inv: Invocation) -> bool:
    """A per-node launcher, also when mpirun starts it (``mpirun -N 1 torchrun ...``: the launch
    analysis reports torchrun as mpirun's program there)."""
    if inv.launcher in PER_NODE_LAUNCHERS:
        return True
    program = (inv.script or "").rsplit("/", 1)[-1]
    return inv.launcher == "mpirun" and program in PER_NODE_LAUNCHERS


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


def _option_path(c: Container, opt: Option) -> DocPath:
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


# =============================================================================================
# EML601 accelerator-limits
# =============================================================================================
def accelerator_limits(ctx, t: PodTemplate) -> Iterator:
    """Device-plugin resources must be in limits; requests may be omitted or must equal them."""
    for c in t.containers + t.init_containers:
        for r in DEVICE_PLUGIN_RESOURCES:
            if r not in c.requests:
                continue
            req = c.requests[r]
            path = _resources_path(c, "requests", r)
            fix = Fix(
                f"Set limits.{r} of container {c.name!r} to {req}", (SetValue(_resources_path(c, "limits", r), req),)
            )
            if r not in c.limits:
                yield ctx.report(
                    t.resource,
                    path,
                    f"container {c.name!r} requests {req} {r} but sets no limit; extended resources "
                    "must be in limits (requests default to them), so the pod is rejected",
                    fix=fix,
                )
                continue
            lim = c.limits[r]
            rq, lq = parse_count(req), parse_count(lim)
            if rq is None or lq is None or rq == lq:
                continue  # templated or equal: nothing to say
            yield ctx.report(
                t.resource,
                path,
                f"container {c.name!r} requests {rq} {r} but limits it to {lq}; extended resources "
                "cannot be overcommitted, requests must equal limits",
                fix=fix,
            )


# =============================================================================================
# EML602 accelerator-exceeds-node
# =============================================================================================
def accelerator_exceeds_node(ctx, t: PodTemplate) -> Iterator:
    types = _landing_types(ctx, t)
    if types is None:
        return
    for r, n in t.accelerators.items():
        offering = [it for it in types if it.resource_capacity().get(r, 0) > 0]
        if not offering:
            yield from _uncounted_gpu(ctx, t, types, r)  # otherwise EML702 reports it
            continue
        best = max(it.resource_capacity()[r] for it in offering)
        if n <= best:
            continue
        top = max((c for c in t.containers + t.init_containers), key=lambda c: c.count(r))
        biggest = [it for it in offering if it.resource_capacity()[r] == best]
        yield ctx.report(
            t.resource,
            count_path(top, r),
            f"the pod requests {n} {r} but the largest instance type it can land on "
            f"({_names(biggest)}) has {best}; it can never be scheduled",
        )


def _uncounted_gpu(ctx, t: PodTemplate, types: tuple[InstanceType, ...], r: str) -> Iterator:
    """A GPU pod that can only land on types whose GPU EC2 counts as 0 (g6f/gr6f: a fraction of an
    L4): no node ever advertises nvidia.com/gpu, so Karpenter never launches one for the pod. With
    NodePools in the run EML702 reports it (no pool can launch a node with the pod's devices)."""
    if r != GPU or not types or not all(it.has_uncounted_gpu for it in types):
        return
    if ctx.run.nodepools:
        return
    top = max((c for c in t.containers + t.init_containers), key=lambda c: c.count(r))
    shares = fmt_list(sorted({f"{it.name} ({it.gpu_fraction:g} of an {it.accelerator})" for it in types}))
    yield ctx.report(
        t.resource,
        count_path(top, r),
        f"the pod requests {t.accelerators[r]} {r} but can only land on {shares}: a fractional GPU that "
        f"EC2 counts as 0 GPUs, so no node offers {r}, Karpenter never launches one for the pod and it "
        "never schedules",
    )


# =============================================================================================
# EML603 cpu-memory-exceeds-node
# =============================================================================================
def cpu_memory_exceeds_node(ctx, t: PodTemplate) -> Iterator:
    """Requests (Karpenter sizes nodes by requests) above every landing type's allocatable.
    DaemonSet pods are not subtracted (their placement is not known), so this is a lower bound."""
    types = _landing_types(ctx, t)
    if types is None:
        return
    kubelets = _landing_kubelets(ctx, t)
    for r in ("cpu", "memory"):
        req = pod_request(t, r)
        if req is None:
            continue
        alloc = _allocatable(ctx.run.memo("kubelet-allocatable"), types, kubelets, r)
        if alloc is None:
            continue  # a kubelet setting that is not a literal: allocatable unknown
        best = max(alloc.values())
        if req.total <= best:
            continue
        biggest = [it for it in types if alloc[it.name] == best]
        shown = f"{best * 1000:.0f}m" if r == "cpu" else f"{best / 2**20:.0f}Mi"
        asked = _fmt_qty(r, req.total)
        if r == "memory":
            asked += f" ({to_mib(req.total):.0f}Mi)"
        alone = len(t.containers) + len(t.init_containers) == 1
        whose = f"container {req.container.name!r}" if alone else "the pod"
        share = "" if alone else f" (largest share: container {req.container.name!r})"
        tuned = " (with the EC2NodeClass kubelet settings)" if any(kubelets) else ""
        yield ctx.report(
            t.resource,
            request_path(req.container, r),
            f"{whose} requests {asked} {r}{share} but at most {shown} is allocatable on {_names(biggest)} "
            f"after kubelet and system reserves{tuned}; the pod never schedules",
        )


def _landing_kubelets(ctx, t: PodTemplate) -> list[dict | None]:
    """The kubelet block of each NodePool ``t`` lands on (EC2NodeClass ``spec.kubelet``; the NodePool's
    own ``template.spec.kubelet`` in v1beta1); [None] when no pool is known (Karpenter defaults).
    Depends only on the pools: once per shared placement."""
    return ctx.run.once("landing-kubelets", placement(ctx.run, t), _kubelets_of)


def _kubelets_of(run, where) -> list[dict | None]:
    found: list[dict | None] = []
    for pool in where.usable:  # the pools whose types the rule compares
        own = pool.template_spec.get("kubelet")
        block = own if isinstance(own, dict) else None
        if block is None and pool.node_class_name:
            for nc in run.find("EC2NodeClass", pool.node_class_name)[:1]:
                k = nc.get(("spec", "kubelet"))
                block = k if isinstance(k, dict) else None
        found.append(block)
    # one entry per distinct block (pools usually share their EC2NodeClass): callers take the max
    found = list({id(b): b for b in found}.values())
    return found or [None]


def _allocatable(
    memo: dict, types: Iterable[InstanceType], kubelets: list[dict | None], r: str
) -> dict[str, Decimal] | None:
    """Largest allocatable ``r`` (cores or bytes) of each type over the pools' kubelet settings (an
    upper bound, so a pool that allows more never yields a wrong finding); None when unknown.
    ``memo`` (per run) holds each (type, kubelet block) answer: the blocks live as long as the run."""
    alloc: dict[str, Decimal] = {}
    for it in types:
        values = []
        for k in kubelets:
            key = (it.name, id(k))
            found = memo.get(key)
            if found is None:
                found = memo[key] = kubelet_allocatable(it, k)
            values.append(found[0 if r == "cpu" else 1])
        if any(v is None for v in values):
            return None
        best = max(v for v in values if v is not None)
        alloc[it.name] = Decimal(best) / 1000 if r == "cpu" else Decimal(best) * 2**20
    return alloc


# =============================================================================================
# EML604 nproc-mismatch
# =============================================================================================
def per_node_devices(ctx, t: PodTemplate, c: Container) -> tuple[int, str] | None:
    """(processes one node should start, what they drive) for container ``c``: its GPUs, else its
    NeuronCores (with how they were counted). None when it has neither or the count is unknown."""
    gpus = c.count(GPU)
    if gpus:
        return gpus, GPU
    cores = neuron_cores_of(ctx, t, c)
    if not cores:
        return None
    devices = c.count(NEURON) + c.count(NEURONDEVICE)
    if devices and cores != devices:
        return cores, f"NeuronCores ({_neuron_summary(c)} x {cores // devices} cores per device)" if not c.count(
            NEURONCORE
        ) else f"NeuronCores ({_neuron_summary(c)})"
    return cores, "NeuronCores"


def _nproc_options(inv: Invocation) -> Option | None:
    if inv.launcher == "torchrun":
        return option(inv, "nproc_per_node")
    if inv.launcher == "deepspeed":
        return option(inv, "num_gpus")
    return None


def _main_container(t: PodTemplate) -> Container | None:
    """The container the operator configures (PyTorchJob: ``pytorch``), else the first."""
    for c in t.containers:
        if c.name == "pytorch":
            return c
    return t.containers[0] if t.containers else None


def nproc_mismatch(ctx, resource: Resource) -> Iterator:
    if resource.kind == "TrainJob":
        yield from _trainjob_nproc(ctx, resource)
        return
    w = workload_of_run(ctx, resource)
    if w is None:
        return
    explicit: set[int] = set()  # templates whose main container passes the flag itself
    for t in w.templates:
        for c in t.containers:
            for inv in container_invocations(c):
                opt = _nproc_options(inv)
                if opt is None:
                    continue
                if c is _main_container(t):
                    explicit.add(id(t))
                n = opt.int_value()
                have = per_node_devices(ctx, t, c)
                if n is None or have is None or n == have[0]:
                    continue
                flag = "--num_gpus" if inv.launcher == "deepspeed" else "--nproc_per_node"
                yield ctx.report(
                    resource,
                    _option_path(c, opt),
                    f"{inv.launcher} {flag}={n} in container {c.name!r} but the container has "
                    f"{have[0]} {have[1]}; each process drives one, so {_surplus(n, have[0])}",
                    fix=option_fix(c, opt, have[0], f"Set {flag} to {have[0]}"),
                )
    if resource.kind == "PyTorchJob":
        yield from _pytorchjob_nproc(ctx, w, explicit)


def _pytorchjob_nproc(ctx, w: Workload, explicit: set[int]) -> Iterator:
    for path in (("spec", "nprocPerNode"), ("spec", "elasticPolicy", "nProcPerNode")):
        n = _literal_int(w.resource.get(path))
        if n is None:
            continue  # absent, "auto", "gpu", "cpu" or templated
        counts: dict[int, tuple[PodTemplate, str]] = {}
        for t in w.templates:
            c = _main_container(t)
            if c is None or id(t) in explicit:
                continue  # the command line's own --nproc_per_node wins over PET_NPROC_PER_NODE
            have = per_node_devices(ctx, t, c)
            if have is not None:
                counts.setdefault(have[0], (t, have[1]))
        wrong = {k: v for k, v in counts.items() if k != n}
        if not wrong:
            continue
        have, (t, what) = next(iter(wrong.items()))
        value: Any = str(have) if path[-1] == "nprocPerNode" else have
        fix = Fix(f"Set {path[-1]} to {have}", (SetValue(path, value),)) if len(counts) == 1 else None
        yield ctx.report(
            w.resource,
            path,
            f"{path[-1]} is {n} but each {t.role} pod has {have} {what}; torchrun starts one "
            f"process per accelerator, so {_surplus(n, have)}",
            fix=fix,
        )


def _surplus(n: int, have: int) -> str:
    if n < have:
        return f"{have - n} sit idle"
    return f"{n - have} processes have no device of their own"


def _trainjob_nproc(ctx, resource: Resource) -> Iterator:
    """Trainer v2: ``spec.trainer.numProcPerNode`` against ``resourcesPerNode`` GPUs/NeuronCores."""
    path = ("spec", "trainer", "numProcPerNode")
    n = _literal_int(resource.get(path))
    res = resource.get(("spec", "trainer", "resourcesPerNode"))
    if n is None or not isinstance(res, dict):
        return
    limits = res.get("limits") if isinstance(res.get("limits"), dict) else {}
    requests = res.get("requests") if isinstance(res.get("requests"), dict) else {}
    for r in (GPU, NEURONCORE):
        have = parse_count(limits.get(r, requests.get(r)))
        if have:
            break
    else:
        return
    if n == have:
        return
    value: Any = have if isinstance(resource.get(path), int) else str(have)
    yield ctx.report(
        resource,
        path,
        f"numProcPerNode is {n} but resourcesPerNode gives each node {have} {r}; "
        "torchrun starts one process per accelerator",
        fix=Fix(f"Set numProcPerNode to {have}", (SetValue(path, value),)),
    )


# =============================================================================================
# EML605 nnodes-mismatch
# =============================================================================================
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
        if r.get(path) is not None:
            yield r.get(path)
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


def collective_pods(w: Workload) -> int | None:
    """Pods one torchrun rendezvous spans (``--nnodes``), or None when unknown or not a collective."""
    if w.kind in _NO_COLLECTIVE_KINDS:
        return None
    if any(_literal_int(v) is None for v in _replica_values(w)):
        return None
    r = w.resource
    if w.kind == "LeaderWorkerSet":  # one collective per group
        return _literal_int(r.get(("spec", "leaderWorkerTemplate", "size"))) or 1
    if w.is_batch_job:
        par = _literal_int(r.get(("spec", "parallelism")))
        comp = _literal_int(r.get(("spec", "completions")))
        if par is not None and comp is not None and par != comp:
            return None  # pods come in waves: which count is meant is unclear
        return par if par is not None else (comp if comp is not None else 1)
    size = w.collective_size
    return size or None


def _elastic_range(w: Workload) -> tuple[int, int] | None:
    ep = w.resource.get(("spec", "elasticPolicy"))
    if w.kind != "PyTorchJob" or not isinstance(ep, dict):
        return None
    lo, hi = _literal_int(ep.get("minReplicas")), _literal_int(ep.get("maxReplicas"))
    if lo is None or hi is None:
        return None
    return lo, hi


def nnodes_mismatch(ctx, w: Workload) -> Iterator:
    expected = collective_pods(w)
    if expected is None:
        return
    elastic = _elastic_range(w)
    if elastic is None and w.kind == "PyTorchJob" and isinstance(w.resource.get(("spec", "elasticPolicy")), dict):
        return  # elastic without a literal range: the pod count changes at run time
    for t in w.templates:
        for c in t.containers:
            for inv in container_invocations(c):
                opt = (
                    option(inv, "nnodes")
                    if inv.launcher == "torchrun"
                    else (option(inv, "num_nodes") if inv.launcher == "deepspeed" else None)
                )
                if opt is None or opt.resolved is None:
                    continue
                text = opt.resolved.strip()
                flag = "--nnodes" if inv.launcher == "torchrun" else "--num_nodes"
                path = _option_path(c, opt)
                lo_hi = re.fullmatch(rf"({DIGITS}):({DIGITS})", text)
                if lo_hi:
                    lo, hi = int(lo_hi.group(1)), int(lo_hi.group(2))
                    if lo <= expected <= hi:
                        continue
                    yield ctx.report(
                        w.resource,
                        path,
                        f"{flag}={text} in container {c.name!r} but the workload runs {expected} pods, "
                        "outside the elastic range; the rendezvous never completes",
                    )
                    continue
                n = parse_int(text)
                if n is None:
                    continue
                if elastic is not None:
                    if elastic[0] <= n <= elastic[1]:
                        continue
                    yield ctx.report(
                        w.resource,
                        path,
                        f"{flag}={n} in container {c.name!r} is outside the elastic range "
                        f"{elastic[0]}:{elastic[1]} of the PyTorchJob",
                    )
                    continue
                if n == expected:
                    continue
                effect = "waits for nodes that never come" if n > expected else "closes before every pod joins"
                yield ctx.report(
                    w.resource,
                    path,
                    f"{flag}={n} in container {c.name!r} but the workload runs {expected} pods; "
                    f"the rendezvous {effect}",
                    fix=option_fix(c, opt, expected, f"Set {flag} to {expected}"),
                )


# =============================================================================================
# EML606 mpi-slots-mismatch
# =============================================================================================
def _mpi_templates(w: Workload) -> tuple[PodTemplate | None, PodTemplate | None]:
    by_role = {t.role: t for t in w.templates}
    return by_role.get("launcher"), by_role.get("worker")


def mpi_slots_mismatch(ctx, w: Workload) -> Iterator:
    if w.kind != "MPIJob":
        return
    launcher, worker = _mpi_templates(w)
    if worker is None:
        return
    r = w.resource
    raw_slots = r.get(("spec", "slotsPerWorker"))
    slots = 1 if raw_slots is None else _literal_int(raw_slots)
    workers = _literal_int(r.get(("spec", "mpiReplicaSpecs", "Worker", "replicas"), 1))
    if slots is None or workers is None:
        return
    launches = [(c, inv) for c in (launcher.containers if launcher else []) for inv in container_invocations(c)]
    per_node = any(is_per_node_launch(inv) for _, inv in launches)
    gpus = worker.device_count(GPU)
    intended = slots
    if gpus and not per_node and slots != gpus:
        intended = gpus
        where = ("spec", "slotsPerWorker") if raw_slots is not None else ("spec",)
        said = f"slotsPerWorker is {slots}" if raw_slots is not None else "slotsPerWorker is unset (default 1)"
        yield ctx.report(
            r,
            where,
            f"{said} but each worker has {gpus} {GPU}; MPI starts one rank per slot, so "
            f"{abs(gpus - slots)} GPUs per worker {'sit idle' if slots < gpus else 'are oversubscribed'}",
            fix=Fix(f"Set slotsPerWorker to {gpus}", (SetValue(("spec", "slotsPerWorker"), gpus),)),
        )
    as_worker = r.get(("spec", "runLauncherAsWorker")) is True
    expected = workers * intended + (intended if as_worker else 0)
    for c, inv in launches:
        if inv.launcher != "mpirun":
            continue
        opt = option(inv, "np", "n", "c")
        if opt is None:
            continue
        n = opt.int_value()
        if n is None or n == expected:
            continue
        how = f"{workers} workers x {intended} slots" + (f" + {intended} on the launcher" if as_worker else "")
        if intended != slots:
            how += ", once slotsPerWorker matches the GPUs"
        yield ctx.report(
            r,
            _option_path(c, opt),
            f"mpirun -np {n} but the MPIJob offers {expected} slots ({how}); "
            f"{'mpirun fails with not enough slots' if n > expected else f'{expected - n} slots stay idle'}",
            fix=option_fix(c, opt, expected, f"Set mpirun -np to {expected}"),
        )


# =============================================================================================
# EML607 nodepool-limit-too-small
# =============================================================================================
def _sole_pool_tenants(run) -> dict[int, list[tuple[Workload, list[PodTemplate]]]]:
    """id(pool) -> training workloads (run order) with the templates that can land only there.
    One pass over the templates instead of one per NodePool (EML607 ran pools x templates)."""
    memo = run.memo("sole-pool-tenants")
    if "index" not in memo:
        index: dict[int, list[tuple[Workload, list[PodTemplate]]]] = {}
        for w in run.workloads:
            if w.kind in _NOT_A_JOB_KINDS or not w.is_training:
                continue
            mine: dict[int, list[PodTemplate]] = {}
            for t in w.templates:
                if not t.replicas:
                    continue
                hosting = placement(run, t).hosting
                if len(hosting) == 1:
                    mine.setdefault(id(hosting[0]), []).append(t)
            for pool_id, templates in mine.items():
                index.setdefault(pool_id, []).append((w, templates))
        memo["index"] = index
    return memo["index"]


def nodepool_limit_too_small(ctx, pool_resource: Resource) -> Iterator:
    """A NodePool's ``spec.limits`` caps the capacity of the nodes it creates; a job whose pods can
    only land on this pool and request more in total can never fully start. Pod requests are a
    lower bound of node capacity, so the comparison has no false positives from packing."""
    limits = pool_resource.get(("spec", "limits"))
    if not isinstance(limits, dict):
        return
    pool = ctx.run.nodepool_of(pool_resource)
    if pool is None:
        return
    tenants = _sole_pool_tenants(ctx.run).get(id(pool), ())
    for r in _NODEPOOL_LIMIT_RESOURCES:
        if r not in limits:
            continue
        cap = parse_quantity(limits[r])
        if cap is None:
            continue
        worst: tuple[Decimal, Workload, str] | None = None
        for w, templates in tenants:
            need, parts = Decimal(0), []
            for t in templates:
                per_pod = pod_request(t, r) if r in ("cpu", "memory") else None
                each = per_pod.total if per_pod else (Decimal(t.device_count(r)) if r in ACCELERATORS else Decimal(0))
                if each <= 0:
                    continue
                need += each * t.replicas
                parts.append(f"{t.replicas} {t.role} pods x {_fmt_qty(r, each)}")
            if need > cap and (worst is None or need > worst[0]):
                worst = (need, w, " + ".join(parts))
        if worst is None:
            continue
        need, w, how = worst
        yield ctx.report(
            pool_resource,
            ("spec", "limits", r),
            f"NodePool limits {r} to {_fmt_qty(r, cap)} but {w.resource.ref.display()} needs "
            f"{_fmt_qty(r, need)} ({how}) and can only land on this pool; it never fully starts",
            related=(w.resource.location(()),),
        )


# =============================================================================================
# EML608 neuron-cores-mismatch
# =============================================================================================
def _visible_cores_count(text: str) -> int | None:
    """Cores named by ``NEURON_RT_VISIBLE_CORES`` ("0-31", "0,1,4-7", "3"); None if not literal."""
    ranges = index_ranges(text)
    if ranges is None:
        return None
    return sum(hi - lo + 1 for lo, hi in ranges) or None


def neuron_cores_mismatch(ctx, t: PodTemplate) -> Iterator:
    for c in t.containers:
        if not (c.count(NEURON) or c.count(NEURONDEVICE) or c.count(NEURONCORE)):
            continue  # no device-plugin allocation: the cores come from elsewhere
        for name in ("NEURON_RT_NUM_CORES", "NEURON_RT_VISIBLE_CORES"):
            value = c.env.get(name)
            idx = c.env_index(name)
            if value is None or idx is None:
                continue
            wanted = parse_int(value) if name == "NEURON_RT_NUM_CORES" else _visible_cores_count(value)
            if wanted is None:
                continue
            have = neuron_cores_of(ctx, t, c)
            if have is None or wanted <= have:
                continue
            path = c.path + ("env", idx, "value")
            fix = (
                Fix(f"Set {name} to {have}", (SetValue(path, str(have)),)) if name == "NEURON_RT_NUM_CORES" else None
            )  # visible cores: EML803 removes it
            yield ctx.report(
                t.resource,
                path,
                f"{name}={value} asks for {wanted} NeuronCores but container {c.name!r} is "
                f"allocated {have} ({_neuron_summary(c)}{_lnc_note(ctx, t, c)}); the Neuron runtime fails to start",
                fix=fix,
            )


def _neuron_summary(c: Container) -> str:
    parts = [f"{c.count(r)} {r}" for r in (NEURON, NEURONDEVICE, NEURONCORE) if c.count(r)]
    return ", ".join(parts)


def _lnc_note(ctx, t: PodTemplate, c: Container) -> str:
    """ ", N logical cores per device with NEURON_LOGICAL_NC_CONFIG=..." on LNC types, else ""."""
    lnc_types = [it for it in _landing_types(ctx, t) or () if it.default_lnc]
    if not lnc_types:
        return ""
    lnc = container_lnc(c) or lnc_types[0].default_lnc
    how = f"{LNC_ENV}={lnc}" if container_lnc(c) else f"{LNC_ENV} unset, default {lnc}"
    return f", {lnc_types[0].logical_cores_per_device(lnc)} logical cores per device with {how}"


# =============================================================================================
# EML609 partial-node-collective
# =============================================================================================
def partial_node_collective(ctx, t: PodTemplate) -> Iterator:
    w = t.workload
    if not w.is_multi_pod or t not in w.collective_templates or not t.replicas:
        return
    types = _landing_types(ctx, t)
    if types is None:
        return
    for r, n in t.accelerators.items():
        if any(
            _declared(c, r) is not None and parse_count(_declared(c, r)) is None
            for c in t.containers + t.init_containers
        ):
            return  # templated count: unknown
        caps = {it.name: it.resource_capacity().get(r, 0) for it in types}
        offering = {k: v for k, v in caps.items() if v > 0}
        if not offering or any(n >= v for v in offering.values()):
            continue
        smallest = min(offering.values())
        top = max(t.containers, key=lambda c: c.count(r), default=None)
        if top is None:
            continue
        on = fmt_list(sorted(k for k, v in offering.items() if v == smallest))
        yield ctx.report(
            t.resource,
            count_path(top, r),
            f"each of the {t.replicas} {t.role} pods of this collective uses {n} of the {smallest}"
            f"{'+' if len(set(offering.values())) > 1 else ''} {r} of {on}; packing whole nodes keeps "
            "collective traffic on the intra-node fabric and avoids fragmentation",
        )
