"""What a workload is: one classification with its evidence, computed once per workload view.

Rules state the classes they judge (``workload-classes`` in their rule YAML; the engine only
calls their check on workloads / templates of those classes, :func:`of_classes`) and the JSON finding
and ``explain`` say which class was inferred and why. Evidence comes from the kind and its
operator, replica counts, the launch analysis of each container's command
(:func:`eksmllint.checks.helpers.container_invocations`), images and environment. When the
evidence is thin the answer is ``unknown``: rules that need a training collective stay silent.

The answer depends only on the workload object itself (never on the run), so it is stored on
the workload view, which the webhook shares between requests.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable
from dataclasses import dataclass

from eksmllint.lazy import kept_on
from eksmllint.workload import (
    DISTRIBUTED_LAUNCHERS,
    Container,
    PodTemplate,
    Workload,
)


class WorkloadClass(str, enum.Enum):
    TRAINING_COLLECTIVE = "training-collective"  # pods of one training run rendezvous
    TRAINING_SINGLE = "training-single"  # training in one pod (possibly several devices)
    INFERENCE = "inference"  # model servers: vLLM, SGLang, Triton/TensorRT-LLM, TGI, Ray Serve
    BENCHMARK = "benchmark"  # nccl-tests, nccom-test, OSU micro-benchmarks
    BURN_IN = "burn-in"  # gpu_burn, dcgmi diag, stress, per-node GPU DaemonSets
    PLACEHOLDER = "placeholder"  # pause image, sleep / tail -f /dev/null as the whole command
    DATA_PROCESSING = "data-processing"  # CPU-only Ray Data / Spark clients
    LAUNCHER = "launcher"  # a template that starts processes running in other pods
    UNKNOWN = "unknown"

    def __str__(self) -> str:
        return self.value


TRAINING = frozenset({WorkloadClass.TRAINING_COLLECTIVE, WorkloadClass.TRAINING_SINGLE})
CLASS_NAMES = frozenset(c.value for c in WorkloadClass)


@dataclass(frozen=True)
class Classification:
    cls: WorkloadClass
    evidence: tuple[str, ...]
    collective: bool = False  # pods rendezvous: a partial start deadlocks, one failure stalls all

    @property
    def is_training(self) -> bool:
        return self.cls in TRAINING

    def describe(self) -> str:
        return f"{self.cls.value} ({'; '.join(self.evidence)})" if self.evidence else self.cls.value


# --- signals ----------------------------------------------------------------------------------
_IDLE = re.compile(r"(exec\s+)?(sleep\s+(infinity|inf|\d+[smhd]?)|tail\s+-f\s+/dev/null)\s*;?")
_IDLE_PROGRAMS = frozenset({"sleep", "tail", "exec"})
_SHELLS = re.compile(r"^(/usr)?(/bin/)?(ba|da|z)?sh$")
_BURN_IN = re.compile(
    r"\bgpu[_-]?burn\b|\bdcgmi\s+diag\b|\bdcgmproftester\d*\b|\bstress-ng\b|\bstress\s+--(cpu|vm|io|hdd)\b"
    r"|\bburn[_-]?in\b",
    re.IGNORECASE,
)
_SYNTHETIC = re.compile(r"\b(synthetic|dummy|fake)[_-]?(data|dataset)?\b", re.IGNORECASE)
_NO_SAVE = re.compile(r"--save[_-]strategy[=\s]+[\"']?no\b")
_BENCHMARK = re.compile(
    r"\b(all_reduce|all_gather|alltoall|broadcast|reduce_scatter|reduce|sendrecv|gather|scatter|hypercube)_perf"
    r"(_mpi)?\b|\bnccl-tests\b|\bnccom-test\b|\bosu_(allreduce|alltoall|latency|bw|bibw|allgather|bcast)\b"
    r"|\bnvbandwidth\b|\bib_(write|read|send)_(bw|lat)\b"
)
_SERVING = re.compile(
    r"\bvllm\s+serve\b|\bvllm\.entrypoints\b|\bsglang\.launch_server\b|\btritonserver\b|\btrtllm-serve\b"
    r"|\btext-generation-launcher\b|\btorchserve\b|\bserve\s+(run|deploy)\b|\blmdeploy\s+serve\b"
    r"|\bollama\s+serve\b|\bllama-server\b|\bdynamo\s+serve\b|\bjetstream\b"
)
_SERVING_IMAGE = re.compile(
    r"vllm/vllm-openai|lmsysorg/sglang|tritonserver|text-generation-inference|/tgi[:-]|ollama/ollama"
    r"|llm-d|/vllm[:-]|neuronx-vllm|inference-server|[a-z]-inference(-neuronx)?[:@]",
    re.IGNORECASE,
)
#: AWS Deep Learning Containers name their purpose: ``pytorch-training``, ``pytorch-training-neuronx``.
_TRAINING_IMAGE = re.compile(r"[a-z]-training(-neuronx)?[:@]|/nemo[:@]|megatron", re.IGNORECASE)
_DATA = re.compile(r"\bray[._]data|\bmap_batches\b|\bspark-submit\b|\bpyspark\b|\bSparkSession\b")
_TRAIN_SCRIPT = re.compile(r"(?:^|[^a-z])(train|finetun|fine[_-]tun|pretrain|sft|dpo|grpo|rlhf)", re.IGNORECASE)
#: Script arguments only training programs take (HF Trainer, Megatron, Lightning, NeMo).
TRAINING_FLAGS = (
    "num_train_epochs",
    "per_device_train_batch_size",
    "train_batch_size",
    "learning_rate",
    "max_steps",
    "gradient_accumulation_steps",
    "train_iters",
    "global_batch_size",
    "micro_batch_size",
    "save_steps",
    "max_epochs",
    "epochs",
    "lr",
)
#: Words every burn-in, benchmark, serving or data-processing signal above contains: a cheap
#: substring test over a workload's commands, images and name rules most workloads out.
_SIGNAL_WORDS = (
    "burn",
    "dcgm",
    "stress",
    "_perf",
    "nccl-tests",
    "nccom-test",
    "osu_",
    "nvbandwidth",
    "ib_",
    "vllm",
    "sglang",
    "triton",
    "trtllm",
    "text-generation",
    "torchserve",
    "serve",
    "ollama",
    "llama-server",
    "jetstream",
    "inference",
    "tgi",
    "llm-d",
    "ray.data",
    "ray_data",
    "map_batches",
    "spark",
    "save_strategy",
    "save-strategy",
)
RENDEZVOUS_ENV = ("MASTER_ADDR", "WORLD_SIZE", "PET_NNODES", "TF_CONFIG")
_WORKER_ROLES = ("launcher", "submitter")


def _words(c: Container) -> str:
    return c.command_text


def _idle(c: Container) -> str | None:
    """Why container ``c`` does nothing but wait (None when it does something)."""
    command, args = c.argv_lists()
    words = (command or []) + (args or [])
    if not words:
        image = (c.image or "").rsplit("/", 1)[-1]
        return f"container {c.name!r} runs the pause image" if image.startswith("pause") else None
    if len(words) >= 3 and _SHELLS.match(words[0]) and words[1] in ("-c", "-lc", "-ec"):
        words = words[2:]
    if (words[0].split(None, 1) or [""])[0].rsplit("/", 1)[-1] not in _IDLE_PROGRAMS:
        return None  # the common case, decided without joining and matching the command
    text = " ".join(words).strip()
    return f"container {c.name!r} only runs `{text}`" if _IDLE.fullmatch(text) else None


def _first(pattern: re.Pattern, texts: Iterable[tuple[str, str]]) -> str | None:
    for where, text in texts:
        m = pattern.search(text)
        if m:
            return f"{where} runs {m.group(0).strip()!r}"
    return None


def _containers(w: Workload) -> list[Container]:
    return [c for t in w.templates for c in t.containers]


def _invocations(c: Container):
    from eksmllint.checks.helpers import container_invocations  # the shell analysis, on first use

    return container_invocations(c)


def _training_evidence(w: Workload) -> list[str]:
    out: list[str] = []
    if w.operator is not None:
        out.append(f"{w.resource.owner.kind}: {w.operator} runs it")
    plugins = w.resource.get(("spec", "plugins")) if w.is_volcano_job else None
    if isinstance(plugins, dict):
        found = sorted({"pytorch", "mpi", "tensorflow"} & set(plugins))
        if found:
            out.append(f"Volcano {'/'.join(found)} plugin")
    for c in _containers(w):
        for inv in _invocations(c):
            if inv.launcher in ("torchrun", "deepspeed", "accelerate", "mpirun"):
                out.append(f"container {c.name!r} launches with {inv.launcher}")
                break
            script = inv.script or ""
            if _TRAIN_SCRIPT.search(script.rsplit("/", 1)[-1]):
                out.append(f"container {c.name!r} runs training script {script!r}")
                break
            flag = next((f for f in TRAINING_FLAGS if inv.script_flag(f) is not None), None)
            if flag:
                out.append(f"container {c.name!r} passes training flag --{flag}")
                break
        else:
            m = DISTRIBUTED_LAUNCHERS.search(_words(c))
            if m:
                out.append(f"container {c.name!r} runs {m.group(0)}")
        image = c.image or ""
        if _TRAINING_IMAGE.search(image) and not any(o.startswith(f"container {c.name!r}") for o in out):
            out.append(f"container {c.name!r} uses the training image {image.rsplit('/', 1)[-1]!r}")
        env = next((k for k in RENDEZVOUS_ENV if k in c.env), None)
        if env:
            out.append(f"container {c.name!r} sets {env}")
        if len(out) >= 3:
            break
    return out


def _accelerator_evidence(w: Workload) -> str | None:
    held = [t for t in w.templates if t.role not in _WORKER_ROLES and t.accelerator_total]
    if not held:
        return None
    if w.has("batch"):  # runs to completion: accelerators there are taken as training
        kind = "Indexed Job" if w.is_indexed_job else ("Volcano Job" if w.is_volcano_job else w.kind)
        return f"{kind} whose {held[0].role} pods hold accelerators"
    return None


def _pods_rendezvous(w: Workload) -> bool:
    """Do the pods of ``w`` rendezvous? Kubeflow kinds by construction; other kinds (also used
    for embarrassingly parallel work) when a worker template holds accelerators, starts a
    distributed launcher, sets rendezvous variables, or a Volcano framework plugin is on."""
    if w.collective_size <= 1:
        return False
    if w.has("operator-managed"):
        return True
    plugins = w.resource.get(("spec", "plugins")) if w.is_volcano_job else None
    if isinstance(plugins, dict) and {"pytorch", "mpi", "tensorflow"} & set(plugins):
        return True
    for t in w.collective_templates:
        if t.accelerator_total > 0:
            return True
        for c in t.containers:
            if any(k in c.env for k in RENDEZVOUS_ENV) or DISTRIBUTED_LAUNCHERS.search(c.command_text):
                return True
    return False


@kept_on
def classify(w: Workload) -> Classification:
    """The workload's class, computed once per workload view."""
    return _classify(w)


