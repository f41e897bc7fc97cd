"""EML705 zone-conflict: the pod's zone constraint, the zones of every NodePool it can use and the
zones of its volumes (PV node affinity, StorageClass allowedTopologies) do not intersect."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from eksmllint.checks.helpers import sentences
from eksmllint.checks.scheduling._shared import (
    POOL_REQUIREMENTS,
    Req,
    analyse,
    candidates,
    dra_note,
    plain,
    pod_zones,
    pods_of,
    requirement_terms,
)
from eksmllint.core.context import LintRun, RuleContext
from eksmllint.core.finding import DocPath, Finding
from eksmllint.resource import Resource
from eksmllint.scheduling import ZONE, ZONE_NAME_KEYS, NodePoolView
from eksmllint.workload import PodTemplate

#: Volume topology keys that carry a zone (PV nodeAffinity, StorageClass allowedTopologies).
VOLUME_ZONE_KEYS = ZONE_NAME_KEYS + ("topology.ebs.csi.aws.com/zone",)


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


def volume_zones(run: LintRun, t: PodTemplate) -> Iterator[tuple[DocPath, str, set[str], Resource]]:
    """(claimName path, description, zones, zone-carrying resource) of each zonal volume."""
    ns = t.resource.namespace
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


def _usable_zones(run: LintRun, usable: list[NodePoolView]) -> set[str] | None:
    """Union of the zones of ``usable`` (a shared placement list); None if one is unconstrained."""
    pz = [p.values_for(ZONE) for p in usable]
    return {z for zs in pz for z in (zs or ())} if all(z is not None for z in pz) else None


def check(ctx: RuleContext, t: PodTemplate) -> Iterator[Finding]:
    """EML705: the pod's zones, its NodePools' zones and its volumes' zones do not intersect."""
    terms = requirement_terms(t)
    zones = pod_zones([plain(term) for term in terms])
    placement = analyse(ctx, t)
    if placement is not None and placement.status == "zone" and zones is not None:
        pool_zones = sorted({z for p in placement.zone_only for z in (p.values_for(ZONE) or ())})
        req = _zone_req(terms)
        names = ", ".join(p.name for p in placement.zone_only[:3])
        yield ctx.report(
            t.resource,
            req.path if req else t.spec_path,
            f"{pods_of(t)} must run in zone {_fmt(zones)}, but their NodePools launch only in {_fmt(pool_zones)}",
            detail=sentences(f"every NodePool {candidates(t, 'could')} ({names}) launches elsewhere{dra_note(t)}"),
            related=[p.resource.location(POOL_REQUIREMENTS) for p in placement.zone_only[:5]],
        )
        return
    volumes = list(volume_zones(ctx.run, t))
    if not volumes:
        return  # nothing zonal to conflict with: skip the NodePool zones (hot: every template)
    # Zones the pod can really get: its own constraint, narrowed by the NodePools it lands on.
    allowed, why = zones, ("their zone constraint" if zones is not None else "")
    if placement is not None and placement.targeted and placement.usable:
        union = ctx.run.once("eml7-usable-zones", placement.usable, _usable_zones)
        if union is not None:
            allowed = union if allowed is None else allowed & union
            why = "the zones of their NodePools" if zones is None else "their zone constraint and NodePools"
    for path, what, vz, holder in volumes:
        if allowed is not None and not (allowed & vz):
            yield ctx.report(
                t.resource,
                path,
                f"{what} is in zone {_fmt(vz)}, but {pods_of(t)} can only run in {_fmt(allowed)}",
                detail=sentences(
                    f"{why}: the volume can never be attached" if why else "the volume can never be attached"
                ),
                related=[holder.location(())],
            )
            return
        allowed = vz if allowed is None else allowed & vz
        why = why + (" and " if why else "") + what
