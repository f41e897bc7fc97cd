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

from eksmllint.apigroups import KUEUE_GROUP
from eksmllint.catalogue import InstanceType
from eksmllint.core.finding import DocPath
from eksmllint.lazy import cached_property
from eksmllint.placeholders import is_placeholder
from eksmllint.platform.provisioners import provisioners
from eksmllint.resource import Resource
from eksmllint.scheduling import (
    INSTANCE_KEYS,
    NODEPOOL_LABEL,
    NodePoolView,
    Requirement,
    Taint,
    compatible,
    instance_types_for,
    pod_requirement_terms,
    tolerates,
)
from eksmllint.workload import PodTemplate


@dataclass
class Landing:
    """Result of placing one pod template on the NodePools of the run (labels and taints; the
    device fit is :mod:`eksmllint.analysis.placement`'s)."""

    pools: list[NodePoolView] = field(default_factory=list)  # compatible and tolerated
    blocked: list[tuple[NodePoolView, Taint]] = field(default_factory=list)  # compatible, taint not tolerated
    pools_present: bool = False
    terms: list[list[Requirement]] = field(default_factory=list)
    considered: list[NodePoolView] = field(default_factory=list)  # the pools it was judged against

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
        import difflib  # only for a pool name the run does not hold: not at every start-up

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
    return run.once("flavor-labels", t, _flavor_labels)


def _flavor_labels(run, t: PodTemplate) -> tuple[FlavorLabels, ...] | None:
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
    result = Landing(pools_present=True, terms=terms, considered=pools)
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