def _classify(w: Workload) -> Classification:
    containers = _containers(w)
    if not containers:
        return Classification(WorkloadClass.UNKNOWN, ("no containers",))
    idle = [_idle(c) for c in containers]
    if all(idle):
        return Classification(WorkloadClass.PLACEHOLDER, tuple(dict.fromkeys(i for i in idle if i))[:2])
    accelerators = any(t.accelerator_total for t in w.templates)
    texts = [(f"container {c.name!r}", _words(c)) for c in containers]
    images = [(f"container {c.name!r} image", c.image or "") for c in containers]
    blob = "\n".join([t for _, t in texts + images] + [w.resource.name or ""]).lower()
    signal = any(word in blob for word in _SIGNAL_WORDS)  # substring tests: twice a regex alternation's speed
    found = _signal_class(w, texts, images, accelerators) if signal else None
    if found is None and w.has("per-node") and accelerators:
        found = Classification(WorkloadClass.BURN_IN, ("DaemonSet: one pod per node holding accelerators, not a job",))
    if found is None and not accelerators:
        client = next((c.name for c in containers if "RAY_ADDRESS" in c.env), None)
        if client is not None:
            found = Classification(
                WorkloadClass.DATA_PROCESSING,
                (f"container {client!r} is a Ray client (RAY_ADDRESS)", "no accelerators"),
            )
    return found or _training_class(w, containers)


