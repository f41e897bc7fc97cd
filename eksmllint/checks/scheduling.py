"""Family 7xx: the scheduling graph and references (taints, NodePool matches, references, zones).

EML701/702/705 read the run's one placement answer (:func:`eksmllint.analysis.placement.placement`,
through :func:`analyse`): which NodePools can serve a pod template's accelerators, which of those
block it with a taint, and (computed here) whether only the zone is in the way. They report only for pods that are *meant for Karpenter* (:func:`targets_nodepools`):
clusters usually also run managed node groups that no manifest in the run describes, so a CPU pod
without a selector (the MPIJob launcher) or a pod pinned to a label no NodePool sets could well be
served elsewhere, and reporting them would bury the real findings.

EML703/704 resolve the by-name references of :func:`eksmllint.graph.template_references` (plus
PVC -> StorageClass and NodePool -> EC2NodeClass) against the run.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from eksmllint.analysis.placement import device_fit, placement, requirement_text, serves
from eksmllint.core.finding import AppendItem, DocPath, Fix
from eksmllint.graph import template_references
from eksmllint.resource import Resource
from eksmllint.scheduling import (
    INSTANCE_KEYS,
    INSTANCE_TYPE,
    WELL_KNOWN,
    WELL_KNOWN_PREFIXES,
    ZONE,
    ZONE_NAME_KEYS,
    NodePoolView,
    Requirement,
    Taint,
    compatible,
    untolerated,
)
from eksmllint.workload import PodTemplate

#: Volume topology keys that carry a zone (PV nodeAffinity, StorageClass allowedTopologies).
VOLUME_ZONE_KEYS = ZONE_NAME_KEYS + ("topology.ebs.csi.aws.com/zone",)
#: Label prefixes / keys that only non-Karpenter nodes carry (managed node groups, Fargate, eksctl)
#: or that pin one existing node: pods selecting them are not meant for a NodePool.
NON_KARPENTER_PREFIXES = (
    "eks.amazonaws.com/",
    "alpha.eksctl.io/",
    "sagemaker.amazonaws.com/",
    "kubernetes.io/hostname",
)
#: Instance types Karpenter never launches: SageMaker HyperPod nodes (``ml.g5.8xlarge``).
NON_KARPENTER_TYPE_PREFIXES = ("ml.",)
#: Related locations listed per finding: a pod that fits 500 NodePools must not carry 500.
RELATED_MAX = 5
POSITIVE_OPS = ("In", "Exists", "Gt", "Lt", "Gte", "Lte")


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


def requirement_terms(t: PodTemplate) -> list[list[Req]]:
    """OR-of-ANDs like :func:`eksmllint.scheduling.pod_requirement_terms`, keeping paths so findings
    can point at the offending selector (should move into the core next to that function)."""
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


def _plain(term: list[Req]) -> list[Requirement]:
    return [r.plain for r in term]


def _is_well_known(key: str) -> bool:
    return key in WELL_KNOWN or key.startswith(WELL_KNOWN_PREFIXES)


def term_zones(term: list[Req]) -> set[str] | None:
    """Zones one term allows (intersection of its ``In`` zone requirements); None: unconstrained."""
    zones: set[str] | None = None
    for r in term:
        if r.key in ZONE_NAME_KEYS and r.op == "In":
            zones = set(r.values) if zones is None else zones & set(r.values)
    return zones


def pod_zones(terms: list[list[Req]]) -> set[str] | None:
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

    True for pods that request accelerators or pin Karpenter-provisioned capacity (instance type /
    family / GPU labels, ``karpenter.sh/*``, ``karpenter.k8s.aws/*``, or a custom label some NodePool
    of the run sets). False for DaemonSets (they follow nodes, never cause provisioning; EML105 covers
    device-plugin coverage), pods bound to a node (``nodeName``), and pods that select labels only
    other capacity carries (managed node groups, Fargate, SageMaker HyperPod ``ml.*`` instances, one
    host) or a custom label no NodePool sets.
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
            if r.key.startswith(NON_KARPENTER_PREFIXES):
                return False
            if (
                r.key in (INSTANCE_TYPE, "beta.kubernetes.io/instance-type")
                and r.values
                and all(v.startswith(NON_KARPENTER_TYPE_PREFIXES) for v in r.values)
            ):
                return False
            if not _is_well_known(r.key):
                if r.key not in offered:
                    return False  # e.g. a managed node group's label: another provisioner's nodes
                pinned = True
            elif r.key in INSTANCE_KEYS or r.key.startswith(WELL_KNOWN_PREFIXES):
                pinned = True
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


def _memo(run, name: str) -> dict:
    return run.memo(f"eml7-{name}")


def _offered_keys(run) -> set[str]:
    memo = _memo(run, "offered")
    if "keys" not in memo:
        memo["keys"] = {k for p in run.nodepools for k, _, _ in p.offered}
    return memo["keys"]


def analyse(ctx, t: PodTemplate) -> Verdict | None:
    """The verdict for ``t`` on the run's NodePools; None when the run holds no NodePool. Usable
    and blocked pools are the run's one placement answer; only the zone-free retry (EML705) is
    computed here, once per shared placement."""
    run = ctx.run
    pools = run.nodepools
    if not pools:
        return None
    memo = _memo(run, "verdict")
    found = memo.get(id(t))
    if found is not None:
        return found
    where = placement(run, t)
    if not where.present:
        return None  # a templated selector (`${INSTANCE_TYPE}`): where it lands is unknown
    terms = requirement_terms(t)
    zones = _memo(run, "zone-only")
    zone_only = zones.get(id(where))
    if zone_only is None:
        zone_only = []
        if not where.usable and not where.blocked and pod_zones(terms) is not None:
            stripped = [[r for r in term if r[0] not in ZONE_NAME_KEYS] for term in where.terms]
            zone_only = [p for p in pools if serves(p, stripped, where.accelerators)]
        zones[id(where)] = zone_only
    out = Verdict(
        targeted=targets_nodepools(t, terms, pools, _offered_keys(run)),
        usable=where.usable,
        blocked=where.blocked,
        zone_only=zone_only,
    )
    memo[id(t)] = out
    return out


def pods_of(t: PodTemplate) -> str:
    """How messages name a template's pods: "the pods" or "the 'worker' pods"."""
    return "the pods" if t.role in ("pod", "replica", "daemon") else f"the {t.role!r} pods"


