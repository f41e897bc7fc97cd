"""The uniform workload view: every workload kind yields its pod templates.

Rules are written once against :class:`PodTemplate` / :class:`Workload` instead of once per kind:
a PyTorchJob Worker, a Volcano task, a RayCluster worker group and a JobSet replicated job all
become "a pod template with a role, a pod count and scheduler settings".
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from eksmllint.apigroups import VOLCANO_JOB_GROUP
from eksmllint.core.finding import DocPath
from eksmllint.guarded import Guarded
from eksmllint.lazy import cached_property
from eksmllint.platform.kinds import KindRow, TemplateSpec, Trait, row_for
from eksmllint.quantity import parse_count, parse_int, parse_quantity
from eksmllint.resource import Resource

GPU = "nvidia.com/gpu"
NEURON = "aws.amazon.com/neuron"
NEURONCORE = "aws.amazon.com/neuroncore"
NEURONDEVICE = "aws.amazon.com/neurondevice"
EFA = "vpc.amazonaws.com/efa"
ACCELERATORS = (GPU, NEURON, NEURONCORE, NEURONDEVICE)
DEVICE_PLUGIN_RESOURCES = ACCELERATORS + (EFA, "amd.com/gpu", "habana.ai/gaudi")

#: Words that start a distributed (multi-process, multi-node) launch.
DISTRIBUTED_LAUNCHERS = Guarded(
    r"\b(torchrun|torch\.distributed\.(run|launch)|mpirun|mpiexec|horovodrun|deepspeed|accelerate\s+launch)\b",
    ("torchrun", "torch.distributed.", "mpirun", "mpiexec", "horovodrun", "deepspeed", "accelerate"),
)


#: What the launch and command readers read of one container's command + args (README "Limits").
#: They cost tens of microseconds a word (options, wrappers, ``$(VAR)``, precision flags), so a
#: command padded to 80,000 arguments (1.4 MB, under the API server's limits) took seconds, past
#: the webhook's budget; the largest command of the public corpus has 50 words and 5.8 KB.
#: A larger command is not read at all (its launches unknown, as for an image's entrypoint:
#: reading part of it could miss a flag written later), and EML004 says so.
MAX_COMMAND_WORDS = 2_048
MAX_COMMAND_CHARS = 32 * 1024


def _int(value: Any, default: int | None) -> int | None:
    """A replica-like count: ``default`` when absent, None when present but not a literal
    (``$NUM_NODES``, ``{{ .Values.n }}``) -- unknown, so rules stay silent instead of assuming 1."""
    return default if value is None else parse_int(value)


def _named_entries(items: Any) -> list[tuple[int, dict]]:
    """(index, entry) of a volumes/volumeMounts list: mappings whose ``name`` is a string or
    absent. Rules match these by name; a list or mapping as a name (schema-invalid, EML002)
    would make every rule that collects names crash."""
    if not isinstance(items, list):
        return []
    return [(i, x) for i, x in enumerate(items) if isinstance(x, dict) and isinstance(x.get("name", ""), str)]


@dataclass(eq=False)
class Container:
    template: PodTemplate
    path: DocPath  # path of the container mapping inside the resource
    data: dict
    init: bool = False

    @cached_property
    def name(self) -> str:
        n = self.data.get("name")
        return n if isinstance(n, str) else ""

    @cached_property
    def image(self) -> str | None:
        img = self.data.get("image")
        return img if isinstance(img, str) else None

    def _resources(self, which: str) -> dict:
        res = self.data.get("resources")
        sub = res.get(which) if isinstance(res, dict) else None
        return sub if isinstance(sub, dict) else {}

    @cached_property
    def limits(self) -> dict:
        return self._resources("limits")

    @cached_property
    def requests(self) -> dict:
        return self._resources("requests")

    def count(self, resource: str) -> int:
        """Device count the container gets: limits win (requests default to them)."""
        counts = self._counts
        found = counts.get(resource)
        if found is None:
            limits = self.limits
            value = limits[resource] if resource in limits else self.requests.get(resource)
            found = counts[resource] = 0 if value is None else (parse_count(value) or 0)
        return found

    @cached_property
    def _counts(self) -> dict[str, int]:
        return {}

    def request_quantity(self, resource: str):
        """What the scheduler sees: requests, defaulting to limits."""
        value = self.requests.get(resource, self.limits.get(resource))
        return parse_quantity(value)

    def limit_quantity(self, resource: str):
        return parse_quantity(self.limits.get(resource))

    @cached_property
    def env_list(self) -> list[dict]:
        env = self.data.get("env")
        return [e for e in env if isinstance(e, dict)] if isinstance(env, list) else []

    @cached_property
    def env(self) -> dict[str, str | None]:
        """Literal env values; ``None`` for valueFrom entries."""
        out: dict[str, str | None] = {}
        for e in self.env_list:
            name = e.get("name")
            if isinstance(name, str):
                v = e.get("value")
                out[name] = None if "valueFrom" in e else ("" if v is None else str(v))
        return out

    def env_index(self, name: str) -> int | None:
        env = self.data.get("env")
        if isinstance(env, list):
            for i, e in enumerate(env):
                if isinstance(e, dict) and e.get("name") == name:
                    return i
        return None

    @cached_property
    def volume_mounts(self) -> list[tuple[int, dict]]:
        return _named_entries(self.data.get("volumeMounts"))

    def mount_for(self, directory: str) -> tuple[int, dict] | None:
        """(index, entry) of the volume mount holding ``directory``: the longest mountPath prefix."""
        best: tuple[int, dict] | None = None
        best_len = -1
        for i, m in self.volume_mounts:
            mp = str(m.get("mountPath", "")).rstrip("/") or "/"
            if (directory == mp or directory.startswith(mp.rstrip("/") + "/")) and len(mp) > best_len:
                best, best_len = (i, m), len(mp)
        return best

    @cached_property
    def command_text(self) -> str:
        """command + args joined by spaces (a ``bash -c`` script is one of the words)."""
        command, args = self.argv_lists()
        return " ".join((command or []) + (args or []))

    @cached_property
    def command_unread(self) -> str | None:
        """Why the launch and command readers leave this container's command alone (None: they
        read it): more than :data:`MAX_COMMAND_WORDS` words or :data:`MAX_COMMAND_CHARS` characters."""
        command, args = self.argv_lists()
        words = (command or []) + (args or [])
        if len(words) > MAX_COMMAND_WORDS:
            return f"{len(words):,} words (more than {MAX_COMMAND_WORDS:,})"
        chars = sum(map(len, words))
        if chars > MAX_COMMAND_CHARS:
            return f"{chars:,} characters (more than {MAX_COMMAND_CHARS:,})"
        return None

    def argv_lists(self) -> tuple[list[str] | None, list[str] | None]:
        """(command, args) as strings; computed once (many rules read them: do not mutate)."""
        found = self.__dict__.get("_argv")
        if found is None:
            command, args = self.data.get("command"), self.data.get("args")
            found = self.__dict__["_argv"] = (
                [str(x) for x in command] if isinstance(command, list) else None,
                [str(x) for x in args] if isinstance(args, list) else None,
            )
        return found


@dataclass(eq=False)
class PodTemplate:
    """One pod template of a workload. ``path`` points at the object holding metadata/spec."""

    workload: Workload
    path: DocPath
    role: str
    replicas: int | None  # pods created from this template per job (None = per node / unknown)
    #: The kinds-table entry the template was found by (None for views made by hand).
    spec_row: TemplateSpec | None = None
    #: Are its pods part of the collective? (Not a JobSet job others wait for, not an initializer.)
    in_collective: bool = True

    @cached_property
    def resource(self) -> Resource:
        return self.workload.resource

    @cached_property
    def spec_path(self) -> DocPath:
        return self.path + ("spec",)

    @cached_property
    def spec(self) -> dict:
        s = self.resource.get(self.spec_path)
        return s if isinstance(s, dict) else {}

    @cached_property
    def metadata(self) -> dict:
        m = self.resource.get(self.path + ("metadata",))
        return m if isinstance(m, dict) else {}

    @cached_property
    def annotations(self) -> dict:
        a = self.metadata.get("annotations")
        return a if isinstance(a, dict) else {}

    @cached_property
    def labels(self) -> dict:
        a = self.metadata.get("labels")
        return a if isinstance(a, dict) else {}

    @cached_property
    def containers(self) -> list[Container]:
        return self._containers("containers", init=False)

    @cached_property
    def init_containers(self) -> list[Container]:
        return self._containers("initContainers", init=True)

    def _containers(self, key: str, init: bool) -> list[Container]:
        items = self.spec.get(key)
        found = (
            [Container(self, self.spec_path + (key, i), c, init) for i, c in enumerate(items) if isinstance(c, dict)]
            if isinstance(items, list)
            else []
        )
        if not init and self.spec_row is not None:  # containers the operator adds (Slinky's slurmd)
            for path in self.spec_row.extra_containers:
                c = self.resource.get(path)
                if isinstance(c, dict):
                    found.append(Container(self, path, c, init))
        return found

    @cached_property
    def volumes(self) -> list[tuple[int, dict]]:
        return _named_entries(self.spec.get("volumes"))

    def volume(self, name: str) -> tuple[int, dict] | None:
        return self._volumes_by_name.get(name)

    @cached_property
    def _volumes_by_name(self) -> dict[str, tuple[int, dict]]:
        """The first volume of each name: one lookup per mount, not a scan (a pod of thousands
        of volumes was quadratic)."""
        out: dict[str, tuple[int, dict]] = {}
        for i, v in self.volumes:
            name = v.get("name")
            if isinstance(name, str):
                out.setdefault(name, (i, v))
        return out

    def device_count(self, resource: str) -> int:
        """Pod-level device count: sum over containers (init containers run before, not beside)."""
        counts = self._device_counts
        found = counts.get(resource)
        if found is None:
            regular = sum(c.count(resource) for c in self.containers)
            init = max((c.count(resource) for c in self.init_containers), default=0)
            found = counts[resource] = max(regular, init)
        return found

    @cached_property
    def _device_counts(self) -> dict[str, int]:
        return {}

    @cached_property
    def accelerators(self) -> dict[str, int]:
        return {r: n for r in ACCELERATORS if (n := self.device_count(r))}

    @cached_property
    def resource_claims(self) -> tuple[str, ...]:
        """Names of the pod's DRA ResourceClaims (``spec.resourceClaims``): devices requested this
        way (GPUs, EFA...) are not in :attr:`accelerators`, so rules cannot count them."""
        claims = self.spec.get("resourceClaims")
        if not isinstance(claims, list):
            return ()
        return tuple(str(c["name"]) for c in claims if isinstance(c, dict) and c.get("name") is not None)

    @cached_property
    def accelerator_total(self) -> int:
        return sum(self.accelerators.values())

    @cached_property
    def scheduler_name(self) -> str | None:
        s = self.spec.get("schedulerName")
        return s if isinstance(s, str) else None

    @cached_property
    def node_selector(self) -> dict[str, str]:
        ns = self.spec.get("nodeSelector")
        return {str(k): str(v) for k, v in ns.items()} if isinstance(ns, dict) else {}

    @cached_property
    def tolerations(self) -> list[dict]:
        t = self.spec.get("tolerations")
        return [x for x in t if isinstance(x, dict)] if isinstance(t, list) else []

    @cached_property
    def is_training(self) -> bool:
        return self.workload.is_training_kind or self.accelerator_total > 0

    def display(self) -> str:
        return f"{self.resource.ref.display()} [{self.role}]"


@dataclass(eq=False)
class Workload:
    resource: Resource
    templates: list[PodTemplate] = field(default_factory=list)

    @cached_property
    def kind(self) -> str:
        return self.resource.kind

    @cached_property
    def row(self) -> KindRow | None:
        """The kind's row of the kinds table (:mod:`eksmllint.platform.kinds`)."""
        return row_for(self.resource.group, self.resource.kind)

    @cached_property
    def operator(self) -> str | None:
        """Who runs the kind's pods ("the Kubeflow training operator"); for a view another object
        defines, that object's operator."""
        row, owner_row = self.row, self._owner_row
        if row is not None and row.operator is not None:
            return row.operator
        return owner_row.operator if owner_row is not None else None

    @cached_property
    def _owner_row(self) -> KindRow | None:
        """The kinds row of the object this view stands for, when that is another object (a
        TrainJob for the JobSet its runtime makes); None otherwise."""
        owner = self.resource.owner
        return row_for(owner.group, owner.kind) if owner is not self.resource else None

    def has(self, trait: Trait) -> bool:
        """Does the kind have ``trait`` (kinds table)? A view another object defines has that
        object's traits too (a TrainJob's JobSet is operator-managed like the TrainJob)."""
        return trait in self._traits

    @cached_property
    def _traits(self) -> frozenset[str]:
        row, owner_row = self.row, self._owner_row
        traits: frozenset[str] = row.traits if row is not None else frozenset()
        return traits | owner_row.traits if owner_row is not None else traits

    @cached_property
    def is_volcano_job(self) -> bool:
        return self.kind == "Job" and self.resource.group == VOLCANO_JOB_GROUP

    @cached_property
    def is_batch_job(self) -> bool:
        return self.kind == "Job" and self.resource.api_version.startswith("batch/")

    @cached_property
    def is_indexed_job(self) -> bool:
        return self.is_batch_job and self.resource.get(("spec", "completionMode")) == "Indexed"

    @cached_property
    def is_training_kind(self) -> bool:
        return self.has("training") or self.is_indexed_job

    @cached_property
    def is_training(self) -> bool:
        return any(t.is_training for t in self.templates)

    @cached_property
    def operator_managed(self) -> bool:
        return self.has("operator-managed")

    @cached_property
    def total_pods(self) -> int | None:
        """Pods the workload runs at once; None when unknown (DaemonSet, autoscaled)."""
        total = 0
        for t in self.templates:
            if t.replicas is None:
                return None
            total += t.replicas
        return total

    @cached_property
    def collective_templates(self) -> list[PodTemplate]:
        """Templates whose pods take part in the collective (not launchers, heads, submitters)."""
        row = self.row
        excluded = row.non_collective_roles if row is not None else ()
        return [t for t in self.templates if t.in_collective and t.role not in excluded]

    @cached_property
    def collective_size(self) -> int:
        """Pods in one collective (catalogue: 'workers x replicas')."""
        if self.has("independent-pods"):
            return 1
        if self.is_batch_job and not self.is_indexed_job and not self._job_looks_distributed():
            return 1
        row = self.row
        if row is not None and row.group_size is not None:  # LWS: each group is its own collective
            return _int(self.resource.get(row.group_size), 1) or 1
        return sum(t.replicas or 0 for t in self.collective_templates)

    @cached_property
    def is_multi_pod(self) -> bool:
        return self.is_training and self.collective_size > 1

    def _job_looks_distributed(self) -> bool:
        """A NonIndexed Job counts as a collective only when its pods rendezvous."""
        for t in self.templates:
            for c in t.containers:
                if any(k in c.env for k in ("MASTER_ADDR", "WORLD_SIZE", "PET_NNODES")):
                    return True
                if "--nnodes" in c.command_text or "--num_nodes" in c.command_text:
                    return True
        return False

    @property
    def is_collective(self) -> bool:
        """Do the pods rendezvous (a partial start deadlocks, one failure stalls the rest)? The
        answer of the workload classification (:mod:`eksmllint.analysis.workload_class`)."""
        from eksmllint.analysis.workload_class import classify

        return classify(self).collective