def _signal_class(
    w: Workload, texts: list[tuple[str, str]], images: list[tuple[str, str]], accelerators: bool
) -> Classification | None:
    """Burn-in, benchmark, inference or data processing, from commands, images and the name."""
    burn = _first(_BURN_IN, texts + images + [("the workload name", w.resource.name or "")])
    if burn is None:
        for where, text in texts:
            if _NO_SAVE.search(text) and _SYNTHETIC.search(text):
                burn = f"{where} trains on synthetic data and saves nothing (--save_strategy no)"
                break
    if burn:
        return Classification(WorkloadClass.BURN_IN, (burn,))
    bench = _first(_BENCHMARK, texts + images)
    if bench:
        return Classification(WorkloadClass.BENCHMARK, (bench,), _pods_rendezvous(w))
    serving = _first(_SERVING, texts) or _first(_SERVING_IMAGE, images)
    if serving:
        return Classification(WorkloadClass.INFERENCE, (serving,))
    data = None if accelerators else _first(_DATA, texts)
    if data:
        return Classification(WorkloadClass.DATA_PROCESSING, (data, "no accelerators"))
    return None


def _training_class(w: Workload, containers: list[Container]) -> Classification:
    """Training (collective or single pod) on training evidence, inference on a probed service
    port, else unknown."""
    evidence = _training_evidence(w)
    if not evidence and not (w.has("service") or w.has("per-node")):
        held = _accelerator_evidence(w)
        evidence = [held] if held else []
    if not evidence:
        server = _server_evidence(w)
        if server:
            return Classification(WorkloadClass.INFERENCE, (server,))
        return Classification(WorkloadClass.UNKNOWN, ("no training, serving, benchmark or burn-in signal",))
    if _pods_rendezvous(w):
        evidence = evidence + [f"{w.collective_size} pods in one collective"]
        return Classification(WorkloadClass.TRAINING_COLLECTIVE, tuple(evidence), True)
    return Classification(WorkloadClass.TRAINING_SINGLE, tuple(evidence))


