"""Slurm partitions and the hardware of their nodes: a Slinky ``NodeSet`` (``slinky.slurm.net``) in the
run serves the partition of its name (v1beta1: ``spec.partition.enabled``; older releases also name
one in ``spec.partition``), and its slurmd pod template says where those pods land (instance-type
``nodeSelector`` or required node affinity, looked up in the instance catalogue) and what each
gets (slurmd ``resources.limits``). Slurm batch scripts name their partition (``#SBATCH
--partition``), so rules can judge a script against the hardware it runs on (EML806's node shape,
the precision rules' bf16 support). A partition served by no NodeSet, or by several, is unknown.

Source: SlinkyProject/slurm-operator ``api/v1beta1/nodeset_types.go`` (NodeSetSpec: ``template``,
``partition``, ``slurmd``).
"""

from __future__ import annotations

from dataclasses import dataclass

from eksmllint.catalogue import L_INSTANCE_TYPE, InstanceType, get_catalogue
from eksmllint.quantity import parse_count, parse_quantity, to_mib
from eksmllint.resource import Resource
from eksmllint.workload import GPU

SLINKY_GROUP = "slinky.slurm.net"


@dataclass(frozen=True)
class NodeShape:
    """What one node of a Slurm partition offers (from a Slinky NodeSet in the run)."""

    source: str
    gpus: int | None
    cpus: int | None
    memory_mib: int | None


def slinky_nodesets(run) -> list[Resource]:
    return [r for r in run.resources if r.group == SLINKY_GROUP and r.kind == "NodeSet"]


def _nodeset_partitions(r: Resource) -> set[str]:
    names = {r.name} if r.name else set()
    part = r.get(("spec", "partition"))
    if isinstance(part, str):
        names.add(part)
    return names


def nodeset_instance(r: Resource) -> InstanceType | None:
    spec = r.get(("spec", "template", "spec"))
    if not isinstance(spec, dict):
        return None
    ns = spec.get("nodeSelector")
    name = ns.get(L_INSTANCE_TYPE) if isinstance(ns, dict) else None
    if name is None:
        terms = (
            (
                ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
                    "requiredDuringSchedulingIgnoredDuringExecution"
                )
                or {}
            )
            if isinstance(spec.get("affinity"), dict)
            else {}
        )
        values: set[str] = set()
        for term in terms.get("nodeSelectorTerms") or [] if isinstance(terms, dict) else []:
            for e in (term.get("matchExpressions") or []) if isinstance(term, dict) else []:
                if isinstance(e, dict) and e.get("key") == L_INSTANCE_TYPE and e.get("operator") == "In":
                    values.update(str(v) for v in e.get("values") or [])
        name = next(iter(values)) if len(values) == 1 else None
    return get_catalogue().get(str(name)) if name is not None else None


def _slurmd_limits(r: Resource) -> dict:
    res = r.get(("spec", "slurmd", "resources", "limits"))
    if isinstance(res, dict):
        return res
    containers = r.get(("spec", "template", "spec", "containers"))
    if isinstance(containers, list):
        for c in containers:
            if isinstance(c, dict) and c.get("name") == "slurmd":
                lim = (c.get("resources") or {}).get("limits") if isinstance(c.get("resources"), dict) else None
                if isinstance(lim, dict):
                    return lim
    return {}


def partition_nodeset(run, partition: str | None) -> Resource | None:
    """The one Slinky NodeSet of the run serving ``partition``; None when none or several do."""
    if not partition:
        return None
    sets = [r for r in slinky_nodesets(run) if partition in _nodeset_partitions(r)]
    return sets[0] if len(sets) == 1 else None


def partition_instance(run, partition: str | None) -> InstanceType | None:
    """The instance type the nodes of ``partition`` are, when its NodeSet pins one."""
    r = partition_nodeset(run, partition)
    return nodeset_instance(r) if r is not None else None


def partition_shape(run, partition: str | None) -> NodeShape | None:
    """The node shape of ``partition`` from the one Slinky NodeSet serving it; None if unknown."""
    r = partition_nodeset(run, partition)
    if r is None:
        return None
    it = nodeset_instance(r)
    limits = _slurmd_limits(r)
    gpus = (
        parse_count(limits.get(GPU))
        if GPU in limits
        else (it.accelerator_count if it and it.accelerator_kind == "nvidia" else None)
    )
    cpu_q = parse_quantity(limits.get("cpu")) if "cpu" in limits else None
    mem_q = parse_quantity(limits.get("memory")) if "memory" in limits else None
    cpus = int(cpu_q) if cpu_q is not None else (it.vcpu if it else None)
    mem = int(to_mib(mem_q)) if mem_q is not None else (it.memory_gib * 1024 if it else None)
    if gpus is None and cpus is None and mem is None:
        return None
    source = f"NodeSet {r.name!r}" + (f" ({it.name})" if it else "")
    return NodeShape(source, gpus, cpus, mem)
