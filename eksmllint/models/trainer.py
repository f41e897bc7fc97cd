"""Kubeflow Trainer v2 (``trainer.kubeflow.org/v1alpha1``): a TrainJob read together with the
(Cluster)TrainingRuntime its ``spec.runtimeRef`` names, as the trainer controller combines them.

The pods of a TrainJob come from the runtime's JobSet template, so the TrainJob has no pod template
of its own and is not a :class:`~eksmllint.workload.Workload` (rules of every family would judge
paths the TrainJob does not have). This view answers what the launch rules need instead: how many
nodes, how many processes per node, how many devices per node, and the trainer's command.

Sources (kubeflow/trainer ``pkg/apis/trainer/v1alpha1/{trainjob,trainingruntime}_types.go``,
``pkg/runtime/framework/plugins/{torch,mpi}``):

* ``runtimeRef.kind`` defaults to ``ClusterTrainingRuntime``; a ``TrainingRuntime`` must sit in the
  TrainJob's namespace.
* ``spec.trainer.numNodes`` overrides ``mlPolicy.numNodes`` (default 1) and becomes the count of the
  trainer's replicated job and ``PET_NNODES``; ``torch.elasticPolicy`` replaces it by a range.
* ``spec.trainer.numProcPerNode`` overrides the policy's ``numProcPerNode`` (torch: ``auto`` by default,
  exported as ``PET_NPROC_PER_NODE``; mpi: hostfile slots, default 1, which the MPI plugin raises to
  the GPUs per node).
* ``spec.trainer.resourcesPerNode`` sets the resources of each node; without it they are those of the
  container named ``node`` in the first replicated job named ``node`` or labelled
  ``trainer.kubeflow.org/trainjob-ancestor-step: trainer`` that declares resources
  (``pkg/runtime/runtime.go`` ``ExtractResourcePerNodeFromRuntime``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from eksmllint.core.finding import DocPath
from eksmllint.platform.derived import ANCESTOR_LABEL, NODE, find_runtime
from eksmllint.quantity import parse_count
from eksmllint.workload import GPU, NEURONCORE, Container, PodTemplate, Workload

if TYPE_CHECKING:
    from eksmllint.core.context import LintRun
    from eksmllint.resource import Resource

#: Policies of ``mlPolicy`` (one of them is set); None in :attr:`TrainerView.policy` = runtime not in the run.
POLICIES = ("torch", "mpi", "flux", "jax", "xgboost", "plainml")
#: Device-plugin resources whose count is the processes one node should start (one per device).
PROCESS_DEVICES = (GPU, NEURONCORE)


@dataclass(frozen=True)
class Setting:
    """A value and where it is written (the TrainJob, or the runtime it falls back to)."""

    value: Any
    resource: Resource
    path: DocPath


@dataclass(frozen=True)
class Devices:
    """Devices each trainer node owns: ``count`` of ``resource``, written at ``where``."""

    count: int
    resource: str
    where: Setting


@dataclass(frozen=True)
class RuntimeView:
    """A (Cluster)TrainingRuntime: its policy and what each node of a TrainJob using it gets by default."""

    runtime: Resource

    @property
    def policy(self) -> str | None:
        """The ML policy (``torch``, ``mpi`` ...); None when ``mlPolicy`` sets none."""
        ml = self.runtime.get(("spec", "mlPolicy"))
        return next((p for p in POLICIES if p in ml), None) if isinstance(ml, dict) else None

    @property
    def elastic(self) -> bool:
        """A torch elastic policy: the node count is a range, not ``numNodes``."""
        return isinstance(self.runtime.get(("spec", "mlPolicy", "torch", "elasticPolicy")), dict)

    @property
    def num_nodes(self) -> Setting:
        path = ("spec", "mlPolicy", "numNodes")
        return Setting(self.runtime.get(path, 1), self.runtime, path)

    @property
    def num_proc_per_node(self) -> Setting | None:
        """The policy's ``numProcPerNode`` as written; None when absent (torch ``auto``, mpi 1)."""
        policy = self.policy
        path = ("spec", "mlPolicy", policy or "", "numProcPerNode")
        value = self.runtime.get(path) if policy else None
        return Setting(value, self.runtime, path) if value is not None else None

    @property
    def devices_per_node(self) -> Devices | None:
        found = self.node_container()
        if found is None:
            return None
        container, path = found
        return _devices(container.get("resources"), self.runtime, path + ("resources",))

    def node_container(self) -> tuple[dict, DocPath] | None:
        """The container whose resources are each node's, as the controller picks it
        (``ExtractResourcePerNodeFromRuntime``): in the first replicated job named ``node`` or labelled
        as the trainer's ancestor, the container named ``node`` that declares resources."""
        jobs_path = ("spec", "template", "spec", "replicatedJobs")
        jobs = self.runtime.get(jobs_path)
        if not isinstance(jobs, list):
            return None
        for index, job in enumerate(jobs):
            if not isinstance(job, dict) or (job.get("name") != NODE and _label(job, ANCESTOR_LABEL) != "trainer"):
                continue
            spec_path = jobs_path + (index, "template", "spec", "template", "spec")
            containers = self.runtime.get(spec_path + ("containers",))
            for ci, c in enumerate(containers if isinstance(containers, list) else ()):
                if isinstance(c, dict) and c.get("name") == NODE and isinstance(c.get("resources"), dict):
                    return c, spec_path + ("containers", ci)
        return None


