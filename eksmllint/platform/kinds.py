"""The workload kinds table (``kinds.yaml``): where each kind keeps its pod templates, how many pods
each template makes, and what the kind is.

Everything that used to be a kind set or a per-kind ``if`` chain reads this table:
:func:`eksmllint.workload.workload_of` builds pod templates from :attr:`KindRow.templates`, rules ask
``Workload.has(trait)``, the deadline readers take :attr:`KindRow.deadline`, the webhook derives
its resources. A kind with a row is judged by every template rule; an object carrying pod
templates without one is reported (EML004, "not judged").
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from eksmllint.quantity import parse_int
from eksmllint.tables import load_table

DATA = Path(__file__).with_name("kinds.yaml")

Trait = Literal[
    "training",
    "operator-managed",
    "batch",
    "service",
    "serves",
    "per-node",
    "independent-pods",
    "no-nnodes",
    "kai-gang",
    "runtime",
]
Key = str | int
Path_ = tuple[Key, ...]


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class Count(_Row):
    """One factor of a template's pod count."""

    path: Path_ = ()  # () with a default: a constant
    root: bool = False  # path from the object's top instead of the entry's
    fallback: Path_ | None = None  # read when ``path`` is absent (Ray ``minReplicas``)
    default: int | None = 1
    #: A count that is 0 or not a literal is taken as 1 (LWS: ``size`` and ``replicas`` of 0 or
    #: ``$N`` still mean at least one group of at least one pod).
    at_least_one: bool = Field(False, alias="at-least-one")
    #: Subtract one when a mapping is at this root path (LWS: the leader is one of ``size``).
    less_one_if: Path_ | None = Field(None, alias="less-one-if")

    def read(self, obj: Any, entry: Any) -> int | None:
        base = obj if self.root else entry
        value = _get(base, self.path) if self.path else None
        if value is None and self.fallback is not None:
            value = _get(base, self.fallback)
        n = self.default if value is None else parse_int(value)
        if self.at_least_one and not n:
            n = 1
        if n is not None and self.less_one_if is not None and isinstance(_get(obj, self.less_one_if), dict):
            n -= 1
        return n


class NotCollective(_Row):
    path: Path_
    values: frozenset[str]


class TemplateSpec(_Row):
    """Where one group of pod templates is (see the shapes in ``kinds.yaml``)."""

    shape: Literal["single", "map", "list", "embedded"]
    at: Path_
    template: Path_ = ()
    role: str = ""
    name_field: str = Field("name", alias="name-field")
    pods: tuple[Count, ...] | None = ()
    #: Roles of these templates that only start work running elsewhere (the LAUNCHER class) ...
    launcher_roles: tuple[str, ...] = Field((), alias="launcher-roles")
    #: ... unless this root path is ``true`` (MPIJob ``runLauncherAsWorker``) ...
    launcher_unless: Path_ | None = Field(None, alias="launcher-unless")
    #: ... and the evidence the classification gives for them.
    launcher_evidence: str = Field("", alias="launcher-evidence")
    #: Containers the operator adds to each pod, at these root paths (Slinky's slurmd).
    extra_containers: tuple[Path_, ...] = Field((), alias="extra-containers")
    #: A run length of the template's own pods, inside the entry (JobSet's Job deadline).
    deadline: Path_ | None = None
    #: List entries named, with status ``Complete``, in another entry's list at this key run before
    #: it: not part of its collective (JobSet ``dependsOn``).
    runs_before: str | None = Field(None, alias="runs-before")
    #: Entries whose value at ``path`` is one of ``values`` are not part of the collective (Trainer
    #: dataset and model initializers).
    not_collective: NotCollective | None = Field(None, alias="not-collective")

    def outside_collective(self, holder: list) -> set[int]:
        """Indices of the list entries whose pods are not part of the collective."""
        out: set[int] = set()
        if self.runs_before:
            first = set()
            for e in holder:
                deps = e.get(self.runs_before) if isinstance(e, dict) else None
                for d in deps if isinstance(deps, list) else ():
                    if isinstance(d, dict) and d.get("status") == "Complete" and isinstance(d.get("name"), str):
                        first.add(d["name"])
            out |= {
                i
                for i, e in enumerate(holder)
                if isinstance(e, dict) and isinstance(e.get(self.name_field), str) and e[self.name_field] in first
            }
        if self.not_collective is not None:
            rule = self.not_collective
            out |= {i for i, e in enumerate(holder) if _get(e, rule.path) in rule.values}
        return out

    def pods_of(self, obj: Any, entry: Any) -> int | None:
        """The template's pod count: the product of :attr:`pods`; None when unknown."""
        if self.pods is None:
            return None
        total = 1
        for count in self.pods:
            n = count.read(obj, entry)
            if n is None:
                return None
            total *= n
        return total


