"""Resources whose pods another object defines: the object a workload's rules really judge.

- A Katib ``Experiment`` runs the object in ``spec.trialTemplate.trialSpec`` (a Job, a PyTorchJob
  ...): :func:`embedded_resource` is that object in place (same document, positions and fix paths
  under the experiment), named after the experiment.
- A Kubeflow ``TrainJob`` runs its (Cluster)TrainingRuntime's JobSet template with the TrainJob's
  ``spec.trainer`` overrides merged in, as the trainer controller builds it
  (kubeflow/trainer ``pkg/runtime/framework/plugins``): :func:`trainjob_resource` is that JobSet.
  Its findings point into the runtime (where the template is written, so a fix there fixes every
  TrainJob using it) and name the TrainJob.

Either way the result is an ordinary :class:`~eksmllint.resource.Resource` whose kind has a row in
the kinds table, so every template rule judges it like any other object of that kind.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from eksmllint.core.finding import DocPath, Location, ResourceRef
from eksmllint.quantity import parse_int
from eksmllint.resource import Resource
from eksmllint.yamlpos import YMap

if TYPE_CHECKING:
    from eksmllint.core.context import LintRun

JOBSET_API = "jobset.x-k8s.io/v1alpha2"
TRAINER_GROUP = "trainer.kubeflow.org"
RUNTIME_KINDS = ("ClusterTrainingRuntime", "TrainingRuntime")
#: Label of the runtime's replicated job whose pods run the trainer (torch: ``node``; mpi: ``launcher``).
ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"
#: Name of the trainer container (and of the torch runtimes' replicated job) the controller configures.
NODE = "node"


def _derive(
    origin: Resource,
    data: YMap,
    prefix: DocPath,
    owner: Resource,
    api: str,
    kind: str,
    merged: dict[DocPath, DocPath] | None = None,
) -> Resource:
    """A resource over ``data`` (found at ``prefix`` inside ``origin``'s object) that rules see as
    ``api``/``kind`` and that findings name as ``owner``. ``merged``: built from ``origin`` and
    ``owner`` together (``Resource.origin`` answers ``origin``), with the paths ``owner`` sets."""
    derived = (
        Resource(origin.doc, data, origin.base_path + prefix)
        if merged is None
        else MergedResource(origin.doc, data, origin.base_path + prefix, overrides=merged)
    )
    derived.api_version, derived.kind = api, kind
    derived.group = api.split("/")[0] if "/" in api else ""
    derived.namespace, derived.name = owner.namespace, owner.name
    derived.ref = ResourceRef(owner.api_version, owner.kind, owner.namespace, owner.name)
    derived.metadata = owner.metadata  # labels and annotations (queues, suppressions) are the owner's
    derived.__dict__["_owner"] = owner
    if merged is not None:
        derived.__dict__["_origin"] = origin
    return derived


def embedded_resource(parent: Resource, path: DocPath) -> Resource | None:
    """The object embedded at ``path`` of ``parent`` (a Katib trial's Job), or None when there is
    no object with an apiVersion and a kind there."""
    data = parent.get(path)
    if not isinstance(data, YMap):
        return None
    api, kind = data.get("apiVersion"), data.get("kind")
    if not isinstance(api, str) or not isinstance(kind, str):
        return None
    return _derive(parent, data, path, parent, api, kind)


def find_runtime(run: LintRun, trainjob: Resource) -> Resource | None:
    """The (Cluster)TrainingRuntime ``spec.runtimeRef`` names, when the run holds it (several copies
    only when their specs agree)."""
    ref = trainjob.get(("spec", "runtimeRef"))
    if not isinstance(ref, dict) or not isinstance(ref.get("name"), str):
        return None
    kind = ref.get("kind") or "ClusterTrainingRuntime"
    if kind not in RUNTIME_KINDS or ref.get("apiGroup", TRAINER_GROUP) != TRAINER_GROUP:
        return None
    namespace = trainjob.namespace if kind == "TrainingRuntime" else None
    found = run.find(kind, ref["name"], namespace=namespace, group=TRAINER_GROUP)
    if not found or any(r.get(("spec",)) != found[0].get(("spec",)) for r in found[1:]):
        return None  # absent, or copies that disagree: which one the cluster holds is unknown
    return found[0]


def trainjob_resource(run: LintRun, trainjob: Resource) -> Resource | None:
    """The JobSet a TrainJob runs: its runtime's template with the TrainJob's overrides; None when
    the run does not hold the runtime (:func:`eksmllint.models.trainer.find_runtime`). Findings on
    an overridden value point at the TrainJob's field; all others into the runtime."""
    runtime = find_runtime(run, trainjob)
    template = runtime.get(("spec", "template")) if runtime is not None else None
    if runtime is None or not isinstance(template, YMap):
        return None
    merged = copy.deepcopy(template)  # positions stay those of the runtime's lines
    trainer = trainjob.get(("spec", "trainer"))
    overrides = _apply_trainer(merged, trainer if isinstance(trainer, dict) else {}, runtime)
    return _derive(runtime, merged, ("spec", "template"), trainjob, JOBSET_API, "JobSet", overrides)


@dataclass(eq=False)
class MergedResource(Resource):
    """A TrainJob's JobSet: the runtime's template, where ``overrides`` (JobSet path -> TrainJob
    field) were replaced by the TrainJob's values."""

    overrides: dict[DocPath, DocPath] = field(default_factory=dict)

    def _overridden(self, path: DocPath) -> DocPath | None:
        """The TrainJob's field for ``path``: a value it overrides, or a path that does not reach
        into the runtime's jobs (the whole object, its metadata: the TrainJob's)."""
        if tuple(path[:2]) != _JOBS or len(path) < 3:
            return tuple(path)
        for n in range(len(path), 0, -1):
            found = self.overrides.get(tuple(path[:n]))
            if found is not None:
                return found + tuple(path[n:])
        return None

    def _location(self, path: DocPath) -> Location:
        """The TrainJob's field for a path it sets; else the runtime's line."""
        found = self._overridden(path)
        return self.owner.location(found) if found is not None else super()._location(path)

    def fixable(self, paths: Iterable[DocPath]) -> bool:
        """A fix is written into the runtime's jobs: not one that edits what the TrainJob sets."""
        return all(self._overridden(tuple(p)) is None for p in paths)


_JOBS = ("spec", "replicatedJobs")


def _apply_trainer(jobset: dict, trainer: dict, runtime: Resource) -> dict[DocPath, DocPath]:
    """Merge ``spec.trainer`` into the runtime's JobSet as the trainer controller does: the job
    named ``node`` runs ``numNodes`` pods (else the runtime's ``mlPolicy.numNodes``; one fewer when
    an MPI launcher runs as a node) and its ``node`` containers get ``resourcesPerNode``; the
    ``node`` container of the trainer's job (labelled as the trainer's ancestor, else ``node``)
    takes ``image``, ``command``, ``args`` and ``env`` (by name). Returns the overridden paths (in
    the JobSet) and the TrainJob fields they come from."""
    overrides: dict[DocPath, DocPath] = {}
    jobs = _dig(jobset, ("spec",), "replicatedJobs")
    jobs = jobs if isinstance(jobs, list) else []
    nodes_job = next((i for i, j in enumerate(jobs) if isinstance(j, dict) and j.get("name") == NODE), None)
    labelled = [i for i, j in enumerate(jobs) if isinstance(j, dict) and _ancestor(j) == "trainer"]
    trainer_job = labelled[0] if labelled else nodes_job

    if nodes_job is not None and (job_spec := _dig(jobs[nodes_job], ("template", "spec"))) is not None:
        nodes = trainer.get("numNodes", runtime.get(("spec", "mlPolicy", "numNodes")))
        count = parse_int(nodes) if nodes is not None else None
        if count is not None and runtime.get(("spec", "mlPolicy", "mpi", "runLauncherAsNode")) is True:
            count -= 1
        if count is not None:
            job_spec["parallelism"] = job_spec["completions"] = count
            if "numNodes" in trainer:
                for key in ("parallelism", "completions"):
                    overrides[_job_path(nodes_job) + (key,)] = ("spec", "trainer", "numNodes")
        elif nodes is not None:
            job_spec["parallelism"] = nodes  # a value that is not a number: unknown, as it is written
        if "resourcesPerNode" in trainer:
            for ci, c in _node_containers(job_spec):
                c["resources"] = trainer["resourcesPerNode"]
                overrides[_job_path(nodes_job) + ("template", "spec", "containers", ci, "resources")] = (
                    "spec",
                    "trainer",
                    "resourcesPerNode",
                )
    if trainer_job is not None and (job_spec := _dig(jobs[trainer_job], ("template", "spec"))) is not None:
        for ci, c in _node_containers(job_spec):
            at = _job_path(trainer_job) + ("template", "spec", "containers", ci)
            for key in ("image", "command", "args"):
                if key in trainer:
                    c[key] = trainer[key]
                    overrides[at + (key,)] = ("spec", "trainer", key)
            env = trainer.get("env")
            if isinstance(env, list):
                names = {e.get("name") for e in env if isinstance(e, dict)}
                kept = [e for e in c.get("env") or () if isinstance(e, dict) and e.get("name") not in names]
                c["env"] = kept + [e for e in env if isinstance(e, dict)]
                for k in range(len(env)):
                    overrides[at + ("env", len(kept) + k)] = ("spec", "trainer", "env", k)
    return overrides


def _job_path(index: int) -> DocPath:
    return ("spec", "replicatedJobs", index, "template", "spec")


def _node_containers(job_spec: dict) -> list[tuple[int, dict]]:
    containers = _dig(job_spec, ("template", "spec"), "containers")
    items = containers if isinstance(containers, list) else []
    return [(i, c) for i, c in enumerate(items) if isinstance(c, dict) and c.get("name") == NODE]


def _ancestor(job: dict) -> object:
    labels = _dig(job, ("template", "metadata"), "labels")
    return labels.get(ANCESTOR_LABEL) if isinstance(labels, dict) else None


def _dig(data: Any, path: DocPath, last: str | None = None) -> Any:
    for key in path:
        data = data.get(key) if isinstance(data, dict) else None
    if last is not None:
        return data.get(last) if isinstance(data, dict) else None
    return data if isinstance(data, dict) else None
