"""The launcher dimension of the shape matrix: each launch/precision rule's defect, written once as a
launch line (launcher words + training-script words) or a config setting, transplanted into every
form a launcher is written in.  :func:`markdown_table` renders the rule x form table the README
carries (``python tests/matrix/launcher_forms.py``).

The bases are written here from the tools' documentation (torchrun, DeepSpeed, accelerate,
PyTorch Lightning, Hugging Face ``TrainingArguments``), not copied from public manifests.
"""

from __future__ import annotations

import copy
import json
import shlex
from dataclasses import dataclass, field

import yaml

IMAGE = "public.ecr.aws/example/trainer:1.0"

#: The forms, in table order.  Command forms rewrite a launch line; config forms move a precision
#: setting into a config file the launch line names.
COMMAND_FORMS = ("direct", "python -m", "variable", "bash -c", "srun bash -c")
CONFIG_FORMS = (
    "DeepSpeed JSON in ConfigMap",
    "DeepSpeed JSON beside manifest",
    "accelerate YAML in ConfigMap",
    "accelerate YAML beside manifest",
    "Lightning YAML in ConfigMap",
    "HF TrainingArguments JSON in ConfigMap",
    "HF TrainingArguments JSON beside manifest",
)
FORMS = COMMAND_FORMS + CONFIG_FORMS

_PYTHON_M = {
    "torchrun": ["python", "-m", "torch.distributed.run"],
    "deepspeed": ["python", "-m", "deepspeed.launcher.runner"],
    "accelerate": ["python", "-m", "accelerate.commands.launch"],
}


@dataclass(frozen=True)
class Line:
    """A launch: the launcher's words and the training script's words (script first), and the
    options of the ``srun`` that starts it where a form has one."""

    launcher: tuple[str, ...]
    script: tuple[str, ...]
    srun: tuple[str, ...] = ("--ntasks-per-node=1",)


def _q(words) -> str:
    return " ".join(shlex.quote(w) for w in words)


def command_of(form: str, line: Line) -> list[str] | None:
    """The container ``command`` for ``line`` written in ``form`` (None: the form cannot write it)."""
    if form == "direct":
        return [*line.launcher, *line.script]
    if form == "python -m":
        head = line.launcher[0]
        if head == "accelerate" and line.launcher[1:2] == ("launch",):
            return [*_PYTHON_M[head], *line.launcher[2:], *line.script]
        if head not in _PYTHON_M:
            return None
        return [*_PYTHON_M[head], *line.launcher[1:], *line.script]
    if form == "variable":  # the Megatron / BigScience idiom: launcher and program in variables
        script = f'LAUNCHER="{_q(line.launcher)}"\nCMD="{_q(line.script)}"\n$LAUNCHER $CMD\n'
        return ["bash", "-c", script]
    if form == "bash -c":
        return ["bash", "-c", f"set -euo pipefail\n{_q(line.launcher)} {_q(line.script)}\n"]
    if form == "srun bash -c":  # launcher in a variable with a run-time word, started by srun
        launcher = f"{_q(line.launcher)} --rdzv_id=job-$(hostname)"
        script = f'LAUNCHER="{launcher}"\nsrun {_q(line.srun)} bash -c "$LAUNCHER {_q(line.script)}"\n'
        return ["bash", "-c", script]
    raise ValueError(form)


#: Each config form's file: (name, how it is written, the launch option naming it; "" for the
#: script's only argument).
_CONFIG_FILES = {
    "DeepSpeed": ("ds_config.json", "json", "--deepspeed"),
    "accelerate": ("accelerate.yaml", "yaml", "--config_file"),
    "Lightning": ("lightning.yaml", "yaml", "--config"),
    "HF": ("training_args.json", "json", ""),
}


def _family(form: str) -> str:
    return form.split(" ", 1)[0]


