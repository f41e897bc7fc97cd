"""Family 1xx: EFA and networking.

Facts (ml-on-eks-facts.md sections 1, 3 and 5): EFA traffic cannot cross Availability Zones; an
instance offers at most one EFA per network card (p4d 4, p5 32, trn1.32xlarge 8, ...); without
``vpc.amazonaws.com/efa`` a pod gets no EFA device and NCCL falls back to TCP sockets; the EFA device
plugin DaemonSet must run on a node before the node advertises the resource; Karpenter prefers spot
over on-demand when a NodePool allows both, and a NodePool without a capacity-type requirement gets
on-demand only.

Where a template lands and which instance types it gets on each NodePool is the run's one
placement answer (:mod:`eksmllint.analysis.placement`); zone pins and DaemonSet coverage are here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from eksmllint.analysis.commands import container_calls
from eksmllint.analysis.placement import placement
from eksmllint.catalogue import (
    CAPACITY_TYPES,
    L_RESERVATION_INTERRUPTIBLE,
    RECLAIMABLE_CAPACITY_TYPES,
    InstanceType,
)
from eksmllint.checks.helpers import fmt_list
from eksmllint.core.finding import (
    AppendItem,
    Applicability,
    DocPath,
    Fix,
    Location,
    SetValue,
)
from eksmllint.resource import Resource
from eksmllint.scheduling import (
    CAPACITY_TYPE,
    INSTANCE_TYPE,
    ZONE,
    ZONE_ID,
    ZONE_NAME_KEYS,
    NodePoolView,
    Requirement,
    compatible,
    pod_requirement_terms,
    untolerated,
)
from eksmllint.workload import DEVICE_PLUGIN_RESOURCES, EFA, Container, PodTemplate

EFA_PLUGIN = "aws-efa-k8s-device-plugin"
REQUIREMENTS: DocPath = ("spec", "template", "spec", "requirements")


# --- placement helpers ----------------------------------------------------------------------


def pool_of(run, resource: Resource) -> NodePoolView | None:
    return run.nodepool_of(resource)


def _template_order(run):
    """Sort key restoring run order (``run.templates``) for templates gathered from groups."""
    memo = run.memo("template-order")
    if "index" not in memo:
        memo["index"] = {id(t): i for i, t in enumerate(run.templates)}
    index = memo["index"]
    return lambda t: index[id(t)]


def _multi_az_groups(run) -> list[tuple[set[int], list[PodTemplate]]]:
    """Templates that can make a pool need one zone (EFA, multi-pod, not pinned to a zone
    itself), grouped by their (shared) placement: (ids of the pools they land on, templates)."""
    memo = run.memo("efa-multi-az")
    if "groups" not in memo:
        groups: dict[int, tuple[set[int], list[PodTemplate]]] = {}
        for t in run.templates:
            if t.device_count(EFA) > 0 and t.workload.collective_size > 1 and not pod_pins_one_zone(t):
                where = placement(run, t)
                group = groups.get(id(where))
                if group is None:
                    group = groups[id(where)] = ({id(p) for p in where.usable}, [])
                group[1].append(t)
        memo["groups"] = list(groups.values())
    return memo["groups"]


def types_on(run, t: PodTemplate, pool: NodePoolView) -> tuple[InstanceType, ...] | None:
    """Catalogue instance types ``t`` can get on ``pool`` with all its accelerators (the run's
    placement answer); None when unknown."""
    return placement(run, t).hosting_types(pool)


def target_pools(run, t: PodTemplate) -> tuple[list[NodePoolView], bool]:
    """(pools, landed): the pools ``t`` lands on; when a taint blocks it everywhere (EML701 reports
    that), the pools its selectors aim at, since that is where the workload is meant to run."""
    where = placement(run, t)
    if where.usable:
        return list(where.usable), True
    return list(where.blocked), False


def _in_values(reqs: Iterable[Requirement], keys: tuple[str, ...]) -> set[str] | None:
    """Intersection of ``In`` values over ``keys``; None when no ``In`` requirement constrains them."""
    allowed: set[str] | None = None
    for key, op, values in reqs:
        if key in keys and op == "In":
            allowed = set(values) if allowed is None else allowed & set(values)
    return allowed


def pool_zone_count(pool: NodePoolView) -> tuple[int | None, tuple[str, ...]]:
    """(number of zones the pool can use or None for unbounded, the zones listed)."""
    best: tuple[int | None, tuple[str, ...]] = (None, ())
    for keys in (ZONE_NAME_KEYS, (ZONE_ID,)):
        values = _in_values(pool.offered, keys)
        if values is not None and (best[0] is None or len(values) < best[0]):
            best = (len(values), tuple(sorted(values)))
    return best


def pod_pins_one_zone(t: PodTemplate) -> bool:
    """Every node-affinity term of the pod itself restricts it to the same single zone."""
    zones: set[str] = set()
    for term in pod_requirement_terms(t):
        values = None
        for keys in (ZONE_NAME_KEYS, (ZONE_ID,)):
            v = _in_values(term, keys)
            if v is not None and len(v) == 1:
                values = v
        if values is None:
            return False
        zones |= values
    return len(zones) == 1


def single_subnet(run, pool: NodePoolView) -> bool:
    """The pool's EC2NodeClass selects exactly one subnet by id (a subnet lives in one AZ)."""
    name = pool.node_class_name
    if not name:
        return False
    for nc in run.find("EC2NodeClass", name, group="karpenter.k8s.aws"):
        terms = nc.get(("spec", "subnetSelectorTerms"))
        if (
            isinstance(terms, list)
            and len(terms) == 1
            and isinstance(terms[0], dict)
            and set(terms[0]) == {"id"}
            and isinstance(terms[0]["id"], str)
        ):
            return True
    return False