class KindRow(_Row):
    kind: str
    group: str
    versions: tuple[str, ...]
    #: The plural the API serves; rows with one are sent to the webhook.
    resource: str | None = None
    source: str
    #: Who runs it, for evidence ("the Kubeflow training operator"); rows that are operator-managed.
    operator: str | None = None
    templates: tuple[TemplateSpec, ...]
    traits: frozenset[Trait] = frozenset()
    #: Run length of all the kind's pods.
    deadline: Path_ | None = None
    #: Where the operator reads the gang (PodGroup) settings.
    gang_policy: Path_ | None = Field(None, alias="gang-policy")
    #: Roles whose pods are not part of the collective (launchers, submitters, Ray heads).
    non_collective_roles: frozenset[str] = Field(frozenset(), alias="non-collective-roles")
    #: Pods of one collective when the kind runs several (LWS: each group of ``size``).
    group_size: Path_ | None = Field(None, alias="group-size")
    #: Where the kind names the object its pods come from (TrainJob -> runtime).
    runtime_ref: Path_ | None = Field(None, alias="runtime-ref")
    #: Where the kind holds a JobSet spec (failurePolicy, replicatedJobs): the JobSet's own, a
    #: training runtime's template.
    jobset_spec: Path_ | None = Field(None, alias="jobset-spec")

    @property
    def api_group(self) -> str:
        return self.group

    def has(self, trait: Trait) -> bool:
        return trait in self.traits

    def launcher_evidence(self, role: str, obj: Any) -> str | None:
        """The LAUNCHER evidence for a template of ``role``, or None when its pods do the work."""
        for spec in self.templates:
            if role in spec.launcher_roles and not (
                spec.launcher_unless is not None and _get(obj, spec.launcher_unless) is True
            ):
                return spec.launcher_evidence
        return None


class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    kinds: tuple[KindRow, ...]

    @model_validator(mode="after")
    def _consistent(self) -> _Table:
        seen: set[tuple[str, str]] = set()
        for row in self.kinds:
            if (row.group, row.kind) in seen:
                raise ValueError(f"kinds.yaml: {row.group}/{row.kind} has two rows")
            seen.add((row.group, row.kind))
            if row.has("operator-managed") != (row.operator is not None):
                raise ValueError(f"kinds.yaml: {row.kind}: an operator-managed row names its operator, others none")
        return self


def _get(data: Any, path: Path_) -> Any:
    for key in path:
        if isinstance(key, int):
            if not isinstance(data, list) or not -len(data) <= key < len(data):
                return None
        elif not isinstance(data, dict):
            return None
        data = data[key] if isinstance(key, int) else data.get(key)
        if data is None:
            return None
    return data


@lru_cache(maxsize=1)
def rows() -> tuple[KindRow, ...]:
    """Every kind row, validated once."""
    return load_table(_Table, DATA).kinds


@lru_cache(maxsize=1)
def _index() -> tuple[dict[tuple[str, str], KindRow], dict[str, KindRow]]:
    exact = {(r.group, r.kind): r for r in rows()}
    first: dict[str, KindRow] = {}
    for r in rows():
        first.setdefault(r.kind, r)  # a kind written under another group: its first row
    return exact, first


def row_for(group: str, kind: str) -> KindRow | None:
    """The row of (API group, kind); for a group no row has, the kind's first row (a Job is a
    batch Job unless its group says Volcano). None: not a workload kind."""
    exact, first = _index()
    return exact.get((group, kind)) or first.get(kind)


def webhook_resources() -> tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...]:
    """(group, versions, resources) of every row with a ``resource``, grouped by API group in
    table order: what the admission webhook is sent."""
    groups: dict[str, tuple[list[str], list[str]]] = {}
    for r in rows():
        if r.resource is None:
            continue
        versions, resources = groups.setdefault(r.group, ([], []))
        versions.extend(v for v in r.versions if v not in versions)
        if r.resource not in resources:
            resources.append(r.resource)
    return tuple((g, tuple(v), tuple(res)) for g, (v, res) in groups.items())


#: How far :func:`pod_template_paths` looks into an object it has no row for (hostile input stays cheap).
_SCAN_NODES = 5000


def pod_template_paths(data: Any) -> list[Path_]:
    """Paths of what looks like a pod template in an object the table has no row for: a mapping
    whose ``spec.containers`` is a list of mappings (the object itself for a bare pod). Breadth first,
    at most ``_SCAN_NODES`` nodes."""
    found: list[Path_] = []
    queue: list[tuple[Path_, Any]] = [((), data)]
    for seen, (path, node) in enumerate(queue):
        if seen >= _SCAN_NODES:
            break
        if isinstance(node, dict):
            spec = node.get("spec")
            containers = spec.get("containers") if isinstance(spec, dict) else None
            if isinstance(containers, list) and containers and all(isinstance(c, dict) for c in containers):
                found.append(path)
                continue  # a pod template holds no other
            queue.extend((path + (k,), v) for k, v in node.items() if isinstance(v, (dict, list)))
        elif isinstance(node, list):
            queue.extend((path + (i,), v) for i, v in enumerate(node) if isinstance(v, (dict, list)))
    return found
