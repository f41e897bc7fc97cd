"""Where can a pod template land? NodePool requirements, node selectors, affinity and taints.

Karpenter semantics (facts file, section 3): a pod's constraints must fall inside a NodePool's
requirements; labels the pool's provisioner sets itself (instance type, zone, capacity type,
``karpenter.k8s.aws/*`` for Karpenter, ``eks.amazonaws.com/instance-*`` for EKS Auto Mode:
``platform/provisioners.yaml``) are satisfiable even when the NodePool does not mention them, but a
custom label is only satisfiable when the NodePool's template sets it. The capacity-reservation
labels are the exception among Karpenter's own: only reserved nodes carry them, so they need a pool
that allows capacity type ``reserved``. Startup taints need no toleration.

Which pools a pod is judged against (the provisioner it aims at, the open world) and the landing
itself are :mod:`eksmllint.landing`'s.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from eksmllint.catalogue import LABEL_ALIASES, RESERVATION_LABELS, InstanceType, ec2_instance_name, get_catalogue
from eksmllint.lazy import cached_property, kept_on
from eksmllint.platform.provisioners import Provisioner, provisioners
from eksmllint.resource import Resource
from eksmllint.workload import PodTemplate

Requirement = tuple[str, str, tuple[str, ...]]  # (key, operator, values)


def canonical_key(key: str) -> str:
    """The catalogue's key for a provider's label (``eks.amazonaws.com/instance-family`` ->
    ``karpenter.k8s.aws/instance-family``); instance-type math only."""
    return LABEL_ALIASES.get(key, key)


INSTANCE_TYPE = "node.kubernetes.io/instance-type"
ZONE = "topology.kubernetes.io/zone"
ZONE_ID = "topology.k8s.aws/zone-id"
#: Node label keys whose values are zone names (us-east-1a); ZONE_ID values are IDs (use1-az1).
ZONE_NAME_KEYS = (ZONE, "failure-domain.beta.kubernetes.io/zone")
#: Taint effects that keep a pod off a node it does not tolerate (PreferNoSchedule only discourages).
BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")
CAPACITY_TYPE = "karpenter.sh/capacity-type"
NODEPOOL_LABEL = "karpenter.sh/nodepool"
#: Labels every node carries, whoever provisioned it (platform/provisioners.yaml ``common-labels``).
WELL_KNOWN = frozenset(provisioners().common_labels.keys)
_CATALOGUE_INSTANCE_KEYS = (
    INSTANCE_TYPE,
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
)
#: Keys whose values the catalogue knows completely (with every provider's alias of them); an
#: unknown value means "not an accelerated type".
INSTANCE_KEYS = frozenset(_CATALOGUE_INSTANCE_KEYS) | frozenset(
    alias for alias, key in LABEL_ALIASES.items() if key in _CATALOGUE_INSTANCE_KEYS
)
_CLOSED = {
    INSTANCE_TYPE: "instance-type",
    "karpenter.k8s.aws/instance-family": "karpenter.k8s.aws/instance-family",
    "karpenter.k8s.aws/instance-category": "karpenter.k8s.aws/instance-category",
    "karpenter.k8s.aws/instance-gpu-name": "karpenter.k8s.aws/instance-gpu-name",
    "karpenter.k8s.aws/instance-accelerator-name": "karpenter.k8s.aws/instance-accelerator-name",
}
_CLOSED_KEYS = {k: _CLOSED[canonical_key(k)] for k in INSTANCE_KEYS if canonical_key(k) in _CLOSED}
_COUNT_KEYS = frozenset(
    k
    for k in INSTANCE_KEYS
    if canonical_key(k) in ("karpenter.k8s.aws/instance-gpu-count", "karpenter.k8s.aws/instance-accelerator-count")
)


@lru_cache(maxsize=4096)  # a fixed table read per pod requirement of every template
def is_well_known(key: str) -> bool:
    """A label some NodePool provisioner (Karpenter, EKS Auto Mode) sets itself: satisfiable even
    when a NodePool does not mention it (:meth:`NodePoolView.sets_label` asks for one pool)."""
    return key in WELL_KNOWN or any(p.sets_labels.has_key(key) for p in _NODEPOOL_FORMS)


_NODEPOOL_FORMS = tuple(p for p in provisioners().of_kind("nodepool") if p.modelled)


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


def untolerated(t: PodTemplate, pool: NodePoolView, added: list[dict] | None = None) -> list[Taint]:
    """Every scheduling taint of ``pool`` the pod does not tolerate (startup taints need none); a
    DaemonSet's pods also carry the tolerations its controller adds, and ``added`` are tolerations
    something else adds to the pods (the Kueue flavor they are admitted to)."""
    tolerations = t.tolerations + list(DAEMONSET_TOLERATIONS) if t.resource.kind == "DaemonSet" else t.tolerations
    if added:
        tolerations = tolerations + added
    return blocking_taints(pool.taints, tolerations)


def blocking_taints(taints: Iterable[Taint], tolerations: list[dict]) -> list[Taint]:
    """The scheduling taints (NoSchedule, NoExecute) among ``taints`` that ``tolerations`` do not
    tolerate: the one test a NodePool's taints and a Kueue flavor's nodeTaints both go through."""
    return [x for x in taints if x.effect in BLOCKING_EFFECTS and not tolerates(tolerations, x)]


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
    """A ``karpenter.sh`` NodePool (v1, and v1beta1 read the same way where the fields agree), of
    the provisioner its ``nodeClassRef`` names: Karpenter's EC2NodeClass, EKS Auto Mode's
    NodeClass, or one recognised but not modelled (``form.modelled`` false; None: unknown)."""

    def __init__(self, resource: Resource, built_in: bool = False) -> None:
        self.resource = resource
        self.built_in = built_in  # made by its provisioner in every cluster, not a manifest of the run
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

    @cached_property
    def offered_by_key(self) -> dict[str, list[Requirement]]:
        """:attr:`offered` grouped by label key, in order: every pod term is compared with every
        pool, so a scan of the pool's list per requirement added up (the webhook's largest cost)."""
        by_key: dict[str, list[Requirement]] = {}
        for r in self.offered:
            by_key.setdefault(r[0], []).append(r)
        return by_key

    def values_for(self, key: str) -> tuple[str, ...] | None:
        """Allowed values of an ``In`` requirement on ``key`` (None: unconstrained)."""
        allowed: set[str] | None = None
        for _, op, vals in self.offered_by_key.get(key, ()):
            if op == "In":
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
    def node_class_ref(self) -> tuple[str | None, str | None, str | None]:
        """(group, kind, name) of ``nodeClassRef``; v1beta1 wrote ``apiVersion`` instead of group."""
        ref = self.template_spec.get("nodeClassRef")
        if not isinstance(ref, dict):
            return (None, None, None)
        group, kind, name = ref.get("group"), ref.get("kind"), ref.get("name")
        api = ref.get("apiVersion")
        if group is None and isinstance(api, str):
            group = api.split("/")[0] if "/" in api else None
        return (
            group if isinstance(group, str) else None,
            kind if isinstance(kind, str) else None,
            name if isinstance(name, str) else None,
        )

    @cached_property
    def form(self) -> Provisioner | None:
        """The provisioner row of this pool (by nodeClassRef group + kind); None: a class no row knows."""
        group, kind, _ = self.node_class_ref
        return provisioners().by_node_class(group, kind)

    @cached_property
    def modelled(self) -> bool:
        """Placement can judge this pool (its provisioner is modelled)."""
        return self.form is not None and self.form.modelled

    @property
    def node_class_name(self) -> str | None:
        return self.node_class_ref[2]

    def node_class(self, run) -> list[Resource]:
        """The node class objects of the run this pool launches nodes with: resolved by group,
        kind and name (an Auto Mode pool never matches an EC2NodeClass of the same name)."""
        form, name = self.form, self.node_class_name
        if form is None or form.node_class is None or not name:
            return []
        return run.find(form.node_class.kind, name, group=form.node_class.group)

    def sets_label(self, key: str) -> bool:
        """Nodes of this pool carry ``key`` although the pool does not mention it (its provisioner
        sets it: instance type, zone, ``karpenter.k8s.aws/*`` for Karpenter, ``eks.amazonaws.com/
        instance-*`` for Auto Mode)."""
        if key in WELL_KNOWN:
            return True
        form = self.form
        return form.sets_labels.has_key(key) if form is not None else is_well_known(key)

    @cached_property
    def instance_types(self) -> tuple[InstanceType, ...] | None:
        return instance_types_for(self.requirements)


def instance_types_for(reqs: Iterable[Requirement]) -> tuple[InstanceType, ...] | None:
    """Catalogue types satisfying ``reqs``; None when the constraint is not closed over the catalogue
    (nothing pins the type, or it names types the catalogue does not know): rules stay silent.
    Cached on the instance-relevant requirements: pods x NodePools repeat the same few sets."""
    return _instance_types_for(tuple(sorted(r for r in reqs if r[0] in INSTANCE_KEYS)))


@lru_cache(maxsize=4096)
def _any_type_matches(reqs: tuple[Requirement, ...]) -> bool:
    """Whether a catalogue type satisfies ``reqs``. Cached like :func:`_instance_types_for`: the
    catalogue's own cache is keyed on the normalised requirements, and normalising them again on
    every pod x pool was the largest cost of a webhook request (issue 23)."""
    return bool(get_catalogue().matching(reqs))


@lru_cache(maxsize=4096)
def _instance_types_for(instance_reqs: tuple[Requirement, ...]) -> tuple[InstanceType, ...] | None:
    if not instance_reqs:
        return None
    cat = get_catalogue()
    known = _known_values()
    pinned = False
    for key, op, values in instance_reqs:
        if key in _CLOSED_KEYS and op == "In":
            closed = _CLOSED_KEYS[key]
            if closed == "instance-type":  # a HyperPod node's ml.<type> is its EC2 twin's hardware
                values = tuple(ec2_instance_name(v) for v in values)
            if not set(values) <= known[closed]:
                return None
            pinned = True
        elif key in _COUNT_KEYS:
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
    pod_types = instance_types_for(pod_instance)
    if pod_types is not None:
        return (
            _any_type_matches((*pool_instance, (INSTANCE_TYPE, "In", tuple(t.name for t in pod_types))))
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
    offered_by_key = pool.offered_by_key
    for key, op, values in pod_reqs:
        offered = offered_by_key.get(key)
        if not offered:
            if op in ("NotIn", "DoesNotExist"):
                continue
            if not pool.sets_label(key):
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