def template_location(t: PodTemplate) -> Location:
    return t.resource.location(t.path)


def who(templates: list[PodTemplate]) -> str:
    return fmt_list([t.display() for t in templates], limit=2)


def type_list(types: Iterable[InstanceType], attr: str = "max_efa") -> str:
    return fmt_list([f"{it.name} ({getattr(it, attr)})" for it in sorted(types, key=lambda i: i.name)])


def efa_containers(t: PodTemplate) -> list[Container]:
    return [c for c in t.containers if c.count(EFA) > 0]


# --- EML101 efa-multi-az --------------------------------------------------------------------


def efa_multi_az(ctx, resource: Resource):
    """A NodePool that launches EFA nodes for EFA pods must pin exactly one zone."""
    pool = pool_of(ctx.run, resource)
    if pool is None:
        return
    count, zones = pool_zone_count(pool)
    if count == 1 or single_subnet(ctx.run, pool):
        return  # pool-level exemptions first: they make the scan over templates unnecessary
    tenants = [t for ids, ts in _multi_az_groups(ctx.run) if id(pool) in ids for t in ts]
    served = []
    for t in sorted(tenants, key=_template_order(ctx.run)):
        types = types_on(ctx.run, t, pool)
        if types is not None and not any(it.is_efa_capable for it in types):
            continue  # no EFA node here for this pod (EML102 reports the over-request)
        served.append(t)
    if not served:
        return
    idx = pool.requirement_index(ZONE)
    if idx is None:
        idx = pool.requirement_index(ZONE_ID)
    path = REQUIREMENTS + ((idx, "values") if idx is not None else ())
    if count is None:
        what = "does not pin a zone (topology.kubernetes.io/zone In [one zone])"
    elif count == 0:
        what = "allows no zone at all"
    else:
        what = f"allows {count} zones ({fmt_list(zones)})"
    yield ctx.report(
        resource,
        path,
        f"NodePool {pool.name!r} launches EFA nodes for {who(served)} but {what}; EFA traffic cannot "
        "cross Availability Zones, so the nodes of one job must share a zone",
        fix=_pin_zone_fix(pool, idx),
        related=[template_location(t) for t in served],
    )


def _pin_zone_fix(pool: NodePoolView, idx: int | None) -> Fix | None:
    """Keep only the first zone the requirement lists; nothing to pin when none is listed."""
    if idx is None:
        return None
    req = pool.template_spec["requirements"][idx]
    values = req.get("values")
    if req.get("operator", "In") != "In" or not isinstance(values, list) or not values:
        return None
    first = str(values[0])
    return Fix(
        f"Pin NodePool {pool.name!r} to zone {first}",
        (SetValue(REQUIREMENTS + (idx, "values"), [first]),),
        Applicability.UNSAFE,
    )


# --- EML102 efa-over-request ----------------------------------------------------------------