def workload_of(resource: Resource) -> Workload | None:
    """The workload view of ``resource``, built from its row of the kinds table
    (:mod:`eksmllint.platform.kinds`); None when it runs no pods. A TrainJob's pods come from its
    runtime (:func:`eksmllint.platform.derived.trainjob_resource`, merged by the run); a Katib
    Experiment's from the object its trials run."""
    row = row_for(resource.group, resource.kind)
    if row is None or not row.templates:
        return None
    w = Workload(resource)
    w.__dict__["row"] = row
    data = resource.data
    for spec in row.templates:
        if spec.shape == "embedded":
            from eksmllint.platform.derived import embedded_resource

            inner = embedded_resource(resource, spec.at)
            return workload_of(inner) if inner is not None else None
        holder = resource.get(spec.at)
        if spec.shape == "single":
            if spec.at == () and not isinstance(resource.get(("spec",)), dict):
                continue  # a Pod without a spec
            _add(w, spec, spec.at, spec.role, spec.pods_of(data, holder))
        elif spec.shape == "map" and isinstance(holder, dict):
            for role, entry in holder.items():
                if isinstance(entry, dict):
                    _add(w, spec, spec.at + (role,) + spec.template, str(role).lower(), spec.pods_of(data, entry))
        elif spec.shape == "list" and isinstance(holder, list):
            outside = spec.outside_collective(holder)
            for i, entry in enumerate(holder):
                if isinstance(entry, dict):
                    name = entry.get(spec.name_field)
                    role = spec.role.replace("{" + spec.name_field + "}", name if isinstance(name, str) else str(i))
                    path = spec.at + (i,) + spec.template
                    _add(w, spec, path, role, spec.pods_of(data, entry), i not in outside)
    return w


def _add(
    w: Workload, spec: TemplateSpec, path: DocPath, role: str, replicas: int | None, collective: bool = True
) -> None:
    if isinstance(w.resource.get(path), dict):
        w.templates.append(PodTemplate(w, path, role, replicas, spec, collective))


def iter_containers(templates: list[PodTemplate], init: bool = True) -> Iterator[Container]:
    for t in templates:
        yield from t.containers
        if init:
            yield from t.init_containers
