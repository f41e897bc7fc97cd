"""What EML701-705 share: pod requirements with their paths, who is meant for Karpenter, the
placement verdict, and by-name reference helpers.

EML701/702/705 read the run's one placement answer (:func:`eksmllint.analysis.placement.placement`,
through :func:`analyse`): which NodePools can serve a pod template's accelerators, which of those
block it with a taint, and (computed here) whether only the zone is in the way. They report only
for pods that are *meant for Karpenter* (:func:`targets_nodepools`): clusters usually also run
managed node groups that no manifest in the run describes, so a CPU pod without a selector (the
MPIJob launcher) or a pod pinned to a label no NodePool sets could well be served elsewhere, and
reporting them would bury the real findings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from eksmllint.analysis.placement import Placement, placement, serves
from eksmllint.core.context import LintRun, RuleContext
from eksmllint.core.finding import DocPath
from eksmllint.landing import queue_flavors
from eksmllint.lazy import kept_on
from eksmllint.resource import Resource
from eksmllint.scheduling import (
    INSTANCE_KEYS,
    WELL_KNOWN,
    ZONE_NAME_KEYS,
    NodePoolView,
    Requirement,
    is_well_known,
)
from eksmllint.workload import PodTemplate

#: A label that pins one existing node: such a pod is not meant for a NodePool.
HOSTNAME = "kubernetes.io/hostname"
#: Related locations listed per finding: a pod that fits 500 NodePools must not carry 500.
RELATED_MAX = 5
POSITIVE_OPS = ("In", "Exists", "Gt", "Lt", "Gte", "Lte")
#: Where a NodePool's requirements are (the related location of placement findings).
POOL_REQUIREMENTS: DocPath = ("spec", "template", "spec", "requirements")


# --- pod requirements with their document paths ------------------------------------------------
@dataclass(frozen=True)
class Req:
    """One node requirement of a pod, with the path of the value that states it."""

    key: str
    op: str
    values: tuple[str, ...]
    path: DocPath

    @property
    def plain(self) -> Requirement:
        return (self.key, self.op, self.values)


@kept_on
def requirement_terms(t: PodTemplate) -> list[list[Req]]:
    """OR-of-ANDs like :func:`eksmllint.scheduling.pod_requirement_terms`, keeping paths so findings
    can point at the offending selector (should move into the core next to that function). Once
    per template: EML701/702 (through :func:`admitted_terms`) and EML705 read the same terms."""
    sp = t.spec_path
    base = [Req(k, "In", (v,), sp + ("nodeSelector", k)) for k, v in t.node_selector.items()]
    aff_path = sp + ("affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
    terms = t.resource.get(aff_path)
    if not isinstance(terms, list) or not terms:
        return [base]
    out = []
    for i, term in enumerate(terms):
        exprs = term.get("matchExpressions") if isinstance(term, dict) else None
        reqs = list(base)
        if isinstance(exprs, list):
            for j, e in enumerate(exprs):
                if isinstance(e, dict) and isinstance(e.get("key"), str):
                    vals = e.get("values")
                    values = tuple(str(v) for v in vals) if isinstance(vals, list) else ()
                    reqs.append(
                        Req(e["key"], str(e.get("operator", "In")), values, aff_path + (i, "matchExpressions", j))
                    )
        out.append(reqs)
    return out


def admitted_terms(run: LintRun, t: PodTemplate) -> list[list[Req]]:
    """:func:`requirement_terms` as Kueue admits the pod: one alternative per ResourceFlavor of its
    queue whose nodeTaints it tolerates, with the flavor's ``nodeLabels``
    (:func:`eksmllint.landing.queue_flavors`; reported at the pod spec, which they are added to)."""
    terms = requirement_terms(t)
    flavors = [f for f in queue_flavors(run, t) or () if not f.untolerated(t.tolerations)]
    if not flavors:
        return terms
    return [term + [Req(k, "In", (v,), t.spec_path) for k, v in f.labels] for f in flavors for term in terms]


def plain(term: list[Req]) -> list[Requirement]:
    return [r.plain for r in term]


def term_zones(term: list[Requirement]) -> set[str] | None:
    """Zones one term allows (intersection of its ``In`` zone requirements); None: unconstrained."""
    zones: set[str] | None = None
    for key, op, values in term:
        if key in ZONE_NAME_KEYS and op == "In":
            zones = set(values) if zones is None else zones & set(values)
    return zones


def pod_zones(terms: list[list[Requirement]]) -> set[str] | None:
    """Zones the pod may run in (union over its OR-ed terms); None when some term is unconstrained."""
    out: set[str] = set()
    for term in terms:
        z = term_zones(term)
        if z is None:
            return None
        out |= z
    return out


# --- who is meant for Karpenter -----------------------------------------------------------------
def targets_nodepools(
    t: PodTemplate, terms: list[list[Req]], pools: list[NodePoolView], offered: set[str] | None = None
) -> bool:
    """Whether the pod is clearly meant to run on the run's NodePools.

    True for pods that request accelerators or pin NodePool-provisioned capacity (instance type /
    family / GPU labels, labels a NodePool provisioner sets such as ``karpenter.k8s.aws/*`` or
    ``eks.amazonaws.com/instance-*``, or a custom label some NodePool of the run sets). False for
    DaemonSets (they follow nodes, never cause provisioning; EML105 covers device-plugin
    coverage), pods bound to a node (``nodeName``, ``kubernetes.io/hostname``), and pods that
    select a label no NodePool sets (a managed node group's, a custom one no pool of the run
    sets). Pods aimed at another provisioner form (HyperPod ``ml.*``, a node group) have no
    NodePools to judge in the first place (:func:`eksmllint.landing.relevant_pools`).
    """
    if t.resource.kind == "DaemonSet" or t.spec.get("nodeName"):
        return False
    if offered is None:
        offered = {k for p in pools for k, _, _ in p.offered}
    pinned = bool(t.accelerators)
    for term in terms:
        for r in term:
            if r.op not in POSITIVE_OPS:
                continue
            if r.key == HOSTNAME:
                return False
            if not is_well_known(r.key):
                if r.key not in offered:
                    return False  # e.g. a managed node group's label: another provisioner's nodes
                pinned = True
            elif r.key in INSTANCE_KEYS or r.key not in WELL_KNOWN:
                pinned = True  # an instance label, or one a NodePool provisioner sets
    return pinned


# --- the shared placement analysis ----------------------------------------------------------------
@dataclass
class Verdict:
    """EML701/702/705's reading of the template's :class:`~eksmllint.analysis.placement.Placement`."""

    targeted: bool = False
    usable: list[NodePoolView] = field(default_factory=list)  # compatible, serves devices, tolerated
    blocked: list[NodePoolView] = field(default_factory=list)  # compatible, serves devices, tainted
    zone_only: list[NodePoolView] = field(default_factory=list)  # would serve but for the zone

    @property
    def status(self) -> str:
        if not self.targeted:
            return "skip"
        if self.usable:
            return "ok"
        if self.blocked:
            return "taint"
        if self.zone_only:
            return "zone"
        return "nomatch"


def _offered_keys(run: LintRun, _: object) -> set[str]:
    return {k for p in run.nodepools for k in p.offered_by_key}


def _zone_only(run: LintRun, where: Placement) -> list[NodePoolView]:
    """The pools that would serve the placement's terms but for their zone requirements (EML705);
    once per shared placement."""
    if where.usable or where.blocked or pod_zones(where.terms) is None:
        return []
    stripped = [[r for r in term if r[0] not in ZONE_NAME_KEYS] for term in where.terms]
    return [p for p in run.nodepools if serves(p, stripped, where.accelerators)]


def _verdict(run: LintRun, t: PodTemplate) -> Verdict | None:
    where = placement(run, t)
    if not where.present:
        return None  # a templated selector (`${INSTANCE_TYPE}`): where it lands is unknown
    return Verdict(
        targeted=targets_nodepools(
            t, admitted_terms(run, t), run.nodepools, run.once("eml7-offered", run, _offered_keys)
        ),
        usable=where.usable,
        blocked=where.blocked,
        zone_only=run.once("eml7-zone-only", where, _zone_only),
    )


def analyse(ctx: RuleContext, t: PodTemplate) -> Verdict | None:
    """The verdict for ``t`` on the run's NodePools; None when the run holds no NodePool. Usable
    and blocked pools are the run's one placement answer; only the zone-free retry (EML705) is
    computed here, once per shared placement."""
    if not ctx.run.nodepools:
        return None
    return ctx.run.once("eml7-verdict", t, _verdict)


def assumed_complete(run: LintRun, pools: list[NodePoolView]) -> str:
    """How a finding concluded from absence says what it assumed: the run is a partial view of
    the cluster, so "no pool can" holds only if the run holds every pool of these forms (once per
    list of pools: pods that land alike share it)."""
    return run.once("assumed-complete", pools, _assumed_complete)


def _assumed_complete(_run: LintRun, pools: list[NodePoolView]) -> str:
    forms = sorted({p.form.label for p in pools if p.form is not None}) or ["Karpenter"]
    return f"assuming the run holds every {' and '.join(forms)} NodePool of the cluster"


def candidates(t: PodTemplate, verb: str = "can") -> str:
    """How messages name the NodePools the pod could use: for a pod with DRA ResourceClaims, those
    its selectors allow (its devices are not counted, so a pool without them may be among them)."""
    return "their selectors allow" if t.resource_claims else f"that {verb} serve them"


#: Appended to a placement finding on a pod with DRA ResourceClaims.
DRA_NOTE = " (devices claimed through DRA ResourceClaims are not counted)"


def dra_note(t: PodTemplate) -> str:
    return DRA_NOTE if t.resource_claims else ""


def pods_of(t: PodTemplate) -> str:
    """How messages name a template's pods: "the pods" or "the 'worker' pods"."""
    return "the pods" if t.role in ("pod", "replica", "daemon") else f"the {t.role!r} pods"


# --- by-name references (EML703 / EML704) ---------------------------------------------------------
_DNS_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")


def literal_name(name: object) -> str | None:
    """The referenced name, or None when it is not a literal Kubernetes name (templating
    placeholders such as ``__PVC_NAME__`` or ``${NAME}`` are left to the schema rules)."""
    if not isinstance(name, str) or not _DNS_NAME.match(name):
        return None
    return name


def optional_volume(t: PodTemplate, path: DocPath) -> bool:
    parent = t.resource.get(path[:-1])
    return isinstance(parent, dict) and parent.get("optional") is True


def elsewhere(run: LintRun, kind: str, name: str, namespace: str | None) -> list[Resource]:
    """Objects named ``name`` in explicit namespaces other than ``namespace``."""
    return [x for x in run.find(kind, name) if x.namespace not in (None, namespace)]  # indexed, not a scan
