"""Where a pod template lands among the run's pools: the provisioner form it aims at, the open
world, and the node labels Kueue adds.

The files of a run are a partial view of a cluster (issue 21). A pod is judged against the run's
NodePools (:func:`land`, with :mod:`eksmllint.scheduling`'s label and taint semantics) only when
they are the pools it aims at (:func:`relevant_pools`): those of the provisioner form its selectors
name (``platform/provisioners.yaml``), holding the pool it pins by name, none of them of a form
eksmllint does not model. Otherwise only the pod's own selectors say where it lands, and rules that
conclude from absence ("no pool can host it") stay silent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

from eksmllint.apigroups import KUEUE_GROUP
from eksmllint.catalogue import InstanceType
from eksmllint.core.finding import DocPath
from eksmllint.lazy import cached_property
from eksmllint.placeholders import is_placeholder
from eksmllint.platform.provisioners import provisioners
from eksmllint.resource import Document, Resource, SourceFile
from eksmllint.scheduling import (
    INSTANCE_KEYS,
    NODEPOOL_LABEL,
    NodePoolView,
    Requirement,
    Taint,
    blocking_taints,
    compatible,
    instance_types_for,
    parse_taints,
    pod_requirement_terms,
)
from eksmllint.workload import PodTemplate
from eksmllint.yamlpos import YMap


@dataclass
class Landing:
    """Result of placing one pod template on the NodePools of the run (labels and taints; the
    device fit is :mod:`eksmllint.analysis.placement`'s)."""

    pools: list[NodePoolView] = field(default_factory=list)  # compatible and tolerated
    blocked: list[tuple[NodePoolView, Taint]] = field(default_factory=list)  # compatible, taint not tolerated
    pools_present: bool = False
    terms: list[list[Requirement]] = field(default_factory=list)
    considered: list[NodePoolView] = field(default_factory=list)  # the pools it was judged against
    unadmitted: tuple[Flavor, ...] = ()  # Kueue flavors of its queue, none of whose nodeTaints it tolerates
    built_in: list[NodePoolView] = field(default_factory=list)  # pinned pools the provisioner creates itself

    @cached_property
    def instance_types(self) -> tuple[InstanceType, ...] | None:
        """Types of the compatible pools the terms allow (None = unknown: stay silent); computed
        on first use (most runs read the placement's device-aware types instead)."""
        return _landing_types(self.terms, self.pools if self.pools_present else None)


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
    pools, modelled = pool_index(pools).of_forms(aimed_forms(terms))
    if not modelled or not pools:
        return None
    names = pinned_pool_names(terms)
    if names is not None and not any(p.name in names for p in pools):
        # a pool the run does not hold (created by Terraform, or a built-in Auto Mode pool) --
        # unless the name is a near miss of one it holds, which is a typo worth reporting
        import difflib  # only for a pool name the run does not hold: not at every start-up

        held = [p.name for p in pools]
        if not any(difflib.get_close_matches(n, held, n=1, cutoff=0.8) for n in names):
            return None
    return pools


KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
FlavorLabels = tuple[tuple[str, str], ...]
#: A toleration as a hashable value (flavors are part of the landing's cache key).
FrozenToleration = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Flavor:
    """One Kueue ResourceFlavor a workload's queue can admit it to, as its pods see it
    (https://kueue.sigs.k8s.io/docs/concepts/resource_flavor/): Kueue adds the flavor's
    ``nodeLabels`` to their nodeSelector and its ``tolerations`` to their tolerations, and admits
    the workload to the flavor only when they tolerate its ``nodeTaints`` (NoSchedule/NoExecute;
    a toleration in the flavor's own ``tolerations`` counts, kubernetes-sigs/kueue#4646)."""

    name: str
    labels: FlavorLabels = ()
    tolerations: tuple[FrozenToleration, ...] = ()
    taints: tuple[Taint, ...] = ()
    resource: Resource | None = field(default=None, compare=False)

    @cached_property
    def requirements(self) -> list[Requirement]:
        return [(k, "In", (v,)) for k, v in self.labels]

    @cached_property
    def added_tolerations(self) -> list[dict]:
        return [dict(x) for x in self.tolerations]

    def untolerated(self, tolerations: list[dict]) -> list[Taint]:
        """The flavor's nodeTaints that keep a pod with ``tolerations`` from being admitted to it."""
        own = tolerations + self.added_tolerations
        return blocking_taints(self.taints, own)


def queue_flavors(run, t: PodTemplate) -> tuple[Flavor, ...] | None:
    """The ResourceFlavors Kueue can admit ``t``'s pods to: those of the resource groups of their
    queue (``kueue.x-k8s.io/queue-name`` -> LocalQueue -> ClusterQueue) that cover a resource the
    pods request. None when the pod is not queued or the run does not hold the whole chain."""
    return run.once("queue-flavors", t, _queue_flavors)


def _requested(t: PodTemplate) -> set[str]:
    return {str(k) for c in t.containers + t.init_containers for k in (*c.requests, *c.limits)}


def _queue_flavors(run, t: PodTemplate) -> tuple[Flavor, ...] | None:
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
    requested = _requested(t)
    groups = cqs[0].get(("spec", "resourceGroups"))
    for group in groups if isinstance(groups, list) else ():
        if not isinstance(group, dict):
            continue
        covered = group.get("coveredResources")
        if isinstance(covered, list) and not requested & {str(c) for c in covered}:
            continue  # Kueue assigns a flavor of this group only to pods requesting what it covers
        flavors = group.get("flavors")
        names += [f["name"] for f in flavors or () if isinstance(f, dict) and isinstance(f.get("name"), str)]
    found: list[Flavor] = []
    for name in dict.fromkeys(names):
        objs = run.find("ResourceFlavor", name, group=KUEUE_GROUP)
        if len(objs) != 1:
            return None  # a flavor the run does not hold: its labels and taints are unknown
        found.append(_flavor(name, objs[0]))
    return tuple(found) or None


def _flavor(name: str, obj: Resource) -> Flavor:
    labels = obj.get(("spec", "nodeLabels"))
    tolerations = obj.get(("spec", "tolerations"))
    return Flavor(
        name,
        tuple(sorted((str(k), str(v)) for k, v in labels.items())) if isinstance(labels, dict) else (),
        tuple(
            tuple(sorted((str(k), str(v)) for k, v in x.items() if v is not None))
            for x in (tolerations if isinstance(tolerations, list) else ())
            if isinstance(x, dict)
        ),
        tuple(parse_taints(obj.get(("spec", "nodeTaints")))),
        obj,
    )


def land(
    t: PodTemplate,
    pools: list[NodePoolView],
    flavors: tuple[Flavor, ...] | None = None,
    built_in: dict[str, NodePoolView] | None = None,
) -> Landing:
    terms = pod_requirement_terms(t)
    own = t.tolerations
    # One alternative per (flavor Kueue may admit the workload to, requirement term): the term
    # with the flavor's nodeLabels, and the pod's tolerations with the flavor's.
    alternatives: list[tuple[list[Requirement], list[dict]]] = [(term, own) for term in terms]
    if flavors:
        admitted = [f for f in flavors if not f.untolerated(own)]
        if not admitted:  # Kueue never admits the pods: nowhere to land (EML701 says why)
            return Landing(pools_present=False, terms=terms, unadmitted=flavors)
        alternatives = [(term + f.requirements, own + f.added_tolerations) for f in admitted for term in terms]
        terms = [term for term, _ in alternatives]
    if any(_templated(r) for term in terms for r in term):
        # a selector filled in at apply time (`${INSTANCE_TYPE}`): where the pod lands is unknown,
        # as if the run had no NodePools, so no rule claims "no pool" or "lands on X"
        return Landing(pools_present=False, terms=[[r for r in term if not _templated(r)] for term in terms])
    relevant = relevant_pools(terms, pools)
    if relevant is None:  # judged by the pod's own selectors, as if the run held no NodePool
        return Landing(pools_present=False, terms=terms, built_in=_pinned_built_in(terms, pools, built_in))
    result = Landing(pools_present=True, terms=terms, considered=relevant)
    for pool in pool_index(pools).candidates(terms, relevant):
        fitting = [tolerations for term, tolerations in alternatives if compatible(term, pool)]
        if not fitting:
            continue
        blocking = [blocking_taints(pool.taints, tolerations) for tolerations in fitting]
        if all(blocking):
            result.blocked.append((pool, blocking[0][0]))
        else:
            result.pools.append(pool)
    return result


class PoolIndex:
    """The pools of a run by the label values they offer, so that placing a pod compares it with
    the pools that can carry the labels it asks for, not with every pool (pods x pools was the
    landing's cost when each team has its own pool: 500 pools x 500 placement keys)."""

    def __init__(self, pools: list[NodePoolView]) -> None:
        self.pools = pools
        #: key -> value -> positions of the pools whose first ``In`` requirement on key allows value
        self._by_value: dict[str, dict[str, list[int]]] = {}
        #: key -> positions of the pools that offer key without an ``In`` requirement on it
        self._open: dict[str, list[int]] = {}
        for i, pool in enumerate(pools):
            for key, offered in pool.offered_by_key.items():
                asks = next((values for _, op, values in offered if op == "In"), None)
                if asks is None:
                    self._open.setdefault(key, []).append(i)
                else:
                    for value in asks:
                        self._by_value.setdefault(key, {}).setdefault(value, []).append(i)
        self._setters: dict[str, list[int]] = {}  # key -> pools that set it without offering it
        self._forms: dict[frozenset[str] | None, tuple[list[NodePoolView], bool]] = {}
        self._kept: dict[int, set[int]] = {}  # id of an of_forms list -> ids of its pools

    def of_forms(self, forms: frozenset[str] | None) -> tuple[list[NodePoolView], bool]:
        """The pools of provisioner ``forms`` (every pool for None) and whether placement models
        them all: once per set of forms, not once per placement key."""
        found = self._forms.get(forms)
        if found is None:
            pools = (
                self.pools if forms is None else [p for p in self.pools if p.form is not None and p.form.name in forms]
            )
            found = self._forms[forms] = (pools, all(p.modelled for p in pools))
            self._kept[id(pools)] = set(map(id, pools))
        return found

    def _unoffered_setters(self, key: str) -> list[int]:
        found = self._setters.get(key)
        if found is None:
            found = self._setters[key] = [
                i for i, p in enumerate(self.pools) if key not in p.offered_by_key and p.sets_label(key)
            ]
        return found

    def _allowing(self, key: str, values: tuple[str, ...]) -> list[int]:
        """Positions of every pool that can satisfy ``key In values`` (and some that cannot): a pool
        whose ``In`` requirement on the key shares no value, or that neither offers nor sets the
        key, is never :func:`compatible` with it."""
        by_value = self._by_value.get(key, {})
        found = [i for v in values for i in by_value.get(v, ())]
        return found + self._open.get(key, []) + self._unoffered_setters(key)

    def candidates(self, terms: list[list[Requirement]], relevant: list[NodePoolView]) -> list[NodePoolView]:
        """The pools of ``relevant`` (in order) that may be compatible with one of ``terms``."""
        positions: set[int] = set()
        for term in terms:
            asked = [self._allowing(key, values) for key, op, values in term if op == "In"]
            if not asked:
                return relevant  # a term that asks for no label value: any pool may take it
            narrowest: list[int] = min(asked, key=len)  # one label asked suffices to rule pools out
            positions.update(narrowest)
        pools = self.pools
        found = [pools[i] for i in sorted(positions)]
        if relevant is pools:
            return found
        kept = self._kept.get(id(relevant)) or set(map(id, relevant))
        return [p for p in found if id(p) in kept]


#: The last runs' indexes, by their pool list (kept alive here, so its id is not reused); a run's
#: pool list never changes once made, and the webhook's runs each have their own.
_INDEXES: dict[int, tuple[list[NodePoolView], PoolIndex]] = {}


def pool_index(pools: list[NodePoolView]) -> PoolIndex:
    """The :class:`PoolIndex` of a run's pools, built once per pool list."""
    found = _INDEXES.get(id(pools))
    if found is None or found[0] is not pools or len(found[1].pools) != len(pools):
        if len(_INDEXES) >= 8:
            _INDEXES.clear()
        index = PoolIndex(pools)
        _INDEXES[id(pools)] = (pools, index)
        return index
    return found[1]


def _pinned_built_in(
    terms: list[list[Requirement]], pools: list[NodePoolView], built_in: dict[str, NodePoolView] | None
) -> list[NodePoolView]:
    """The built-in pools (EKS Auto Mode's general-purpose, system) a pod pins by name when the run
    holds no pool of that name: the pod can land nowhere else. Empty when it pins none of them."""
    names = pinned_pool_names(terms)
    if not built_in or not names or any(p.name in names for p in pools):
        return []
    if not names <= set(built_in):
        return []  # it may land on a pool created elsewhere (open world)
    return [built_in[n] for n in sorted(names)]


def built_in_pools(run) -> dict[str, NodePoolView]:
    """name -> the NodePools a provisioner creates in every cluster using it (``built-in-pools`` of
    ``platform/provisioners.yaml``: EKS Auto Mode's general-purpose and system), for the forms this
    run says are in use: config ``platform: {eks-auto-mode: true}``, or one of the form's NodePools
    or node classes in the run. Open world: none on a cluster not known to use the form."""
    return run.once("built-in-pools", run, _built_in_pools)


def _built_in_pools(run, _: object) -> dict[str, NodePoolView]:
    found: dict[str, NodePoolView] = {}
    for form in provisioners().of_kind("nodepool"):
        if form.built_in_pools and form_in_use(run, form.name) is not None:
            found.update((name, _built_in_view(form.name, name)) for name in form.built_in_pools)
    return found


def form_in_use(run, name: str) -> str | None:
    """Why the run says provisioner form ``name`` is in use (for the finding's detail); None: it does not."""
    said = getattr(run.settings.platform, name.replace("-", "_"), None)
    if said is not None:
        return f"config platform.{name}" if said else None
    form = provisioners().provisioners[name]
    pool = next((p for p in run.nodepools if p.form is form), None)
    if pool is not None:
        return f"NodePool {pool.name} of the run"
    ref = form.node_class
    classes = run.of_kind(ref.kind, group=ref.group) if ref is not None else []
    return f"{ref.kind} {classes[0].name} of the run" if ref is not None and classes else None


@cache
def _built_in_view(form: str, name: str) -> NodePoolView:
    """A NodePool view of a built-in pool, from its row (no file: rules name it, never point at it)."""
    row = provisioners().provisioners[form]
    pool = row.built_in_pools[name]
    ref = row.node_class
    assert ref is not None  # a nodepool form (validated)
    data = {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": name},
        "spec": {
            "template": {
                "spec": {
                    "nodeClassRef": {"group": ref.group, "kind": ref.kind, "name": "default"},
                    "requirements": [dict(r) for r in pool.requirements],
                    "taints": [dict(x) for x in pool.taints],
                }
            }
        },
    }
    root = YMap()
    root.update(data)  # positionless: the pool has no file
    source = SourceFile(f"<{row.label} built-in NodePool {name}>", None)
    return NodePoolView(Resource(Document(source, 0, root, 0), root), built_in=True)


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


_UNMODELLED_SELECTOR_FORMS = tuple(
    p for p in provisioners().provisioners.values() if not p.modelled and p.kind != "nodepool"
)


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
        asks = [(k, v) for term in pod_requirement_terms(t) for k, op, v in term if op in _ASKS]
        for form in _UNMODELLED_SELECTOR_FORMS if asks else ():
            if form.name in said or not any(form.aimed_at_by(k, v) for k, v in asks):
                continue
            said[form.name] = True
            return (
                t.spec_path + ("nodeSelector",) if t.node_selector else t.spec_path,
                f"not judged: {t.display()} aims at {form.label} nodes, which eksmllint does not model ({form.why}); "
                "placement rules skip its pods",
            )
    return None