def _resource_value_path(c: Container, resource: str) -> DocPath:
    if resource in c.limits:
        return c.path + ("resources", "limits", resource)
    if resource in c.requests:
        return c.path + ("resources", "requests", resource)
    return c.path + ("resources",)


def efa_over_request(ctx, t: PodTemplate):
    n = t.device_count(EFA)
    if n <= 0:
        return
    types = placement(ctx.run, t).instance_types
    if not types:
        return  # unknown, or lands nowhere (EML702 territory)
    most = max(it.max_efa for it in types)
    if n <= most:
        return
    carriers = efa_containers(t)
    where = carriers[0] if carriers else None
    path = _resource_value_path(where, EFA) if where else t.spec_path
    if most == 0:
        msg = (
            f"requests {n} vpc.amazonaws.com/efa per pod but none of the instance types it lands on "
            f"({fmt_list(sorted(it.name for it in types))}) has an EFA interface; the pod never schedules"
        )
    else:
        msg = (
            f"requests {n} vpc.amazonaws.com/efa per pod but the instance types it lands on offer at most "
            f"{most} EFA interfaces ({type_list(types)}); the pod never schedules"
        )
    yield ctx.report(t.resource, path, msg, fix=_efa_max_fix(carriers, types))


def _efa_max_fix(carriers: list[Container], types: tuple[InstanceType, ...]) -> Fix | None:
    """Set the single EFA-carrying container to the EFA count every EFA-capable landing type offers."""
    capable = [it.max_efa for it in types if it.max_efa > 0]
    if len(carriers) != 1 or not capable:
        return None
    c, value = carriers[0], min(capable)
    ops = [
        SetValue(c.path + ("resources", which, EFA), value)
        for which, present in (("limits", c.limits), ("requests", c.requests))
        if EFA in present
    ]
    return Fix(f"Set vpc.amazonaws.com/efa of container {c.name!r} to {value}", tuple(ops))


# --- EML103 efa-not-requested ---------------------------------------------------------------


def efa_not_requested(ctx, t: PodTemplate):
    w = t.workload
    if not t.is_training or not w.is_multi_pod or t not in w.collective_templates:
        return
    if not t.containers or any(EFA in c.limits or EFA in c.requests for c in t.containers + t.init_containers):
        return  # EFA requested (even with a value we cannot read: EML002/EML601 speak for that)
    types = placement(ctx.run, t).instance_types
    if not types or not all(it.is_efa_capable for it in types):
        yield from _efa_env_without_efa(ctx, t)
        return
    c = next((c for c in t.containers if any(c.count(r) for r in t.accelerators)), t.containers[0])
    value = efa_share(t, types)
    path = c.path + ("resources",) if isinstance(c.data.get("resources"), dict) else c.path + ("name",)
    fix = None
    if value:
        ops = [SetValue(c.path + ("resources", "limits", EFA), value)]
        if any(r in c.requests for r in DEVICE_PLUGIN_RESOURCES):
            ops.append(SetValue(c.path + ("resources", "requests", EFA), value))
        fix = Fix(f"Request {value} vpc.amazonaws.com/efa in container {c.name!r}", tuple(ops))
    yield ctx.report(
        t.resource,
        path,
        f"multi-node training pod lands only on EFA-capable instance types ({type_list(types)}) but "
        "requests no vpc.amazonaws.com/efa, so its collectives between nodes fall back to TCP sockets",
        fix=fix,
    )


def _efa_env_without_efa(ctx, t: PodTemplate) -> Iterator:
    """A collective pod that selects libfabric's efa provider (``FI_PROVIDER=efa``) but requests no
    EFA device, where the landing types do not settle it: the intent is EFA, the pod gets none."""
    for c in t.containers:
        for setting in list(env_settings(c)) + list(argv_settings(c)):
            if setting.name != "FI_PROVIDER" or not _selects_efa(setting.value):
                continue
            yield ctx.report(
                t.resource,
                setting.path,
                f"container {c.name!r} selects the libfabric efa provider (FI_PROVIDER={setting.value.strip()} "
                f"via {setting.how}) but the pod requests no vpc.amazonaws.com/efa, so it gets no EFA device: "
                "aws-ofi-nccl cannot initialise and NCCL falls back to TCP sockets between nodes",
            )
            return


