"""Where can a pod template land? NodePool requirements, node selectors, affinity and taints.

Karpenter semantics (facts file, section 3): a pod's constraints must fall inside a NodePool's
requirements; labels the pool's provisioner sets itself (instance type, zone, capacity type,
``karpenter.k8s.aws/*`` for Karpenter, ``eks.amazonaws.com/instance-*`` for EKS Auto Mode:
``platform/provisioners.yaml``) are satisfiable even when the NodePool does not mention them, but a
custom label is only satisfiable when the NodePool's template sets it. The capacity-reservation
labels are the exception among Karpenter's own: only reserved nodes carry them, so they need a pool
that allows capacity type ``reserved``. Startup taints need no toleration.

The open world (:func:`relevant_pools`): the files of a run are a partial view of a cluster, so a
pod is judged against the run's NodePools only when they are the pools it aims at -- those of the
provisioner form its selectors name, holding the pool it pins by name, none of them of a form
eksmllint does not model. Otherwise only the pod's own selectors say where it lands.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

from eksmllint.apigroups import KUEUE_GROUP
from eksmllint.catalogue import LABEL_ALIASES, RESERVATION_LABELS, InstanceType, ec2_instance_name, get_catalogue
from eksmllint.core.finding import DocPath
from eksmllint.lazy import cached_property, kept_on
from eksmllint.placeholders import is_placeholder
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
    """A ``karpenter.sh`` NodePool (v1, and v1beta1 read the same way where the fields agree), of
    the provisioner its ``nodeClassRef`` names: Karpenter's EC2NodeClass, EKS Auto Mode's
    NodeClass, or one recognised but not modelled (``form.modelled`` false; None: unknown)."""

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

    @property
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


#: Operators by which a pod asks for a label (rather than ruling one out).
_ASKS = ("In", "Exists")


def aimed_forms(terms: list[list[Requirement]]) -> frozenset[str] | None:
    """The provisioner forms (``provisioners.yaml`` rows) a pod's requirements aim at: a term that
    selects a label only one form's nodes carry (``karpenter.k8s.aws/*``, ``eks.amazonaws.com/
    instance-*``, an ``ml.*`` instance type, ``eks.amazonaws.com/nodegroup``...). None: some term
    aims at no form in particular, so any provisioner may serve it."""
    forms: set[str] = set()
    rows = provisioners().provisioners.values()
    for term in terms:
        found = {p.name for key, op, values in term if op in _ASKS for p in rows if p.aimed_at_by(key, values)}
        if not found:
            return None
        forms |= found
    return frozenset(forms)


def pinned_pool_names(terms: list[list[Requirement]]) -> set[str] | None:
    """NodePool names the pod pins with ``karpenter.sh/nodepool In [...]`` in every term; None: unpinned."""
    names: set[str] = set()
    for term in terms:
        pinned = [set(v) for k, op, v in term if k == NODEPOOL_LABEL and op == "In"]
        if not pinned:
            return None
        names |= set.intersection(*pinned)
    return names


def relevant_pools(terms: list[list[Requirement]], pools: list[NodePoolView]) -> list[NodePoolView] | None:
    """The open world: the run's pools among which the pod's place is decided, or None when the
    run cannot say (rules that conclude from absence stay silent). None when the pod aims at a
    form without pools in the run (a managed node group, HyperPod ``ml.*`` nodes), at a NodePool
    by name that the run does not hold (one created by Terraform), or could land on a pool of a
    provisioner that is recognised but not modelled."""
    forms = aimed_forms(terms)
    if forms is not None:
        pools = [p for p in pools if p.form is not None and p.form.name in forms]
    if any(not p.modelled for p in pools):
        return None
    if not pools:
        return None
    names = pinned_pool_names(terms)
    if names is not None and not any(p.name in names for p in pools):
        # a pool the run does not hold (created by Terraform, or a built-in Auto Mode pool) --
        # unless the name is a near miss of one it holds, which is a typo worth reporting
        import difflib

        held = [p.name for p in pools]
        if not any(difflib.get_close_matches(n, held, n=1, cutoff=0.8) for n in names):
            return None
    return pools


KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
FlavorLabels = tuple[tuple[str, str], ...]


def flavor_labels(run, t: PodTemplate) -> tuple[FlavorLabels, ...] | None:
    """Kueue admits a workload to one ResourceFlavor of its ClusterQueue and adds that flavor's
    ``nodeLabels`` to the pods' nodeSelector: the node labels of each flavor the workload's queue
    (``kueue.x-k8s.io/queue-name`` -> LocalQueue -> ClusterQueue -> ResourceFlavor) can admit it
    to. None when the pod is not queued or the run does not hold the whole chain."""
    r = t.resource
    queue = r.labels.get(KUEUE_QUEUE_LABEL) or t.labels.get(KUEUE_QUEUE_LABEL)
    if not isinstance(queue, str):
        return None
    local = run.find("LocalQueue", queue, r.namespace, group=KUEUE_GROUP)
    cq_name = local[0].get(("spec", "clusterQueue")) if len(local) == 1 else None
    cqs = run.find("ClusterQueue", cq_name, group=KUEUE_GROUP) if isinstance(cq_name, str) else []
    if len(cqs) != 1:
        return None
    names: list[str] = []
    groups = cqs[0].get(("spec", "resourceGroups"))
    for group in groups if isinstance(groups, list) else ():
        flavors = group.get("flavors") if isinstance(group, dict) else None
        names += [f["name"] for f in flavors or () if isinstance(f, dict) and isinstance(f.get("name"), str)]
    found: list[FlavorLabels] = []
    for name in dict.fromkeys(names):
        objs = run.find("ResourceFlavor", name, group=KUEUE_GROUP)
        if len(objs) != 1:
            return None  # a flavor the run does not hold: its labels are unknown
        labels = objs[0].get(("spec", "nodeLabels"))
        found.append(tuple(sorted((str(k), str(v)) for k, v in labels.items())) if isinstance(labels, dict) else ())
    return tuple(found) or None


def land(t: PodTemplate, pools: list[NodePoolView], flavors: tuple[FlavorLabels, ...] | None = None) -> Landing:
    terms = pod_requirement_terms(t)
    if flavors:  # one alternative per flavor Kueue may admit the workload to
        terms = [term + [(k, "In", (v,)) for k, v in labels] for labels in flavors for term in terms]
    if any(_templated(r) for term in terms for r in term):
        # a selector filled in at apply time (`${INSTANCE_TYPE}`): where the pod lands is unknown,
        # as if the run had no NodePools, so no rule claims "no pool" or "lands on X"
        return Landing(pools_present=False, terms=[[r for r in term if not _templated(r)] for term in terms])
    relevant = relevant_pools(terms, pools)
    if relevant is None:  # judged by the pod's own selectors, as if the run held no NodePool
        return Landing(pools_present=False, terms=terms)
    pools = relevant
    result = Landing(pools_present=True, terms=terms)
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


def unjudged_form(run, r: Resource) -> tuple[DocPath, str] | None:
    """A provisioner form recognised but not modelled, said once per run and form at the first
    object that uses it (EML004's "not judged"): a NodePool whose ``nodeClassRef`` names a class
    no row models (a HyperPod ``HyperpodNodeClass``, another cloud's class), or a workload whose pods
    aim at a form without a model (Fargate). (path, message) or None."""
    said = run.memo("unjudged-provisioner-forms")
    view = run.nodepool_of(r)
    if view is not None:
        if view.modelled:
            return None
        group, kind, _ = view.node_class_ref
        form = view.form
        key = form.name if form is not None else f"{group}/{kind}"
        if key in said:
            return None
        said[key] = True
        same = [
            p.name
            for p in run.nodepools
            if (p.form is form if form is not None else p.node_class_ref[:2] == (group, kind))
        ]
        label = form.label if form is not None else "a provisioner eksmllint has no row for"
        why = f": {form.why}" if form is not None and form.why else ""
        return (
            ("spec", "template", "spec", "nodeClassRef"),
            f"not judged: NodePool{'s' if len(same) > 1 else ''} {', '.join(same)} launch{'' if len(same) > 1 else 'es'} "
            f"nodes through {group}/{kind} ({label}), which eksmllint does not model{why}; placement rules skip "
            "the pods that can land there",
        )
    w = run.workload_for(r)
    if w is None:
        return None
    for t in w.templates:
        for name in aimed_forms(pod_requirement_terms(t)) or ():
            form = provisioners().provisioners[name]
            if form.modelled or name in said:
                continue
            said[name] = True
            return (
                t.spec_path + ("nodeSelector",) if t.node_selector else t.spec_path,
                f"not judged: {t.display()} aims at {form.label} nodes, which eksmllint does not model ({form.why}); "
                "placement rules skip its pods",
            )
    return None