@dataclass(eq=False)
class TrainerView:
    """A TrainJob with the runtime it references: the TrainJob's values win, the runtime's fill in."""

    trainjob: Resource
    #: The referenced runtime when the run holds it (see :func:`find_runtime`); None otherwise.
    runtime: RuntimeView | None
    #: ``spec.trainer`` read as a container (command, args, env) at its own path; None without a trainer.
    container: Container | None

    @property
    def policy(self) -> str | None:
        """The runtime's ML policy; None when the runtime is unknown or sets none."""
        return self.runtime.policy if self.runtime is not None else None

    @property
    def elastic(self) -> bool:
        return self.runtime is not None and self.runtime.elastic

    @property
    def num_nodes(self) -> Setting | None:
        """The trainer node count: the TrainJob's, else the runtime's (default 1); None when neither is
        known (no value in the TrainJob and the runtime not in the run)."""
        path = ("spec", "trainer", "numNodes")
        if self.trainjob.get(path) is not None:
            return Setting(self.trainjob.get(path), self.trainjob, path)
        return self.runtime.num_nodes if self.runtime is not None else None

    @property
    def num_proc_per_node(self) -> Setting | None:
        """Processes per node as written: the TrainJob's, else the runtime policy's; None when neither
        writes one (the policy's default applies: torch ``auto``, mpi slots = GPUs)."""
        path = ("spec", "trainer", "numProcPerNode")
        if self.trainjob.get(path) is not None:
            return Setting(self.trainjob.get(path), self.trainjob, path)
        return self.runtime.num_proc_per_node if self.runtime is not None else None

    @property
    def devices_per_node(self) -> Devices | None:
        """GPUs (else NeuronCores) of each node: ``resourcesPerNode`` when the TrainJob sets it, else
        the runtime's node container. None when unknown or when there are none."""
        per_node = self.trainjob.get(("spec", "trainer", "resourcesPerNode"))
        if per_node is not None:
            return _devices(per_node, self.trainjob, ("spec", "trainer", "resourcesPerNode"))
        return self.runtime.devices_per_node if self.runtime is not None else None


def _label(job: dict, key: str) -> Any:
    template = job.get("template")
    meta = template.get("metadata") if isinstance(template, dict) else None
    labels = meta.get("labels") if isinstance(meta, dict) else None
    return labels.get(key) if isinstance(labels, dict) else None


def _devices(resources: Any, holder: Resource, path: DocPath) -> Devices | None:
    """The first of :data:`PROCESS_DEVICES` the requirements declare (limits win over requests)."""
    if not isinstance(resources, dict):
        return None
    for which in ("limits", "requests"):
        values = resources.get(which)
        if not isinstance(values, dict):
            continue
        for r in PROCESS_DEVICES:
            if r in values:
                count = parse_count(values[r])
                if not count:
                    return None  # templated (or zero): unknown
                return Devices(count, r, Setting(values[r], holder, path + (which, r)))
    return None


def trainer_view(run: LintRun, trainjob: Resource) -> TrainerView:
    """The TrainJob read with its runtime (once per run: the runtime is the run's business)."""
    return run.once("trainer-view", trainjob, _build)


def _build(run: LintRun, trainjob: Resource) -> TrainerView:
    trainer = trainjob.get(("spec", "trainer"))
    container = None
    if isinstance(trainer, dict):
        # A container view over spec.trainer: command/args/env sit where a container has them, so
        # launch analysis and fixes address the TrainJob's own lists. Not registered in the run.
        holder = PodTemplate(Workload(trainjob), ("spec", "trainer"), NODE, None)
        container = Container(holder, ("spec", "trainer"), {**trainer, "name": NODE})
    runtime = find_runtime(run, trainjob)
    return TrainerView(trainjob, RuntimeView(runtime) if runtime is not None else None, container)
