"""Where can a pod template land? NodePool requirements, node selectors, affinity and taints.

Karpenter semantics (facts file, section 3): a pod's constraints must fall inside a NodePool's
requirements; labels Karpenter itself sets (instance type, zone, capacity type, ``karpenter.k8s.aws/*``)
are satisfiable even when the NodePool does not mention them, but a custom label is only satisfiable
when the NodePool's template sets it. The capacity-reservation labels are the exception among
Karpenter's own: only reserved nodes carry them, so they need a pool that allows capacity type
``reserved``. Startup taints need no toleration.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

from eksmllint.catalogue import RESERVATION_LABELS, InstanceType, get_catalogue
from eksmllint.lazy import cached_property, kept_on
from eksmllint.placeholders import is_placeholder
from eksmllint.resource import Resource
from eksmllint.workload import PodTemplate

Requirement = tuple[str, str, tuple[str, ...]]  # (key, operator, values)

INSTANCE_TYPE = "node.kubernetes.io/instance-type"
ZONE = "topology.kubernetes.io/zone"
ZONE_ID = "topology.k8s.aws/zone-id"
#: Node label keys whose values are zone names (us-east-1a); ZONE_ID values are IDs (use1-az1).
ZONE_NAME_KEYS = (ZONE, "failure-domain.beta.kubernetes.io/zone")
#: Taint effects that keep a pod off a node it does not tolerate (PreferNoSchedule only discourages).
BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")
CAPACITY_TYPE = "karpenter.sh/capacity-type"
WELL_KNOWN_PREFIXES = ("karpenter.k8s.aws/", "karpenter.sh/")
WELL_KNOWN = frozenset(
    {
        INSTANCE_TYPE,
        "beta.kubernetes.io/instance-type",
        ZONE,
        "failure-domain.beta.kubernetes.io/zone",
        "topology.kubernetes.io/region",
        "kubernetes.io/arch",
        "kubernetes.io/os",
        "kubernetes.io/hostname",
        "node.kubernetes.io/windows-build",
        "topology.k8s.aws/zone-id",
    }
)
#: Keys whose values the catalogue knows completely; an unknown value means "not an accelerated type".
INSTANCE_KEYS = frozenset(
    {
        INSTANCE_TYPE,
        "beta.kubernetes.io/instance-type",
        "karpenter.k8s.aws/instance-family",
        "karpenter.k8s.aws/instance-category",
        "karpenter.k8s.aws/instance-gpu-name",
        "karpenter.k8s.aws/instance-accelerator-name",
        "karpenter.k8s.aws/instance-size",
        "karpenter.k8s.aws/instance-generation",
        "karpenter.k8s.aws/instance-gpu-count",
        "karpenter.k8s.aws/instance-accelerator-count",
        "karpenter.k8s.aws/instance-gpu-manufacturer",
        "karpenter.k8s.aws/instance-cpu",
        "karpenter.k8s.aws/instance-memory",
    }
)
_CLOSED_KEYS = {
    INSTANCE_TYPE: "instance-type",
    "beta.kubernetes.io/instance-type": "instance-type",
    "karpenter.k8s.aws/instance-family": "karpenter.k8s.aws/instance-family",
    "karpenter.k8s.aws/instance-category": "karpenter.k8s.aws/instance-category",
    "karpenter.k8s.aws/instance-gpu-name": "karpenter.k8s.aws/instance-gpu-name",
    "karpenter.k8s.aws/instance-accelerator-name": "karpenter.k8s.aws/instance-accelerator-name",
}


def is_well_known(key: str) -> bool:
    """A label Karpenter sets itself: satisfiable even when a NodePool does not mention it."""
    return key in WELL_KNOWN or key.startswith(WELL_KNOWN_PREFIXES)


def parse_requirements(items: object) -> list[Requirement]:
    out: list[Requirement] = []
    if isinstance(items, list):
        for r in items:
            if isinstance(r, dict) and isinstance(r.get("key"), str):
                vals = r.get("values")
                values = tuple(str(v) for v in vals) if isinstance(vals, list) else ()
                out.append((r["key"], str(r.get("operator", "In")), values))
    return out


@dataclass(frozen=True)
class Taint:
    key: str
    value: str
    effect: str
    index: int


def parse_taints(items: object) -> list[Taint]:
    out = []
    if isinstance(items, list):
        for i, t in enumerate(items):
            if isinstance(t, dict) and isinstance(t.get("key"), str):
                out.append(Taint(t["key"], str(t.get("value", "") or ""), str(t.get("effect", "")), i))
    return out


#: Tolerations the DaemonSet controller adds to every DaemonSet pod (Kubernetes DaemonSet docs).
DAEMONSET_TOLERATIONS = (
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
)


def untolerated(t: PodTemplate, pool: NodePoolView) -> list[Taint]:
    """Every scheduling taint of ``pool`` the pod does not tolerate (startup taints need none); a
    DaemonSet's pods also carry the tolerations its controller adds."""
    tolerations = t.tolerations + list(DAEMONSET_TOLERATIONS) if t.resource.kind == "DaemonSet" else t.tolerations
    return [x for x in pool.taints if x.effect in BLOCKING_EFFECTS and not tolerates(tolerations, x)]