def _selects_efa(value: str) -> bool:
    low = value.strip().strip("'\"").strip().lower()
    return not low.startswith("^") and "efa" in [p.strip() for p in low.split(",")]


def efa_share(t: PodTemplate, types: tuple[InstanceType, ...]) -> int:
    """EFA interfaces the pod can take without changing how many pods fit on a node: the instance
    maximum scaled by the pod's share of the node's accelerators, rounded down, minimum over the
    landing types. 0 when some type has fewer EFAs than pods per node (then no fix is offered)."""
    values = []
    for it in types:
        capacity = it.resource_capacity()
        shares = [n / capacity[r] for r, n in t.accelerators.items() if capacity.get(r)]
        share = min(1.0, max(shares)) if shares else 1.0
        values.append(int(it.max_efa * share + 1e-9))
    return min(values) if values else 0


# --- EML104 efa-env-conflict ----------------------------------------------------------------

TRANSPORT_VARS = ("FI_PROVIDER", "NCCL_NET", "NCCL_NET_PLUGIN")
_ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.S)


def transport_conflict(name: str, value: str) -> str | None:
    """Why ``name=value`` keeps traffic off EFA, or None when it does not."""
    v = value.strip().strip("'\"").strip()
    if not v:
        return None
    low = v.lower()
    if name == "FI_PROVIDER":
        providers = [p.strip() for p in low.lstrip("^").split(",") if p.strip()]
        if low.startswith("^"):
            return "excludes the libfabric efa provider" if "efa" in providers else None
        return None if "efa" in providers else f"selects the libfabric {v} provider instead of efa"
    if name == "NCCL_NET":
        if low == "socket":
            return "forces NCCL's TCP socket transport"
        if low == "ib":
            return "forces NCCL's internal InfiniBand verbs transport, which cannot drive EFA"
        return None
    if name == "NCCL_NET_PLUGIN" and low in ("none", "0", "disabled"):
        return "stops NCCL from loading aws-ofi-nccl (its only way to EFA)"
    return None


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


def _conflicts(settings: Iterable[EnvSetting]) -> Iterator[tuple[EnvSetting, str]]:
    """The settings that keep NCCL/libfabric off EFA, with why."""
    for s in settings:
        why = transport_conflict(s.name, s.value)
        if why:
            yield s, why


def efa_env_conflict(ctx, t: PodTemplate):
    w = t.workload
    if t.device_count(EFA) > 0:
        n = t.device_count(EFA)
        subjects = efa_containers(t) or t.containers
        for c in subjects:
            for s, why in _conflicts([*env_settings(c), *argv_settings(c)]):
                yield ctx.report(
                    t.resource,
                    s.path,
                    f"{s.name}={s.value.strip()} ({s.how}) {why} although the pod requests {n} "
                    "vpc.amazonaws.com/efa, so EFA is never used",
                )
    elif t.role == "launcher" and w.kind == "MPIJob":
        workers = [o for o in w.templates if o is not t and o.device_count(EFA) > 0]
        if not workers:
            return
        n = max(o.device_count(EFA) for o in workers)
        for c in t.containers:
            for s, why in _conflicts(argv_settings(c)):
                yield ctx.report(
                    t.resource,
                    s.path,
                    f"{s.name}={s.value.strip()} ({s.how}) {why} on the workers, which request {n} "
                    "vpc.amazonaws.com/efa, so EFA is never used",
                    related=[template_location(o) for o in workers],
                )


# --- EML105 efa-device-plugin-coverage ------------------------------------------------------


def is_efa_plugin(t: PodTemplate) -> bool:
    if t.resource.kind != "DaemonSet":
        return False
    if EFA_PLUGIN in (t.resource.name or ""):
        return True
    return any(EFA_PLUGIN in (c.image or "") for c in t.containers)


def selects_pool(t: PodTemplate, pool: NodePoolView) -> bool:
    return any(compatible(term, pool) for term in pod_requirement_terms(t))


@dataclass
class Gap:
    plugin: PodTemplate
    pool: NodePoolView | None
    reason: str  # taint | selector | types
    detail: tuple
    landed: bool = True
    users: list[PodTemplate] = field(default_factory=list)