class Setting:
    """A training setting written in every form: as script flags, and as each config's keys."""

    flags: tuple[str, ...] = ()
    #: Script flags a config form passes beside the config's name.
    config_flags: tuple[str, ...] = ()

    def beside(self) -> dict[str, str]:
        """Files the command forms' flags name, written beside the manifest (name -> text)."""
        return {}

    def data(self, family: str) -> dict | None:
        """The config of ``family`` holding the setting (None: that config has no such key)."""
        raise NotImplementedError

    def config(self, form: str) -> tuple[str, str, str] | None:
        """(file name, text, the launch option naming it) of the config form, None when n/a."""
        data = self.data(_family(form))
        if data is None:
            return None
        name, how, option = _CONFIG_FILES[_family(form)]
        text = json.dumps(data, indent=2) + "\n" if how == "json" else yaml.safe_dump(data)
        return name, text, option


@dataclass(frozen=True)
class Precision(Setting):
    """A precision choice: ``--fp16`` / ``--bf16``, or each config's precision key."""

    name: str  # fp16 | bf16

    @property
    def flags(self) -> tuple[str, ...]:  # type: ignore[override]
        return (f"--{self.name}",)

    def data(self, family: str) -> dict | None:
        bf16 = self.name == "bf16"
        return {
            "DeepSpeed": {
                "train_micro_batch_size_per_gpu": 4,
                "gradient_accumulation_steps": 8,
                "fp16": {"enabled": not bf16},
                "bf16": {"enabled": bf16},
                "zero_optimization": {"stage": 2},
            },
            "accelerate": {
                "compute_environment": "LOCAL_MACHINE",
                "distributed_type": "MULTI_GPU",
                "mixed_precision": self.name,
                "num_processes": 8,
            },
            "Lightning": {"trainer": {"precision": "bf16-mixed" if bf16 else "16-mixed", "accumulate_grad_batches": 4}},
            "HF": {"output_dir": "/checkpoints/run", "per_device_train_batch_size": 4, "fp16": not bf16, "bf16": bf16},
        }[family]


@dataclass(frozen=True)
class Checkpoints(Setting):
    """Where checkpoints are written: ``--output_dir DIR``, or each config's checkpoint key."""

    directory: str

    @property
    def flags(self) -> tuple[str, ...]:  # type: ignore[override]
        return ("--output_dir", self.directory)

    def data(self, family: str) -> dict | None:
        return {
            "DeepSpeed": None,
            "accelerate": None,
            "Lightning": {"trainer": {"default_root_dir": self.directory, "max_epochs": 3}},
            "HF": {"output_dir": self.directory, "per_device_train_batch_size": 4},
        }[family]


@dataclass(frozen=True)
class Accumulation(Setting):
    """Gradient accumulation passed to the training script and set in the DeepSpeed config it
    names (``--deepspeed ds_config.json``): the command forms name a file beside the manifest."""

    flag: int
    in_config: int

    @property
    def flags(self) -> tuple[str, ...]:  # type: ignore[override]
        return ("--deepspeed", "ds_config.json", *self.config_flags)

    @property
    def config_flags(self) -> tuple[str, ...]:  # type: ignore[override]
        return ("--gradient_accumulation_steps", str(self.flag))

    def beside(self) -> dict[str, str]:
        return {"ds_config.json": json.dumps(self.data("DeepSpeed"), indent=2) + "\n"}

    def data(self, family: str) -> dict | None:
        if family != "DeepSpeed":
            return None
        return {
            "train_micro_batch_size_per_gpu": 4,
            "gradient_accumulation_steps": self.in_config,
            "zero_optimization": {"stage": 2},
        }


@dataclass(frozen=True)
class Case:
    """One rule's defect: the bad and good launch (or precision) on a base workload."""

    code: str
    base: str  # key of BASES
    bad: Line | Setting
    good: Line | Setting
    not_applicable: dict[str, str] = field(default_factory=dict)  # form -> why the cell is empty

    @property
    def label(self) -> str:
        return f"{self.code} (Slurm)" if self.base in SLURM_BASES else self.code