def tolerates(tolerations: Iterable[dict], taint: Taint) -> bool:
    if taint.effect == "PreferNoSchedule":
        return True
    for tol in tolerations:
        key = tol.get("key")
        op = tol.get("operator", "Equal")
        effect = tol.get("effect")
        if effect and effect != taint.effect:
            continue
        if op == "Exists":
            if not key or key == taint.key:
                return True
        elif key == taint.key and str(tol.get("value", "") or "") == taint.value:
            return True
    return False


class NodePoolView:
    """A Karpenter NodePool (v1, and v1beta1 read the same way where the fields agree)."""

    def __init__(self, resource: Resource) -> None:
        self.resource = resource
        self.name = resource.name or ""
        tspec = resource.get(("spec", "template", "spec"))
        self.template_spec: dict = tspec if isinstance(tspec, dict) else {}
        self.requirements = parse_requirements(self.template_spec.get("requirements"))
        labels = resource.get(("spec", "template", "metadata", "labels"))
        self.labels: dict[str, str] = {str(k): str(v) for k, v in labels.items()} if isinstance(labels, dict) else {}
        self.taints = parse_taints(self.template_spec.get("taints"))

    @cached_property
    def offered(self) -> list[Requirement]:
        """What nodes of this pool carry: requirements plus template labels as ``In [value]``."""
        reqs = list(self.requirements)
        reqs += [(k, "In", (v,)) for k, v in self.labels.items()]
        reqs.append(("karpenter.sh/nodepool", "In", (self.name,)))
        return reqs

    def values_for(self, key: str) -> tuple[str, ...] | None:
        """Allowed values of an ``In`` requirement on ``key`` (None: unconstrained)."""
        allowed: set[str] | None = None
        for k, op, vals in self.offered:
            if k == key and op == "In":
                allowed = set(vals) if allowed is None else allowed & set(vals)
        return tuple(sorted(allowed)) if allowed is not None else None

    def requirement_index(self, key: str) -> int | None:
        reqs = self.template_spec.get("requirements")
        if isinstance(reqs, list):
            for i, r in enumerate(reqs):
                if isinstance(r, dict) and r.get("key") == key:
                    return i
        return None

    @property
    def node_class_name(self) -> str | None:
        ref = self.template_spec.get("nodeClassRef")
        name = ref.get("name") if isinstance(ref, dict) else None
        return name if isinstance(name, str) else None

    @cached_property
    def instance_types(self) -> tuple[InstanceType, ...] | None:
        return instance_types_for(self.requirements)


def instance_types_for(reqs: Iterable[Requirement]) -> tuple[InstanceType, ...] | None:
    """Catalogue types satisfying ``reqs``; None when the constraint is not closed over the catalogue
    (nothing pins the type, or it names types the catalogue does not know): rules stay silent.
    Cached on the instance-relevant requirements: pods x NodePools repeat the same few sets."""
    return _instance_types_for(tuple(sorted(r for r in reqs if r[0] in INSTANCE_KEYS)))


