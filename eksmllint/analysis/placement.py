"""Where a pod template can land, with its devices: one answer per template and run.

Every rule that asks "which NodePools / instance types can this pod get" reads :func:`placement`
(EML101-106, 5xx, 602/603/607, 4xx, 701/702/705), so two rules can no longer disagree about one
manifest (EML702 "no NodePool can launch it" next to EML501/502 "it lands on this pool").

Karpenter's semantics, as decided here:

- A NodePool is a candidate when the pod's requirements (nodeSelector ANDed into each *required*
  node-affinity term; preferred terms never exclude) fall within the pool's requirements and
  labels (:func:`eksmllint.scheduling.compatible`: In/NotIn/Exists/DoesNotExist/Gt/Lt over
  well-known labels incl. ``karpenter.k8s.aws/instance-*``) -- "Pod scheduling constraints must
  fall within a NodePool's constraints or the pods will not deploy"
  (https://karpenter.sh/v1.0/concepts/scheduling/).
- A taint the pod does not tolerate (NoSchedule/NoExecute) rules the pool out; startup taints
  need no toleration ("If Karpenter encounters a taint in the NodePool that is not tolerated by a
  Pod, Karpenter won't use that NodePool", https://karpenter.sh/v0.36/concepts/nodepools/).
  Such pools are kept apart as ``blocked`` (EML701 reports them).
- Karpenter then launches only instance types that satisfy both sides' requirements *and* whose
  allocatable fits the pod's requests (kubernetes-sigs/karpenter, provisioning/scheduling
  ``filterInstanceTypesByRequirements``: requirements compatible, ``resources.Fits``). Two levels
  of that fit are answered, so each rule reads the one its catalogue entry names:

  * **serves** (:attr:`Placement.usable`): some instance type of the pool carries each kind of
    accelerator the pod requests. None of them: EML702 (the pool cannot run the pod at all).
  * **hosts** (:meth:`Placement.hosts`): some type carries the full per-pod count. A pod that
    serves but is hosted nowhere is EML602's case ("exceeds every instance type it can land on");
    rules about what happens *on* the pool (EML101, 106, 5xx) need it to be hosted.

  So ``hosting`` is within ``usable``, and "no NodePool" (EML702: nothing usable) never meets
  "lands on pool X" (hosting non-empty) for one template.
- Instance types are known from the catalogue when the requirements close over it
  (:func:`eksmllint.scheduling.instance_types_for`); otherwise only the EC2 instance *category*
  is judged (``c``/``m`` have no GPU), and the answer for types is None: rules stay silent.
  Vacant EFA capacity is EML102's finding, so EFA does not decide where a pod lands here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from eksmllint.catalogue import L_CATEGORY, L_FAMILY, InstanceType, get_catalogue
from eksmllint.lazy import cached_property
from eksmllint.scheduling import (
    INSTANCE_KEYS,
    INSTANCE_TYPE,
    NodePoolView,
    Requirement,
    canonical_key,
    compatible,
    instance_types_for,
)
from eksmllint.workload import GPU, NEURON, NEURONCORE, NEURONDEVICE, PodTemplate

_CATEGORY_RE = re.compile(r"^[a-z]+")


# --- one device fit: can a pool supply a pod's accelerators? ------------------------------------
def category_of(instance_type_or_family: str) -> str | None:
    """EC2 instance category: the leading letters of the family (``p4d.24xlarge`` -> ``p``)."""
    m = _CATEGORY_RE.match(instance_type_or_family.split(".")[0])
    return m.group(0) if m else None


def allowed_categories(reqs: Iterable[Requirement]) -> set[str] | None:
    """Instance categories ``In`` requirements on type / family / category allow; None: any."""
    allowed: set[str] | None = None
    for key, op, values in reqs:
        if op != "In":
            continue
        key = canonical_key(key)  # Auto Mode's eks.amazonaws.com/instance-* are the same facts
        if key in (INSTANCE_TYPE, L_FAMILY):
            cats = {c for v in values if (c := category_of(v))}
        elif key == L_CATEGORY:
            cats = set(values)
        else:
            continue
        allowed = cats if allowed is None else allowed & cats
    return allowed


def _category_offers(category: str, resource: str) -> bool:
    """Whether instances of an EC2 category can carry ``resource`` (GPU: p/g; Neuron: inf/trn)."""
    if resource == GPU:
        return category.startswith(("p", "g"))
    if resource in (NEURON, NEURONCORE, NEURONDEVICE):
        return category in ("inf", "trn")
    return True


def names(types: Iterable[InstanceType]) -> str:
    listed = sorted(it.name for it in types)
    return ", ".join(listed[:3]) + (" ..." if len(listed) > 3 else "")


def requirement_text(r: Requirement) -> str:
    key, op, values = r
    if op in ("Exists", "DoesNotExist"):
        return f"{key} {op}"
    return f"{key} {op} [{', '.join(values)}]"


def _fmt(items: Iterable[str]) -> str:
    return ", ".join(sorted(items))


@dataclass(frozen=True)
class DeviceFit:
    """What one NodePool offers a pod constrained by one requirement term.

    ``types``: catalogue types of the pool the term allows that carry each accelerator kind the
    pod requests (None: not known from the catalogue); ``reason``: why the pool cannot serve the
    pod (None when it can, or cannot be told); ``by_instance``: the pod's own instance
    requirements are at fault rather than its devices."""

    types: tuple[InstanceType, ...] | None
    reason: str | None = None
    by_instance: bool = False


def device_fit(pool: NodePoolView, term: list[Requirement], accelerators: Mapping[str, int]) -> DeviceFit:
    """The one answer to "can ``pool`` launch a node with the pod's accelerators for ``term``"."""
    instance_reqs = [r for r in term if r[0] in INSTANCE_KEYS]
    types = instance_types_for(pool.requirements + instance_reqs)
    if types is None and instance_types_for(instance_reqs) is not None:
        # The pod pins catalogue types itself: the pool's other (unknown) values cannot add any.
        types = tuple(get_catalogue().matching([r for r in pool.requirements if r[0] in INSTANCE_KEYS] + instance_reqs))
    if types is not None:
        if not types:
            own = pool.instance_types
            listed = f" ({names(own)})" if own else ""
            needs = ", ".join(requirement_text(r) for r in instance_reqs) or "the pod's devices"
            return DeviceFit((), f"none of its instance types{listed} has {needs}", True)
        if not accelerators:
            return DeviceFit(types)
        carrying = tuple(it for it in types if all(it.resource_capacity().get(res, 0) > 0 for res in accelerators))
        if not carrying:
            res = next(r for r in accelerators if not any(it.resource_capacity().get(r, 0) > 0 for it in types))
            return DeviceFit((), f"its instance types ({names(types)}) have no {res}")
        return DeviceFit(carrying)
    pool_cats = allowed_categories(pool.requirements)
    pod_cats = allowed_categories(instance_reqs)
    if pool_cats is None and pod_cats is None:
        return DeviceFit(None)
    cats = pool_cats if pod_cats is None else pod_cats if pool_cats is None else pool_cats & pod_cats
    if not cats:
        return DeviceFit(
            (),
            (f"it launches only instance categories {_fmt(pool_cats or ())}, the pod needs {_fmt(pod_cats or ())}"),
            True,
        )
    for res in accelerators:
        if not any(_category_offers(c, res) for c in cats):
            return DeviceFit((), f"it launches only instance categories {_fmt(cats)}, which have no {res}")
    return DeviceFit(None)


def serves(pool: NodePoolView, terms: list[list[Requirement]], accelerators: Mapping[str, int]) -> bool:
    """Some term of the pod is compatible with ``pool`` and the pool carries its accelerator kinds."""
    return any(compatible(term, pool) and device_fit(pool, term, accelerators).reason is None for term in terms)


# --- the per-template answer ------------------------------------------------------------------
@dataclass
class PoolFit:
    """The pod on one NodePool: the types it can get there (accelerator kinds carried; None:
    unknown) and whether one of them carries the full per-pod device count."""

    serves: bool
    types: tuple[InstanceType, ...] | None
    hosts: bool

    def hosting_types(self, accelerators: Mapping[str, int]) -> tuple[InstanceType, ...] | None:
        if self.types is None or not accelerators:
            return self.types
        return tuple(it for it in self.types if it.offers(accelerators))


@dataclass
class Placement:
    """Where one pod template can land among the run's NodePools, with its devices. Shared by
    templates with the same requirement terms, tolerations and accelerators: read-only (the
    derived lists are computed once, on first use)."""

    terms: list[list[Requirement]]
    accelerators: dict[str, int]
    present: bool  # the run holds NodePools and the pod's selectors are not templated
    usable: list[NodePoolView] = field(default_factory=list)  # compatible, tolerated, serves
    blocked: list[NodePoolView] = field(default_factory=list)  # compatible, serves, taint not tolerated
    own_types: tuple[InstanceType, ...] | None = None  # no NodePools: the types the pod pins itself
    _fits: dict[int, PoolFit] = field(default_factory=dict, repr=False)

    def fit(self, pool: NodePoolView) -> PoolFit:
        """The pod on ``pool`` (any pool of the run, also one it does not land on)."""
        found = self._fits.get(id(pool))
        if found is None:
            found = self._fits[id(pool)] = self._fit(pool)
        return found

    def _fit(self, pool: NodePoolView) -> PoolFit:
        fits = [device_fit(pool, term, self.accelerators) for term in self.terms if compatible(term, pool)]
        ok = [f for f in fits if f.reason is None]
        if not ok:
            return PoolFit(False, (), False)
        if any(f.types is None for f in ok):
            return PoolFit(True, None, True)  # unknown types: assume they can (stay silent)
        found: dict[str, InstanceType] = {}
        for f in ok:
            found.update((it.name, it) for it in f.types or ())
        types = tuple(found.values())
        return PoolFit(True, types, not self.accelerators or any(it.offers(self.accelerators) for it in types))

    def types_on(self, pool: NodePoolView) -> tuple[InstanceType, ...] | None:
        """Catalogue types the pod can get on ``pool`` carrying its accelerator kinds; None: unknown."""
        return self.fit(pool).types

    def hosting_types(self, pool: NodePoolView) -> tuple[InstanceType, ...] | None:
        """Types of ``pool`` with the pod's full per-pod device count; None: unknown."""
        return self.fit(pool).hosting_types(self.accelerators)

    def hosts(self, pool: NodePoolView) -> bool:
        """The pod lands on ``pool`` and a node there has all its devices."""
        return id(pool) in self._hosting_ids

    @cached_property
    def hosting(self) -> list[NodePoolView]:
        """The pools the pod really runs on (usable, with a type that has all its devices)."""
        return [p for p in self.usable if self.fit(p).hosts]

    @cached_property
    def _hosting_ids(self) -> frozenset[int]:
        return frozenset(id(p) for p in self.hosting)

    @cached_property
    def instance_types(self) -> tuple[InstanceType, ...] | None:
        """Types the pod can land on: over its usable pools (accelerator kinds carried); without
        NodePools in the run, the types the pod pins itself. None: unknown (rules stay silent)."""
        if not self.present:
            return self.own_types
        found: dict[str, InstanceType] = {}
        for pool in self.usable:
            types = self.types_on(pool)
            if types is None:
                return None
            found.update((it.name, it) for it in types)
        return tuple(found.values())


def placement(run, t: PodTemplate) -> Placement:
    """Where ``t`` can land, computed once per run and template (and shared by templates that
    agree on what it reads: the core landing -- requirement terms and tolerations -- and the
    accelerators)."""
    return run.once("placement", t, _placement)


def _placement(run, t: PodTemplate) -> Placement:
    landing = run.landing(t)  # shared by templates with equal requirement terms and tolerations
    accels = t.accelerators
    key = (id(landing), tuple(sorted(accels.items())))
    shared = run.memo("placement-by-key")
    found = shared.get(key)
    if found is None:
        found = shared[key] = Placement(landing.terms, dict(accels), landing.pools_present)
        if landing.pools_present:
            found.usable = [p for p in landing.pools if found.fit(p).serves]
            found.blocked = [p for p, _ in landing.blocked if found.fit(p).serves]
        else:
            found.own_types = landing.instance_types
    return found