def _server_evidence(w: Workload) -> str | None:
    """A long-running service kind with accelerators that listens on a port behind a probe."""
    if not w.has("service"):
        return None
    for c in _containers(w):
        if (
            c.data.get("ports")
            and (c.data.get("readinessProbe") or c.data.get("livenessProbe"))
            and c.template.accelerator_total
        ):
            return f"{w.kind} container {c.name!r} serves on a port behind a probe"
    return None


@kept_on
def classify_template(t: PodTemplate) -> Classification:
    """The class of one pod template: its workload's, except for templates that only start work
    running elsewhere (an MPIJob launcher without ``runLauncherAsWorker``, a RayJob submitter)."""
    w = t.workload
    if classify(w).is_training:
        launcher = w.row.launcher_evidence(t.role, w.resource.data) if w.row is not None else None
        if launcher is not None:
            return Classification(WorkloadClass.LAUNCHER, (launcher,))
    return classify(w)


def of_classes(targets: Iterable[object], classes: Iterable[str]) -> list[object]:
    """The templates / workloads of ``targets`` whose class is one of ``classes`` (class names)."""
    wanted = frozenset(classes)  # WorkloadClass is a str enum: its members hash and compare as names
    return [t for t in targets if (found := classification_of(t)) is None or found.cls in wanted]


def classification_of(target: object) -> Classification | None:
    """The classification of a rule target (template or workload); None for anything else."""
    if isinstance(target, PodTemplate):
        return classify_template(target)
    if isinstance(target, Workload):
        return classify(target)
    return None