def _job(name: str, pod_spec: dict, kind: str = "Job") -> dict:
    if kind == "MPIJob":  # the launch line runs in the launcher; the workers hold the GPUs
        launcher = {
            "containers": [{**pod_spec["containers"][0], "resources": {"limits": {"cpu": "2", "memory": "4Gi"}}}]
        }
        worker = {**pod_spec, "containers": [{**pod_spec["containers"][0], "command": ["/usr/sbin/sshd", "-De"]}]}
        return {
            "apiVersion": "kubeflow.org/v2beta1",
            "kind": "MPIJob",
            "metadata": {"name": name, "namespace": "ml"},
            "spec": {
                "slotsPerWorker": 8,
                "mpiReplicaSpecs": {
                    "Launcher": {"replicas": 1, "template": {"spec": launcher}},
                    "Worker": {"replicas": 2, "template": {"spec": worker}},
                },
            },
        }
    if kind == "IndexedJob":  # a 2-pod collective whose failed rank the kubelet restarts alone
        spec = {"restartPolicy": "OnFailure", "subdomain": name, **pod_spec}
        return {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": name, "namespace": "ml"},
            "spec": {"completionMode": "Indexed", "completions": 2, "parallelism": 2, "template": {"spec": spec}},
        }
    if kind == "PyTorchJob":
        return {
            "apiVersion": "kubeflow.org/v1",
            "kind": "PyTorchJob",
            "metadata": {"name": name, "namespace": "ml"},
            "spec": {
                "pytorchReplicaSpecs": {
                    "Master": {"replicas": 1, "restartPolicy": "OnFailure", "template": {"spec": pod_spec}},
                    "Worker": {"replicas": 1, "restartPolicy": "OnFailure", "template": {"spec": pod_spec}},
                }
            },
        }
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": {"backoffLimit": 3, "template": {"spec": {"restartPolicy": "Never", **pod_spec}}},
    }