def _taint_text(x: Taint) -> str:
    return f"{x.key}={x.value}:{x.effect}" if x.value else f"{x.key}:{x.effect}"


def _toleration(x: Taint) -> dict:
    if x.value:
        return {"key": x.key, "operator": "Equal", "value": x.value, "effect": x.effect}
    return {"key": x.key, "operator": "Exists", "effect": x.effect}


def _taint_path(x: Taint) -> DocPath:
    return ("spec", "template", "spec", "taints", x.index)


def untolerated_taint(ctx, t: PodTemplate):
    """EML701: every NodePool that could serve the pod taints its nodes without a toleration."""
    placement = analyse(ctx, t)
    if placement is None or placement.status != "taint":
        return
    from eksmllint.scheduling import _toleration_key

    key = (id(placement.blocked), tuple(_toleration_key(x) for x in t.tolerations))
    memo = _memo(ctx.run, "untolerated")
    found = memo.get(key)
    if found is None:  # depends only on the shared placement and the tolerations: once per pair
        blocked = [(p, untolerated(t, p)) for p in placement.blocked]
        blocked = [(p, taints) for p, taints in blocked if taints]

        # The fix tolerates the pool needing the fewest tolerations (then the highest weight).
        def weight(p: NodePoolView) -> int:
            w = p.resource.get(("spec", "weight"))
            return w if isinstance(w, int) and not isinstance(w, bool) else 0

        best = min(blocked, key=lambda pt: (len(pt[1]), -weight(pt[0]), pt[0].name)) if blocked else None
        found = memo[key] = (blocked, best)
    blocked, best = found
    if best is None:
        return
    pool, taints = best
    if len(blocked) == 1:
        taint_word = "taint" if len(taints) == 1 else "taints"
        what = (
            f"{pods_of(t)} can only run on NodePool {pool.name}, whose {taint_word} "
            f"{', '.join(_taint_text(x) for x in taints)} they do not tolerate"
        )
    else:
        listed = "; ".join(f"{p.name} ({', '.join(_taint_text(x) for x in ts)})" for p, ts in blocked[:3])
        more = f" and {len(blocked) - 3} more" if len(blocked) > 3 else ""
        what = f"{pods_of(t)} tolerate the taints of no NodePool that can serve them: {listed}{more}"
    tol_path = t.spec_path + ("tolerations",)
    fix = Fix(
        f"Tolerate the taints of NodePool {pool.name}: {', '.join(_taint_text(x) for x in taints)}",
        tuple(AppendItem(tol_path, _toleration(x)) for x in taints),
    )
    related = [p.resource.location(_taint_path(x)) for p, ts in blocked[:RELATED_MAX] for x in ts]
    yield ctx.report(
        t.resource,
        tol_path if t.spec.get("tolerations") is not None else t.spec_path,
        f"{what}, so they stay Pending",
        fix=fix,
        related=related,
    )