def _selector_path(t: PodTemplate) -> DocPath:
    ns = t.spec.get("nodeSelector")
    if isinstance(ns, dict):
        if INSTANCE_TYPE in ns:
            return t.spec_path + ("nodeSelector", INSTANCE_TYPE)
        return t.spec_path + ("nodeSelector",)
    if isinstance(t.spec.get("affinity"), dict):
        return t.spec_path + ("affinity",)
    return t.spec_path


def _coverage_gaps(run, plugins: list[PodTemplate], t: PodTemplate) -> Iterator[Gap]:
    known = placement(run, t).present  # NodePools in the run and a selector that is not templated
    pools, landed = target_pools(run, t) if known else ([], True)
    if not known:
        needed = placement(run, t).instance_types
        if not needed:
            return
        needed = tuple(it for it in needed if it.is_efa_capable)
        covered: set[str] = set()
        for p in plugins:
            types = placement(run, p).instance_types
            if types is None:
                return  # some plugin runs on every instance type
            covered |= {it.name for it in types}
        missing = tuple(sorted(it.name for it in needed if it.name not in covered))
        if missing:
            yield Gap(plugins[0], None, "types", missing)
        return
    for pool in pools:
        needed = types_on(run, t, pool)
        if needed is not None:
            needed = tuple(it for it in needed if it.is_efa_capable)
            if not needed:
                continue  # no EFA node for this pod on this pool
        selecting = [p for p in plugins if selects_pool(p, pool)]
        if not selecting:
            yield Gap(plugins[0], pool, "selector", (), landed)
            continue
        if not any(not untolerated(p, pool) for p in selecting):
            taints = untolerated(selecting[0], pool)
            yield Gap(
                selecting[0],
                pool,
                "taint",
                tuple(f"{x.key}={x.value}:{x.effect}" if x.value else f"{x.key}:{x.effect}" for x in taints),
                landed,
            )
        if needed is None:
            continue
        covered: set[str] | None = set()
        for p in selecting:
            types = types_on(run, p, pool)
            if types is None:
                covered = None
                break
            covered |= {it.name for it in types}
        if covered is None:
            continue
        missing = tuple(sorted(it.name for it in needed if it.name not in covered))
        if missing:
            yield Gap(selecting[0], pool, "types", missing, landed)


def efa_device_plugin_coverage(ctx, run):
    plugins = [t for t in run.templates if is_efa_plugin(t)]
    if not plugins:
        return
    gaps: dict[tuple, Gap] = {}
    for t in run.templates:
        if t.device_count(EFA) <= 0 or is_efa_plugin(t):
            continue
        for gap in _coverage_gaps(run, plugins, t):
            key = (id(gap.plugin), id(gap.pool), gap.reason, gap.detail, gap.landed)
            gaps.setdefault(key, gap).users.append(t)
    for gap in gaps.values():
        d = gap.plugin
        name = d.resource.ref.display()
        users = who(gap.users)
        at = f"NodePool {gap.pool.name!r}" if gap.pool else "nodes"
        if gap.reason == "taint":
            path = d.spec_path + ("tolerations",)
            what = f"does not tolerate taint {fmt_list(gap.detail)} of {at}"
        elif gap.reason == "selector":
            path = _selector_path(d)
            what = f"has a nodeSelector/affinity that matches no node of {at}"
        else:
            path = _selector_path(d)
            what = f"does not run on {fmt_list(gap.detail)} ({at})"
        related = [template_location(u) for u in gap.users]
        if gap.pool is not None:
            related.insert(0, gap.pool.resource.location(()))
        yield ctx.report(
            d.resource,
            path,
            f"EFA device plugin {name} {what}, where EFA pods {'land' if gap.landed else 'are meant to land'} "
            f"({users}); those nodes never advertise "
            "vpc.amazonaws.com/efa and the pods stay Pending",
            related=related,
        )


# --- EML106 spot-for-collective -------------------------------------------------------------


def allowed_capacity(reqs: Iterable[Requirement], start: set[str] | None) -> set[str] | None:
    """Capacity types allowed by ``reqs`` starting from ``start`` (None: no requirement seen)."""
    allowed = start
    for key, op, values in reqs:
        if key != CAPACITY_TYPE:
            continue
        base = set(CAPACITY_TYPES) if allowed is None else allowed
        if op == "In":
            allowed = base & set(values)
        elif op == "NotIn":
            allowed = base - set(values)
        elif op == "Exists":
            allowed = base
        elif op == "DoesNotExist":
            allowed = set()
    return allowed