def _pod(instance: str | None, resources: dict, shm: str) -> dict:
    spec: dict = {
        "containers": [
            {
                "name": "trainer",
                "image": IMAGE,
                "resources": {"limits": resources, "requests": resources},
                "volumeMounts": [
                    {"name": "dshm", "mountPath": "/dev/shm"},
                    {"name": "checkpoints", "mountPath": "/checkpoints"},
                ],
            }
        ],
        "volumes": [
            {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": shm}},
            {"name": "checkpoints", "persistentVolumeClaim": {"claimName": "fsx-checkpoints"}},
        ],
    }
    if instance:
        spec["nodeSelector"] = {"node.kubernetes.io/instance-type": instance}
    return spec


#: Base workloads: (kind, instance type, resources, /dev/shm size).
BASES = {
    "a100-job": ("Job", "p4d.24xlarge", {"nvidia.com/gpu": 8, "cpu": "90", "memory": "1000Gi"}, "200Gi"),
    "t4-job": ("Job", "g4dn.12xlarge", {"nvidia.com/gpu": 4, "cpu": "44", "memory": "160Gi"}, "40Gi"),
    "a100-mpijob": ("MPIJob", "p4d.24xlarge", {"nvidia.com/gpu": 8, "cpu": "90", "memory": "1000Gi"}, "200Gi"),
    "a100-indexed-job": ("IndexedJob", "p4d.24xlarge", {"nvidia.com/gpu": 8, "cpu": "90", "memory": "1000Gi"}, "200Gi"),
    "a100-pytorchjob": ("PyTorchJob", "p4d.24xlarge", {"nvidia.com/gpu": 8, "cpu": "90", "memory": "1000Gi"}, "200Gi"),
    "ray-submit-job": ("Job", None, {"cpu": "1", "memory": "2Gi"}, "1Gi"),
}

#: Objects a base's workload is linted beside: the RayCluster a submit Job sends its job to
#: (KubeRay: 2 worker pods x 8 GPUs, head Service ``train-cluster-head-svc``).
CONTEXT = {
    "ray-submit-job": (
        {
            "apiVersion": "ray.io/v1",
            "kind": "RayCluster",
            "metadata": {"name": "train-cluster", "namespace": "ml"},
            "spec": {
                "headGroupSpec": {
                    "rayStartParams": {},
                    "template": {"spec": {"containers": [{"name": "ray-head", "image": "rayproject/ray:2.40.0"}]}},
                },
                "workerGroupSpecs": [
                    {
                        "groupName": "gpu",
                        "replicas": 2,
                        "rayStartParams": {},
                        "template": {
                            "spec": {
                                "containers": [
                                    {
                                        "name": "ray-worker",
                                        "image": "rayproject/ray:2.40.0-gpu",
                                        "resources": {"limits": {"nvidia.com/gpu": 8}},
                                    }
                                ]
                            }
                        },
                    }
                ],
            },
        },
    ),
}

#: Slurm bases: a batch script on a partition whose Slinky NodeSet pins the instance type.
SLURM_BASES = {"a100-slurm": "p4d.24xlarge", "t4-slurm": "g4dn.12xlarge"}
_NO_CONFIGMAP = "a batch script mounts no ConfigMap: the configs it names are files beside it"
_SLURM_CONFIGMAPS = dict.fromkeys((f for f in CONFIG_FORMS if f.endswith("in ConfigMap")), _NO_CONFIGMAP)
_NO_SRUN = "no srun step: the batch shell starts the launcher once, on the first node, and the rule judges srun steps"

_TRAIN = ("train.py", "--epochs", "3")
_TORCHRUN8 = ("torchrun", "--nproc_per_node=8")
_RDZV = ("--rdzv_backend=c10d", "--rdzv_endpoint=node-0:29500")
_TORCHRUN_2X8 = ("torchrun", "--nnodes=2", "--nproc_per_node=8", *_RDZV)
_NO_CONFIG = "a launcher option, not a training setting: no config file holds it"
_RAY_SUBMIT = ("ray", "job", "submit", "--address", "http://train-cluster-head-svc:8265", "--")
_LAUNCH_ONLY = dict.fromkeys(CONFIG_FORMS, _NO_CONFIG)
_SRUN_STEP = {**_LAUNCH_ONLY, "bash -c": _NO_SRUN}
_DEEPSPEED_ONLY = "not a DeepSpeed config: the rule compares a DeepSpeed config with its launcher"

CASES = (
    Case("EML401", "a100-job", Precision("fp16"), Precision("bf16")),
    Case("EML402", "t4-job", Precision("bf16"), Precision("fp16")),
    Case("EML401", "a100-slurm", Precision("fp16"), Precision("bf16"), _SLURM_CONFIGMAPS),
    Case("EML402", "t4-slurm", Precision("bf16"), Precision("fp16"), _SLURM_CONFIGMAPS),
    Case("EML810", "a100-job", Checkpoints("/tmp/run"), Checkpoints("/checkpoints/run")),
    *(
        Case(
            "EML804",
            base,
            Line(("torchrun", "--nnodes=2", "--nproc_per_node=8"), _TRAIN),
            Line(("torchrun", "--nnodes=2", "--nproc_per_node=8", "--rdzv_endpoint=node-0:29500"), _TRAIN),
            dict.fromkeys(CONFIG_FORMS, _NO_CONFIG),
        )
        for base in ("a100-job", "a100-slurm")
    ),
    Case(
        "EML606",
        "a100-mpijob",
        Line(("mpirun", "--allow-run-as-root", "-np", "8", "-bind-to", "none"), ("python", "train.py")),
        Line(("mpirun", "--allow-run-as-root", "-np", "16", "-bind-to", "none"), ("python", "train.py")),
        dict.fromkeys(CONFIG_FORMS, _NO_CONFIG),
    ),
    Case(
        "EML604",
        "a100-job",
        Line(("torchrun", "--nproc_per_node=4"), _TRAIN),
        Line(_TORCHRUN8, _TRAIN),
        dict.fromkeys(CONFIG_FORMS, _NO_CONFIG),
    ),
    Case(
        "EML805",
        "a100-slurm",
        Line(_TORCHRUN_2X8, _TRAIN, srun=("--ntasks-per-node=8",)),
        Line(_TORCHRUN_2X8, _TRAIN),
        _SRUN_STEP,
    ),
    Case(
        "EML806",
        "a100-slurm",
        Line(("torchrun", "--nnodes=2", "--nproc_per_node=4", *_RDZV), _TRAIN),
        Line(_TORCHRUN_2X8, _TRAIN),
        _SRUN_STEP,
    ),
    Case(
        "EML811",
        "a100-slurm",
        Line(("torchrun", "--nnodes=2", "--nproc_per_node=8", "--node_rank=0", "--master_addr=node-0"), _TRAIN),
        Line(_TORCHRUN_2X8, _TRAIN),
        _SRUN_STEP,
    ),
    Case(
        "EML808",
        "a100-indexed-job",
        Line(_TORCHRUN_2X8, _TRAIN),
        Line((*_TORCHRUN_2X8, "--max_restarts=3"), _TRAIN),
        _LAUNCH_ONLY,
    ),
    *(
        Case(
            "EML809",
            base,
            Accumulation(flag=4, in_config=8),
            Accumulation(flag=8, in_config=8),
            {
                **{f: _DEEPSPEED_ONLY for f in CONFIG_FORMS if not f.startswith("DeepSpeed")},
                **(_SLURM_CONFIGMAPS if base in SLURM_BASES else {}),
            },
        )
        for base in ("a100-job", "a100-slurm")
    ),
    Case(
        "EML605",
        "a100-pytorchjob",
        Line(("torchrun", "--nnodes=3", "--nproc_per_node=8"), _TRAIN),
        Line(("torchrun", "--nnodes=2", "--nproc_per_node=8"), _TRAIN),
        dict.fromkeys(CONFIG_FORMS, _NO_CONFIG),
    ),
    Case(
        "EML610",
        "ray-submit-job",
        Line(_RAY_SUBMIT, ("python", "train.py", "--num-workers", "17", "--use-gpu")),
        Line(_RAY_SUBMIT, ("python", "train.py", "--num-workers", "16", "--use-gpu")),
        {
            **dict.fromkeys(CONFIG_FORMS, "Ray Train's scaling arguments: no config file holds them"),
            "srun bash -c": "a Ray job is submitted once, not on every node by srun",
        },
    ),
)

#: Rules of the launch/precision families the launcher dimension does not apply to, with why.
NOT_IN_MATRIX = {
    "EML403": "a conflict between two selections: each side is an EML401/402 cell already",
    "EML404": "reads the container env (XLA_USE_BF16 / NEURON_CC_FLAGS), not a launch line",
    "EML608": "NEURON_RT_NUM_CORES / NEURON_RT_VISIBLE_CORES in the env, not a launcher's options",
    "EML801": "reads JOB_COMPLETION_INDEX references in the env / command, not the launcher's shape",
    "EML802": "MASTER_ADDR in the env, not the launch line",
    "EML803": "CUDA_VISIBLE_DEVICES in the env, not the launch line",
    "EML807": "the image tag, not the launch line",
}


def cells() -> list[tuple[Case, str]]:
    return [(case, form) for case in CASES for form in FORMS]


def why_empty(case: Case, form: str) -> str | None:
    """Why ``case`` cannot be written in ``form`` (None: the cell is judged)."""
    if form in case.not_applicable:
        return case.not_applicable[form]
    line = case.bad if isinstance(case.bad, Line) else Line(_TORCHRUN8, (*_TRAIN, *case.bad.flags))
    if form in COMMAND_FORMS and command_of(form, line) is None:
        return f"{line.launcher[0]} has no python -m form"
    if form in CONFIG_FORMS and isinstance(case.bad, Setting) and case.bad.config(form) is None:
        return f"the {_family(form)} config has no key for it"
    return None


def manifests(case: Case, form: str, bad: bool) -> dict[str, str]:
    """The files of one cell (file name -> text)."""
    choice = case.bad if bad else case.good
    if case.base in SLURM_BASES:
        return _slurm_cell(SLURM_BASES[case.base], form, choice)
    kind, instance, resources, shm = BASES[case.base]
    pod = _pod(instance, resources, shm)
    container = pod["containers"][0]
    files: dict[str, str] = {}
    docs: list[dict] = []
    if isinstance(choice, Line):
        container["command"] = command_of(form, choice)
    elif form in COMMAND_FORMS:
        container["command"] = command_of(form, Line(_TORCHRUN8, (*_TRAIN, *choice.flags)))
        files.update(choice.beside())
    else:
        found = choice.config(form)
        assert found is not None
        name, text, _ = found
        beside = "beside manifest" in form
        container["command"] = _config_launch(form, choice, name if beside else f"/config/{name}")
        if beside:
            files[name] = text
        else:
            container["volumeMounts"].append({"name": "cfg", "mountPath": "/config"})
            pod["volumes"].append({"name": "cfg", "configMap": {"name": "train-config"}})
            docs.append(
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": "train-config", "namespace": "ml"},
                    "data": {name: text},
                }
            )
    docs.insert(0, _job("train", pod, kind))
    docs.extend(copy.deepcopy(CONTEXT.get(case.base, ())))
    files["workload.yaml"] = yaml.safe_dump_all(docs, sort_keys=False)
    return files