def _requirement_text(r: Req) -> str:
    return requirement_text(r.plain)


def _mismatch(pool: NodePoolView, term: list[Req], accels: dict[str, int]) -> tuple[str, Req | None]:
    """Why ``pool`` rejects ``term``: (reason, the pod requirement at fault; None: its devices)."""
    for r in term:
        if not compatible([r.plain], pool):
            offered = pool.values_for(r.key)
            if offered is not None:
                return f"{pool.name} offers {r.key} [{', '.join(offered)}], the pod needs {_requirement_text(r)}", r
            return f"{pool.name} does not offer {_requirement_text(r)}", r
    fit = device_fit(pool, _plain(term), accels)
    if fit.reason is None:
        return f"{pool.name}: not compatible", None
    culprit = next((r for r in term if r.key in INSTANCE_KEYS), None) if fit.by_instance else None
    return f"{pool.name}: {fit.reason}", culprit


def _device_path(t: PodTemplate) -> DocPath:
    """Path of the first accelerator request (where a device mismatch is reported)."""
    for c in t.containers + t.init_containers:
        for which, declared in (("limits", c.limits), ("requests", c.requests)):
            for res in t.accelerators:
                if res in declared:
                    return c.path + ("resources", which, res)
    return t.spec_path


def no_matching_nodepool(ctx, t: PodTemplate):
    """EML702: NodePools exist, but none is compatible with the pod's selectors and devices."""
    placement = analyse(ctx, t)
    if placement is None or placement.status != "nomatch":
        return
    terms = requirement_terms(t)
    accels = t.accelerators
    pools = ctx.run.nodepools
    reasons, culprit = [], None
    for pool in pools:  # the three shown, and on until some pool names the requirement at fault
        if len(reasons) >= 3 and culprit is not None:
            break
        reason, req = _mismatch(pool, terms[0], accels)
        reasons.append(reason)
        culprit = culprit or req
    shown = "; ".join(reasons[:3]) + (f"; and {len(pools) - 3} more" if len(pools) > 3 else "")
    path = culprit.path if culprit else _device_path(t)
    yield ctx.report(
        t.resource,
        path,
        f"no NodePool of the run can launch a node for {pods_of(t)} ({shown}), so Karpenter never provisions one",
        related=[p.resource.location(("spec", "template", "spec", "requirements")) for p in pools[:5]],
    )


# --- EML705: zones --------------------------------------------------------------------------------
def _topology_zones(terms: object, key_field: str) -> set[str] | None:
    """Zones of a PV ``nodeSelectorTerms`` (key_field ``matchExpressions``) or a StorageClass
    ``allowedTopologies`` list (key_field ``matchLabelExpressions``); None: unconstrained."""
    if not isinstance(terms, list) or not terms:
        return None
    out: set[str] = set()
    for term in terms:
        exprs = term.get(key_field) if isinstance(term, dict) else None
        zones: set[str] | None = None
        if isinstance(exprs, list):
            for e in exprs:
                if not isinstance(e, dict) or e.get("key") not in VOLUME_ZONE_KEYS:
                    continue
                if key_field == "matchExpressions" and e.get("operator", "In") != "In":
                    continue
                vals = e.get("values")
                if isinstance(vals, list):
                    zones = {str(v) for v in vals} if zones is None else zones & {str(v) for v in vals}
        if zones is None:
            return None
        out |= zones
    return out