@lru_cache(maxsize=4096)
def _instance_types_for(instance_reqs: tuple[Requirement, ...]) -> tuple[InstanceType, ...] | None:
    if not instance_reqs:
        return None
    cat = get_catalogue()
    known = _known_values()
    pinned = False
    for key, op, values in instance_reqs:
        if key in _CLOSED_KEYS and op == "In":
            if not set(values) <= known[_CLOSED_KEYS[key]]:
                return None
            pinned = True
        elif key in ("karpenter.k8s.aws/instance-gpu-count", "karpenter.k8s.aws/instance-accelerator-count"):
            pinned = pinned or op in ("Gt", "Gte", "Exists", "In")
    if not pinned:
        return None
    return tuple(cat.matching(list(instance_reqs)))


_KNOWN_CACHE: dict[str, set[str]] = {}


def _known_values() -> dict[str, set[str]]:
    if not _KNOWN_CACHE:
        # Built aside and published in one step: another thread (the webhook lints on several)
        # must never see a half-filled table.
        known: dict[str, set[str]] = {}
        for it in get_catalogue().all():
            for key, value in it.labels().items():
                known.setdefault(key, set()).add(value)
            known.setdefault("instance-type", set()).add(it.name)
        for key in _CLOSED_KEYS.values():
            known.setdefault(key, set())
        _KNOWN_CACHE.update(known)
    return _KNOWN_CACHE


@kept_on
def pod_requirement_terms(t: PodTemplate) -> list[list[Requirement]]:
    """OR-of-ANDs: nodeSelector ANDed into every required node-affinity term."""
    base: list[Requirement] = [(k, "In", (v,)) for k, v in t.node_selector.items()]
    terms = t.spec.get("affinity", {})
    terms = terms.get("nodeAffinity", {}) if isinstance(terms, dict) else {}
    terms = terms.get("requiredDuringSchedulingIgnoredDuringExecution", {}) if isinstance(terms, dict) else {}
    terms = terms.get("nodeSelectorTerms") if isinstance(terms, dict) else None
    if not isinstance(terms, list) or not terms:
        return [base]
    out = []
    for term in terms:
        exprs = term.get("matchExpressions") if isinstance(term, dict) else None
        out.append(base + parse_requirements(exprs))
    return out


def compatible(pod_reqs: list[Requirement], pool: NodePoolView) -> bool:
    """Can ``pool`` create a node satisfying ``pod_reqs``? Labels first, then instance types: when
    either side pins a set of catalogue types, those types must satisfy the other side's
    instance requirements (a pod pinned to p5.48xlarge cannot land on a pool of m/c types)."""
    return _labels_compatible(pod_reqs, pool) and _instance_compatible(pod_reqs, pool)


def _instance_compatible(pod_reqs: list[Requirement], pool: NodePoolView) -> bool:
    pod_instance = [r for r in pod_reqs if r[0] in INSTANCE_KEYS]
    pool_instance = [r for r in pool.requirements if r[0] in INSTANCE_KEYS]
    if not pod_instance or not pool_instance:
        return True
    cat = get_catalogue()
    pod_types = instance_types_for(pod_instance)
    if pod_types is not None:
        return (
            bool(cat.matching(pool_instance + [(INSTANCE_TYPE, "In", tuple(t.name for t in pod_types))]))
            if pod_types
            else False
        )
    pool_types = pool.instance_types
    if pool_types is not None:
        return bool(instance_types_for(pool_instance + pod_instance)) if pool_types else False
    return True


#: Operators a node without the label never satisfies.
_NEEDS_LABEL = frozenset({"In", "Exists", "Gt", "Lt"})
_RESERVATION_LABELS = frozenset(RESERVATION_LABELS)
_RESERVED: Requirement = (CAPACITY_TYPE, "In", ("reserved",))


def reserved_only(req: Requirement) -> bool:
    """Whether only a reserved node can satisfy ``req``: it selects a capacity-reservation label,
    which Karpenter sets on nodes launched into a reservation (capacity type ``reserved``) only."""
    return req[0] in _RESERVATION_LABELS and req[1] in _NEEDS_LABEL