def _config_launch(form: str, choice: Setting, path: str) -> list[str]:
    """The launch line of a config form: the config's file at ``path`` named by its option."""
    _, _, option = _CONFIG_FILES[_family(form)]
    if form.startswith("accelerate"):
        return ["accelerate", "launch", "--config_file", path, *_TRAIN, *choice.config_flags]
    script = (*_TRAIN, option, path) if option else ("train.py", path)
    return [*_TORCHRUN8, *script, *choice.config_flags]


def _slurm_cell(instance: str, form: str, choice: Line | Setting) -> dict[str, str]:
    """A batch script on partition ``gpu`` and the NodeSet serving it; the launch is the script's
    body, started by srun (a ``bash -c`` form's script is the body itself: sbatch runs it with
    bash, without srun); a config form's file lies beside the script."""
    files: dict[str, str] = {}
    if isinstance(choice, Line):
        line = choice
        argv = command_of(form, line)
    elif form in COMMAND_FORMS:
        line = Line(_TORCHRUN8, (*_TRAIN, *choice.flags))
        argv = command_of(form, line)
        files.update(choice.beside())
    else:
        found = choice.config(form)
        assert found is not None
        name, text, _ = found
        files[name] = text
        line = Line(_TORCHRUN8, _TRAIN)
        argv = _config_launch(form, choice, name)
    assert argv is not None
    srun = f"srun {_q(line.srun)} "
    if form == "variable":  # the Megatron idiom as a batch script: srun $LAUNCHER $CMD
        body = argv[2].replace("\n$LAUNCHER $CMD", f"\n{srun}$LAUNCHER $CMD")
    elif argv[:2] == ["bash", "-c"]:
        body = argv[2]
    else:
        body = f"{srun}{_q(argv)}\n"
    script = "#!/bin/bash\n#SBATCH --job-name=train\n#SBATCH --partition=gpu\n#SBATCH --nodes=2\n"
    script += "#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-node=8\n\n" + body
    nodeset = {
        "apiVersion": "slinky.slurm.net/v1beta1",
        "kind": "NodeSet",
        "metadata": {"name": "gpu", "namespace": "slurm"},
        "spec": {
            "controllerRef": {"name": "slurm", "namespace": "slurm"},
            "replicas": 2,
            "partition": {"enabled": True},
            "template": {"spec": {"nodeSelector": {"node.kubernetes.io/instance-type": instance}}},
        },
    }
    return {"train.sbatch": script, "nodeset.yaml": yaml.safe_dump(nodeset, sort_keys=False), **files}


def markdown_table() -> str:
    """The rule x launcher-form table for the README: ✓ where the rule is judged (bad cell fires,
    good cell silent), a numbered note where the cell cannot apply, and the rules of the families
    the launcher dimension does not apply to, with why."""
    notes: dict[str, int] = {}

    def mark(why: str | None) -> str:
        if why is None:
            return "✓"
        return f"—{notes.setdefault(why, len(notes) + 1)}"

    lines = ["| rule | " + " | ".join(FORMS) + " |", "|---|" + "---|" * len(FORMS)]
    lines += [f"| {c.label} | " + " | ".join(mark(why_empty(c, f)) for f in FORMS) + " |" for c in CASES]
    lines.append("")
    lines += [f"{n}. {why}" for why, n in notes.items()]
    lines.append("")
    lines.append("Not in the launcher dimension:")
    lines.append("")
    lines += [f"- {code}: {why}" for code, why in sorted(NOT_IN_MATRIX.items())]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown_table(), end="")