def volume_zones(ctx, t: PodTemplate) -> Iterator[tuple[DocPath, str, set[str], Resource]]:
    """(claimName path, description, zones, zone-carrying resource) of each zonal volume."""
    run, ns = ctx.run, t.resource.namespace
    for i, v in t.volumes:
        pvc_ref = v.get("persistentVolumeClaim")
        name = pvc_ref.get("claimName") if isinstance(pvc_ref, dict) else None
        if not isinstance(name, str):
            continue
        path = t.spec_path + ("volumes", i, "persistentVolumeClaim", "claimName")
        for pvc in run.find("PersistentVolumeClaim", name, ns)[:1]:
            pv_name = pvc.get(("spec", "volumeName"))
            if isinstance(pv_name, str) and pv_name:
                for pv in run.find("PersistentVolume", pv_name)[:1]:
                    zones = _topology_zones(
                        pv.get(("spec", "nodeAffinity", "required", "nodeSelectorTerms")), "matchExpressions"
                    )
                    if zones is not None:
                        yield path, f"PersistentVolume {pv_name} (bound to PVC {name})", zones, pv
                continue
            sc_name = pvc.get(("spec", "storageClassName"))
            if isinstance(sc_name, str) and sc_name:
                for sc in run.find("StorageClass", sc_name)[:1]:
                    zones = _topology_zones(sc.get(("allowedTopologies",)), "matchLabelExpressions")
                    if zones is not None:
                        yield path, f"StorageClass {sc_name} (of PVC {name})", zones, sc


def _zone_req(terms: list[list[Req]]) -> Req | None:
    for term in terms:
        for r in term:
            if r.key in ZONE_NAME_KEYS and r.op == "In":
                return r
    return None


def _fmt(zones: Iterable[str]) -> str:
    return ", ".join(sorted(zones))


def _usable_zones(run, usable: list[NodePoolView]) -> set[str] | None:
    """Union of the zones of ``usable`` (a shared placement list); None if one is unconstrained."""
    memo = _memo(run, "usable-zones")
    key = id(usable)
    if key not in memo:
        pz = [p.values_for(ZONE) for p in usable]
        memo[key] = {z for zs in pz for z in zs} if all(z is not None for z in pz) else None
    return memo[key]


def zone_conflict(ctx, t: PodTemplate):
    """EML705: the pod's zones, its NodePools' zones and its volumes' zones do not intersect."""
    terms = requirement_terms(t)
    zones = pod_zones(terms)
    placement = analyse(ctx, t)
    if placement is not None and placement.status == "zone" and zones is not None:
        pool_zones = sorted({z for p in placement.zone_only for z in (p.values_for(ZONE) or ())})
        req = _zone_req(terms)
        names = ", ".join(p.name for p in placement.zone_only[:3])
        yield ctx.report(
            t.resource,
            req.path if req else t.spec_path,
            f"{pods_of(t)} must run in zone {_fmt(zones)}, but every NodePool that could serve them "
            f"({names}) launches only in {_fmt(pool_zones)}",
            related=[
                p.resource.location(("spec", "template", "spec", "requirements")) for p in placement.zone_only[:5]
            ],
        )
        return
    volumes = list(volume_zones(ctx, t))
    if not volumes:
        return  # nothing zonal to conflict with: skip the NodePool zones (hot: every template)
    # Zones the pod can really get: its own constraint, narrowed by the NodePools it lands on.
    allowed, why = zones, ("their zone constraint" if zones is not None else "")
    if placement is not None and placement.targeted and placement.usable:
        union = _usable_zones(ctx.run, placement.usable)
        if union is not None:
            allowed = union if allowed is None else allowed & union
            why = "the zones of their NodePools" if zones is None else "their zone constraint and NodePools"
    for path, what, vz, holder in volumes:
        if allowed is not None and not (allowed & vz):
            yield ctx.report(
                t.resource,
                path,
                f"{what} is in zone {_fmt(vz)}, but {pods_of(t)} can only run in {_fmt(allowed)} "
                f"({why}), so the volume can never be attached",
                related=[holder.location(())],
            )
            return
        allowed = vz if allowed is None else allowed & vz
        why = why + (" and " if why else "") + what


# --- EML703 / EML704: references ---------------------------------------------------------------
REFERENCE_KINDS = (
    "PersistentVolumeClaim",
    "ConfigMap",
    "Secret",
    "ServiceAccount",
    "PriorityClass",
    "StorageClass",
    "EC2NodeClass",
)
NAMESPACED = frozenset({"PersistentVolumeClaim", "ConfigMap", "Secret", "ServiceAccount"})
_KIND_NAMES = {k.lower(): k for k in REFERENCE_KINDS} | {
    "pvc": "PersistentVolumeClaim",
    "sa": "ServiceAccount",
    "sc": "StorageClass",
    "cm": "ConfigMap",
}
#: Objects every cluster has although no manifest defines them.
BUILTIN = frozenset(
    {
        ("ServiceAccount", "default"),  # created in every namespace by the service-account controller
        ("ConfigMap", "kube-root-ca.crt"),  # published in every namespace (root CA publisher, 1.21+)
        ("PriorityClass", "system-node-critical"),
        ("PriorityClass", "system-cluster-critical"),
        ("StorageClass", "gp2"),  # created by EKS on every cluster (not default-annotated since 1.30)
    }
)