def pool_capacity(pool: NodePoolView) -> set[str]:
    """Capacity types the pool allows; without a capacity-type requirement, every type (Karpenter
    v1 applies no default and then prefers spot over on-demand)."""
    allowed = allowed_capacity(pool.offered, None)
    return set(CAPACITY_TYPES) if allowed is None else allowed


def template_may_use(t: PodTemplate, pool_allowed: set[str], reclaimable: set[str]) -> bool:
    """Some requirement term of ``t`` lets it get one of the ``reclaimable`` capacity types."""
    for term in pod_requirement_terms(t):
        allowed = allowed_capacity(term, set(pool_allowed))
        if (pool_allowed if allowed is None else allowed) & reclaimable:
            return True
    return False


def interruptible_reservations(pool: NodePoolView) -> bool:
    """The pool asks for interruptible capacity reservations (reclaimed with a notice, like spot)."""
    return any(
        key == L_RESERVATION_INTERRUPTIBLE and op == "In" and "true" in values for key, op, values in pool.offered
    )


def spot_for_collective(ctx, resource: Resource):
    pool = pool_of(ctx.run, resource)
    if pool is None:
        return
    allowed = pool_capacity(pool)
    interruptible = "reserved" in allowed and interruptible_reservations(pool)
    reclaimable = (allowed & RECLAIMABLE_CAPACITY_TYPES) | ({"reserved"} if interruptible else set())
    if not reclaimable:
        return
    served = []
    for t in ctx.run.templates:
        w = t.workload
        if not (t.is_training and w.is_multi_pod and t in w.collective_templates) or not ctx.judges(t):
            continue
        if not placement(ctx.run, t).hosts(pool) or not template_may_use(t, allowed, reclaimable):
            continue  # it does not land here, or no instance type of this pool has its accelerators
        served.append(t)
    if not served:
        return
    idx = pool.requirement_index(CAPACITY_TYPE)
    path = REQUIREMENTS + ((idx,) if idx is not None else ())
    if idx is not None and isinstance(pool.template_spec["requirements"][idx].get("values"), list):
        path = path + ("values",)
    pods = sum(t.workload.collective_size for t in {id(t.workload): t for t in served}.values())
    if "spot" not in reclaimable:
        how, why = "allows interruptible capacity reservations", "EC2 reclaims them with a notice, like spot"
    else:
        how = (
            "allows spot capacity"
            if idx is not None
            else "has no karpenter.sh/capacity-type requirement, so it allows spot capacity,"
        )
        why = "Karpenter prefers spot"
    yield ctx.report(
        resource,
        path,
        f"NodePool {pool.name!r} {how} and serves multi-node training {who(served)} "
        f"({pods} pods in total); {why}, and one reclaim (a short notice, not stopped by "
        "do-not-disrupt) kills the whole collective",
        fix=None if interruptible else _no_spot_fix(pool, allowed),
        related=[template_location(t) for t in served],
    )


def _no_spot_fix(pool: NodePoolView, allowed: set[str]) -> Fix | None:
    """Drop spot from the pool's only capacity-type requirement, keeping the other allowed types."""
    reqs = pool.template_spec.get("requirements")
    indices = [i for i, r in enumerate(reqs or []) if isinstance(r, dict) and r.get("key") == CAPACITY_TYPE]
    if not indices and isinstance(reqs, list):
        ops_add = (AppendItem(REQUIREMENTS, {"key": CAPACITY_TYPE, "operator": "In", "values": ["on-demand"]}),)
        return Fix(f"Restrict NodePool {pool.name!r} to on-demand capacity", ops_add, Applicability.UNSAFE)
    if len(indices) != 1:
        return None
    base = REQUIREMENTS + (indices[0],)
    req = reqs[indices[0]]
    if req.get("operator", "In") == "In" and isinstance(req.get("values"), list):
        values = [str(v) for v in req["values"] if str(v) != "spot"] or ["on-demand"]
        ops: tuple = (SetValue(base + ("values",), values),)
    else:
        values = [c for c in CAPACITY_TYPES if c in allowed and c != "spot"] or ["on-demand"]
        ops = (SetValue(base + ("operator",), "In"), SetValue(base + ("values",), values))
    return Fix(f"Restrict NodePool {pool.name!r} to {', '.join(values)} capacity", ops, Applicability.UNSAFE)