def _labels_compatible(pod_reqs: list[Requirement], pool: NodePoolView) -> bool:
    for key, op, _ in pod_reqs:  # a plain loop: this runs for every pod term and NodePool
        if key in _RESERVATION_LABELS and op in _NEEDS_LABEL:
            pod_reqs = pod_reqs + [_RESERVED]
            break
    for key, op, values in pod_reqs:
        offered = [r for r in pool.offered if r[0] == key]
        if not offered:
            if op in ("NotIn", "DoesNotExist"):
                continue
            if not is_well_known(key):
                return False  # Karpenter cannot create a node with a label the pool does not set
            continue
        for _, pop, pvals in offered:
            if pop == "In" and op == "In" and not set(values) & set(pvals):
                return False
            if pop == "In" and op == "NotIn" and set(pvals) <= set(values):
                return False
            if pop in ("NotIn",) and op == "In" and set(values) <= set(pvals):
                return False
            if pop == "DoesNotExist" and op in ("In", "Exists"):
                return False
            if pop in ("In", "Exists") and op == "DoesNotExist":
                return False
    return True


@dataclass
class Landing:
    """Result of placing one pod template on the NodePools of the run (labels and taints; the
    device fit is :mod:`eksmllint.analysis.placement`'s)."""

    pools: list[NodePoolView] = field(default_factory=list)  # compatible and tolerated
    blocked: list[tuple[NodePoolView, Taint]] = field(default_factory=list)  # compatible, taint not tolerated
    pools_present: bool = False
    terms: list[list[Requirement]] = field(default_factory=list)

    @cached_property
    def instance_types(self) -> tuple[InstanceType, ...] | None:
        """Types of the compatible pools the terms allow (None = unknown: stay silent); computed
        on first use (most runs read the placement's device-aware types instead)."""
        return _landing_types(self.terms, self.pools if self.pools_present else None)


def _toleration_key(tol: dict) -> tuple:
    """What :func:`tolerates` reads from one toleration, as a hashable value."""
    key, effect = tol.get("key"), tol.get("effect")
    return (
        key if key is None or isinstance(key, str) else ("?", bool(key)),
        tol.get("operator", "Equal") == "Exists",
        str(tol.get("value", "") or ""),
        None if not effect else effect if isinstance(effect, str) else ("?",),
    )


def placement_key(t: PodTemplate) -> tuple:
    """Everything :func:`land` reads from a template (its requirement terms and tolerations):
    templates with equal keys land in the same places, so a run places each key once."""
    return (tuple(tuple(term) for term in pod_requirement_terms(t)), tuple(_toleration_key(x) for x in t.tolerations))


def land(t: PodTemplate, pools: list[NodePoolView]) -> Landing:
    terms = pod_requirement_terms(t)
    if any(_templated(r) for term in terms for r in term):
        # a selector filled in at apply time (`${INSTANCE_TYPE}`): where the pod lands is unknown,
        # as if the run had no NodePools, so no rule claims "no pool" or "lands on X"
        return Landing(pools_present=False, terms=[[r for r in term if not _templated(r)] for term in terms])
    result = Landing(pools_present=bool(pools), terms=terms)
    tolerations = t.tolerations
    for pool in pools:
        if not any(compatible(term, pool) for term in terms):
            continue
        untolerated = [
            taint
            for taint in pool.taints
            if taint.effect in ("NoSchedule", "NoExecute") and not tolerates(tolerations, taint)
        ]
        if untolerated:
            result.blocked.append((pool, untolerated[0]))
        else:
            result.pools.append(pool)
    return result


def _templated(req: Requirement) -> bool:
    key, _op, values = req
    return is_placeholder(key) or any(is_placeholder(v) for v in values)


def _landing_types(terms: list[list[Requirement]], pools: list[NodePoolView] | None) -> tuple[InstanceType, ...] | None:
    if pools is None:  # no NodePools in the run: only the pod's own constraints pin the type
        found: dict[str, InstanceType] = {}
        for term in terms:
            types = instance_types_for(term)
            if types is None:
                return None
            found.update((it.name, it) for it in types)
        return tuple(found.values())
    if not pools:
        return ()
    found = {}
    for pool in pools:
        for term in terms:
            if not compatible(term, pool):
                continue
            types = instance_types_for(pool.requirements + [r for r in term if r[0] in INSTANCE_KEYS])
            if types is None:
                return None
            found.update((it.name, it) for it in types)
    return tuple(found.values())