def _kind_list(value: object) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value] if isinstance(value, (list, tuple)) else []


def checked_kinds(ctx) -> set[str]:
    """Kinds EML703 checks: the rule option ``kinds`` (a list, ``auto`` = the reference kinds the run
    holds at least one object of), else config ``reference-kinds``, else ``auto``; minus
    ``exclude-kinds``. In the admission webhook the run is one object: nothing is checked unless
    cluster context is loaded, and then only kinds the context holds."""
    run = ctx.run
    present = {k for k in REFERENCE_KINDS if run.by_kind.get(k)}
    webhook = run.settings.mode == "webhook"
    if webhook and not any(f.context_only for f in run.files):
        return set()
    configured = _kind_list(ctx.options.get("kinds", "auto"))
    if [k.lower() for k in configured] == ["auto"] and run.settings.reference_kinds is not None:
        configured = list(run.settings.reference_kinds)  # the rule option is more specific
    kinds: set[str] = set()
    for k in configured:
        if k.lower() == "auto":
            kinds |= present
        elif k.lower() in _KIND_NAMES:
            kinds.add(_KIND_NAMES[k.lower()])
    kinds -= {_KIND_NAMES.get(k.lower(), k) for k in _kind_list(ctx.options.get("exclude-kinds"))}
    return kinds & present if webhook else kinds


_DNS_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")


def _literal_name(name: object) -> str | None:
    """The referenced name, or None when it is not a literal Kubernetes name (templating
    placeholders such as ``__PVC_NAME__`` or ``${NAME}`` are left to the schema rules)."""
    if not isinstance(name, str) or not _DNS_NAME.match(name):
        return None
    return name


def _optional_volume(t: PodTemplate, path: DocPath) -> bool:
    parent = t.resource.get(path[:-1])
    return isinstance(parent, dict) and parent.get("optional") is True


@dataclass(frozen=True)
class Reference:
    source: Resource
    kind: str
    name: str
    namespace: str | None  # the namespace the object must be in (None: cluster-scoped or unknown)
    path: DocPath


def workload_references(ctx) -> Iterator[Reference]:
    """Every by-name reference of the run EML703 resolves."""
    run = ctx.run
    for t in run.templates:
        r = t.resource
        for kind, name, path in template_references(t):
            name = _literal_name(name)
            if name is None or kind not in REFERENCE_KINDS or _optional_volume(t, path):
                continue
            yield Reference(r, kind, name, r.namespace if kind in NAMESPACED else None, path)
        for i, _ in t.volumes:  # generic ephemeral volumes name a StorageClass
            path = t.spec_path + ("volumes", i, "ephemeral", "volumeClaimTemplate", "spec", "storageClassName")
            if (sc := _literal_name(r.get(path))) is not None:
                yield Reference(r, "StorageClass", sc, None, path)
    for w in run.workloads:
        r = w.resource
        for path in (("spec", "runPolicy", "schedulingPolicy", "priorityClass"), ("spec", "priorityClassName")):
            if path[1] == "priorityClassName" and not w.is_volcano_job:
                continue
            if (name := _literal_name(r.get(path))) is not None:
                yield Reference(r, "PriorityClass", name, None, path)
        vcts = r.get(("spec", "volumeClaimTemplates")) if r.kind == "StatefulSet" else None
        if isinstance(vcts, list):
            for i in range(len(vcts)):
                path = ("spec", "volumeClaimTemplates", i, "spec", "storageClassName")
                if (sc := _literal_name(r.get(path))) is not None:
                    yield Reference(r, "StorageClass", sc, None, path)
    for pvc in run.of_kind("PersistentVolumeClaim"):
        if (sc := _literal_name(pvc.get(("spec", "storageClassName")))) is not None:
            yield Reference(pvc, "StorageClass", sc, None, ("spec", "storageClassName"))
    for pool in run.nodepools:
        ref = pool.template_spec.get("nodeClassRef")
        kind = ref.get("kind", "EC2NodeClass") if isinstance(ref, dict) else None
        if kind == "EC2NodeClass" and (name := _literal_name(pool.node_class_name)) is not None:
            yield Reference(
                pool.resource, "EC2NodeClass", name, None, ("spec", "template", "spec", "nodeClassRef", "name")
            )


def _elsewhere(ctx, kind: str, name: str, namespace: str | None) -> list[Resource]:
    """Objects named ``name`` in explicit namespaces other than ``namespace``."""
    return [x for x in ctx.run.of_kind(kind) if x.name == name and x.namespace not in (None, namespace)]


def _secret_generators(run, namespace: str | None) -> set[str]:
    """Names of Secrets that objects of the run create: ExternalSecret (``spec.target.name``, else
    its own name), SealedSecret (its name), SecretProviderClass (``spec.secretObjects[].secretName``)."""
    names: set[str] = set()

    def in_ns(r: Resource) -> bool:
        return namespace is None or r.namespace in (None, namespace)

    for r in run.of_kind("ExternalSecret"):
        target = r.get(("spec", "target", "name"))
        if in_ns(r) and isinstance(target if target else r.name, str):
            names.add(target if target else r.name)
    for r in run.of_kind("SealedSecret"):
        tname = r.get(("spec", "template", "metadata", "name"))
        if in_ns(r) and isinstance(tname or r.name, str):
            names.add(tname or r.name)
    for r in run.of_kind("SecretProviderClass"):
        objs = r.get(("spec", "secretObjects"))
        if in_ns(r) and isinstance(objs, list):
            names.update(o["secretName"] for o in objs if isinstance(o, dict) and isinstance(o.get("secretName"), str))
    return names


def is_defined(run, kind: str, name: str, namespace: str | None) -> bool:
    """Whether the run defines (or generates, for Secrets) ``kind`` ``name`` in ``namespace``."""
    if run.find(kind, name, namespace):
        return True
    return kind == "Secret" and name in _secret_generators(run, namespace)


def dangling_reference(ctx, run):
    """EML703: a referenced object is not defined in the run (only for kinds the run holds)."""
    kinds = checked_kinds(ctx)
    if not kinds:
        return
    for ref in workload_references(ctx):
        if ref.kind not in kinds or (ref.kind, ref.name) in BUILTIN:
            continue
        if is_defined(run, ref.kind, ref.name, ref.namespace):
            continue
        where = f" in namespace {ref.namespace}" if ref.namespace else ""
        others = _elsewhere(ctx, ref.kind, ref.name, ref.namespace) if ref.namespace else []
        if others and ref.kind in ("PersistentVolumeClaim", "ConfigMap"):
            continue  # EML704 (cross-namespace-reference) reports it
        if others:
            hint = f"; one exists in namespace {others[0].namespace}, which pods cannot use"
        else:
            names = sorted(
                {
                    x.name
                    for x in run.of_kind(ref.kind)
                    if x.name and (ref.namespace is None or x.namespace in (None, ref.namespace))
                }
            )
            close = difflib.get_close_matches(ref.name, names, n=1, cutoff=0.75)
            hint = f"; did you mean {close[0]!r}?" if close else ""
        yield ctx.report(
            ref.source,
            ref.path,
            f"{ref.kind} {ref.name!r} is referenced but no manifest in the run defines it{where}{hint}",
        )


def cross_namespace_reference(ctx, t: PodTemplate):
    """EML704: a PVC / ConfigMap the pod uses exists only in another (explicit) namespace."""
    ns = t.resource.namespace
    if ns is None:
        return  # manifests without a namespace are applied with -n: nothing to compare
    for kind, name, path in template_references(t):
        name = _literal_name(name)
        if kind not in ("PersistentVolumeClaim", "ConfigMap") or name is None or _optional_volume(t, path):
            continue
        if ctx.run.find(kind, name, ns):
            continue
        others = _elsewhere(ctx, kind, name, ns)
        if not others:
            continue
        spaces = ", ".join(sorted({x.namespace for x in others if x.namespace}))
        yield ctx.report(
            t.resource,
            path,
            f"{kind} {name!r} exists only in namespace {spaces}, but the pod runs in namespace {ns}: "
            f"pods can only use {kind}s of their own namespace",
            related=[x.location(("metadata", "namespace")) for x in others[:3]],
        )
