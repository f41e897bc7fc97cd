"""Family 8xx: launch and job semantics (EML801-EML810), and EML005 launch-file-invalid.

These rules read what a job *launches* — container commands (``torchrun``, ``deepspeed``,
``bash -c`` scripts), Slurm batch scripts and DeepSpeed configs — through
:mod:`eksmllint.launch`, and compare it with the Kubernetes (or Slurm) objects around it.

Silence policy, as everywhere in eksmllint: a value that is not literally known (``$(VAR)`` from
``valueFrom``, a command substitution, ``auto``) makes a rule stay silent rather than guess.

Parsing is pure and cached per input text (module-level ``lru_cache`` keyed on immutable
strings/tuples), so the checks stay stateless while a run with many rules parses each Slurm
script, DeepSpeed config and container command once.

How a ``--deepspeed PATH`` reference finds its config (EML809, EML005):

- from a **Slurm script**: the JSON file of the run at ``PATH`` relative to the script's directory
  (sbatch runs the script from the submit directory, normally the script's own); else the one
  JSON file of the run with the same file name; else, when exactly one DeepSpeed config (by name
  ``ds_config*``/``*deepspeed*`` or by content) lies in the script's directory or below, that one
  (the seed names ``configs/ds_config_zero3.json`` for a file shipped as
  ``25-deepspeed-zero3-config.json`` beside it);
- from a **container**: the ConfigMap key the container mounts at that path (``workingDir``
  applies to relative paths; a unique path suffix is accepted); else the one JSON file of the run
  with the same file name in the manifest's directory or below.

Findings name how the match was made when it was not exact.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from functools import lru_cache

from eksmllint.analysis.workload_class import WorkloadClass, classify_template
from eksmllint.catalogue import InstanceType, get_catalogue
from eksmllint.checks.helpers import (
    MountedFile,
    configmap_refs,
    container_invocations,
    find_configmap,
    fmt_list,
    index_ranges,
    mounted_files,
)
from eksmllint.core.finding import (
    Applicability,
    DocPath,
    Finding,
    Fix,
    FixOp,
    RemovePath,
    ReplaceText,
    SetValue,
)
from eksmllint.launch.deepspeed import (
    DeepSpeedConfig,
    DeepSpeedError,
    looks_like_deepspeed,
    parse_deepspeed,
)
from eksmllint.launch.model import (
    PER_NODE_LAUNCHERS,
    ArgPosition,
    Invocation,
    Option,
    parse_int,
)
from eksmllint.launch.slurm import SlurmScript, parse_sbatch, script_lines
from eksmllint.quantity import DIGITS, parse_count, parse_quantity, to_mib
from eksmllint.resource import Resource, SourceFile, walk
from eksmllint.workload import (
    GPU,
    NEURON,
    NEURONCORE,
    NEURONDEVICE,
    OPERATOR_MANAGED,
    Container,
    PodTemplate,
    Workload,
)
from eksmllint.yamlpos import YAMLLoadError, load_data

SLINKY_GROUP = "slinky.slurm.net"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"


# =============================================================================================
# Cached parsing
# =============================================================================================
@lru_cache(maxsize=128)
def slurm_of(text: str) -> SlurmScript:
    """The parsed batch script (never raises)."""
    return parse_sbatch(text)


@lru_cache(maxsize=1024)
def deepspeed_of(text: str, filename: str) -> DeepSpeedConfig | DeepSpeedError:
    """The parsed DeepSpeed config (never raises); ``filename`` decides JSON vs YAML."""
    return parse_deepspeed(text, filename)


@lru_cache(maxsize=64)
def loader_rejects(path: str, text: str, kind: str) -> bool:
    """Does the loader report this file as EML001 (so EML005 must not report it again)?
    Decided by running the loader's own parser on a fresh copy of the file."""
    from eksmllint.loader import parse_source

    _, problems = parse_source(SourceFile(path, text, kind))
    return bool(problems)


def container_text(c: Container) -> str:
    """Command and args joined: for conservative 'is this mentioned at all' tests."""
    command, args = c.argv_lists()
    return "\n".join((command or []) + (args or []))


# =============================================================================================
# Launch sites: one invocation with where it lives (a container or a Slurm script)
# =============================================================================================
@dataclass(frozen=True, eq=False)
class Site:
    """An invocation and its home: a container (``container``) or a batch script (``src``)."""

    inv: Invocation
    container: Container | None = None
    src: SourceFile | None = None
    script: SlurmScript | None = None

    @property
    def where(self) -> str:
        if self.container is not None:
            return f"container {self.container.name!r} of {self.container.template.resource.ref.display()}"
        return f"Slurm script {self.src.path}" if self.src is not None else "launcher"

    def describe(self, pos: ArgPosition | None) -> str:
        """Where an argument sits, for messages: ``line 37`` or ``args[3]`` (+ script line)."""
        if pos is None:
            return ""
        if self.src is not None:
            return f"line {pos.script_line}" if pos.script_line else ""
        text = f"{pos.list_name}[{pos.index}]"
        if pos.script_line is not None:
            text += f", script line {pos.script_line + 1}"
        return text

    def report(self, ctx, pos: ArgPosition | None, raw: str, message: str, **kw) -> Finding:
        if self.container is not None:
            return ctx.report(
                self.container.template.resource, arg_path(self.container, pos), message + script_note(pos), **kw
            )
        line, col = slurm_line_col(self.src, pos, raw)
        return ctx.report_file(self.src, line, col, message, **kw)


def arg_path(c: Container, pos: ArgPosition | None) -> DocPath:
    """The command/args list element an argument was written in (the container when unknown)."""
    if pos is None or pos.list_name not in ("command", "args"):
        return c.path + ("name",)
    return c.path + (pos.list_name, pos.index)


def script_note(pos: ArgPosition | None) -> str:
    """A ``bash -c`` script's line is not a document path: name it in the message instead."""
    if pos is not None and pos.script_line is not None and pos.list_name in ("command", "args"):
        return f" (line {pos.script_line + 1} of the {pos.list_name}[{pos.index}] script)"
    return ""


def slurm_line_col(src: SourceFile | None, pos: ArgPosition | None, raw: str = "") -> tuple[int, int]:
    line = pos.script_line if pos is not None and pos.script_line else 1
    col = 1
    lines = script_lines(src.text) if src is not None and src.text else ()
    if 0 < line <= len(lines):
        text = lines[line - 1]
        k = text.find(raw) if raw else -1
        col = k + 1 if k >= 0 else len(text) - len(text.lstrip()) + 1
    return line, col


def slurm_files(run) -> list[tuple[SourceFile, SlurmScript]]:
    return [(f, slurm_of(f.text)) for f in run.files if f.kind == "slurm" and isinstance(f.text, str)]


def slurm_sites(src: SourceFile, script: SlurmScript) -> list[Site]:
    return [Site(inv, src=src, script=script) for inv in script.invocations]


def container_sites(c: Container) -> list[Site]:
    return [Site(inv, container=c) for inv in container_invocations(c)]


def all_sites(run) -> Iterator[Site]:
    for t in run.templates:
        for c in t.containers:
            yield from container_sites(c)
    for src, script in slurm_files(run):
        yield from slurm_sites(src, script)


def _int_opt(inv: Invocation, *names: str) -> tuple[int | None, Option | None]:
    for n in names:
        opt = inv.option(n)
        if opt is not None:
            return opt.int_value(), opt
    return None, None


def _script_int(inv: Invocation, *names: str) -> tuple[int | None, Option | None]:
    for n in names:
        opt = inv.script_flag(n)
        if opt is not None:
            return opt.int_value(), opt
    return None, None


# =============================================================================================
# EML801 completion-index-not-indexed
# =============================================================================================
COMPLETION_INDEX_ENV = "JOB_COMPLETION_INDEX"
COMPLETION_INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"
_INDEX_REF = re.compile(r"\$\(JOB_COMPLETION_INDEX\)|\$\{?JOB_COMPLETION_INDEX\b")


@dataclass(frozen=True)
class _JobSpec:
    """A batch Job spec inside a resource: ``path`` of the Job's ``spec`` mapping."""

    path: DocPath
    spec: dict
    what: str
    default_indexed: bool = False


def _job_specs(w: Workload) -> list[tuple[_JobSpec, PodTemplate]]:
    r = w.resource
    out = []
    for t in w.templates:
        spec_path = t.path[:-1]  # the Job spec holding the pod template
        if w.is_batch_job:
            what = f"Job {r.name!r}"
            default = False
        elif w.kind == "CronJob":
            what = f"the jobTemplate of CronJob {r.name!r}"
            default = False
        elif w.kind == "JobSet":
            what = f"replicated job {t.role.split(':', 1)[-1]!r} of JobSet {r.name!r}"
            default = True  # the JobSet webhook defaults child Jobs to Indexed
        else:
            continue
        spec = r.get(spec_path)
        if isinstance(spec, dict):
            out.append((_JobSpec(spec_path, spec, what, default), t))
    return out


def _index_uses(t: PodTemplate) -> list[tuple[DocPath, str]]:
    """Where a pod template reads the completion index: (path, what) in document order."""
    uses: list[tuple[DocPath, str]] = []
    for c in t.init_containers + t.containers:
        literal = any(e.get("name") == COMPLETION_INDEX_ENV and "valueFrom" not in e for e in c.env_list)
        for i, e in enumerate(c.env_list):
            fp = _field_path(e)
            if fp is not None and COMPLETION_INDEX_ANNOTATION in fp:
                uses.append(
                    (
                        c.path + ("env", i, "valueFrom", "fieldRef", "fieldPath"),
                        f"env {e.get('name')!r} of container {c.name!r} reads the {COMPLETION_INDEX_ANNOTATION} annotation",
                    )
                )
            elif not literal and isinstance(e.get("value"), str) and _INDEX_REF.search(e["value"]):
                uses.append(
                    (
                        c.path + ("env", i, "value"),
                        f"env {e.get('name')!r} of container {c.name!r} uses {COMPLETION_INDEX_ENV}",
                    )
                )
        if literal:
            continue
        for key in ("command", "args"):
            items = c.data.get(key)
            if isinstance(items, list):
                for i, item in enumerate(items):
                    if isinstance(item, str) and _INDEX_REF.search(item):
                        uses.append(
                            (c.path + (key, i), f"container {c.name!r} uses {COMPLETION_INDEX_ENV} in its {key}")
                        )
    for i, v in t.volumes:
        for path, value in walk(v.get("downwardAPI"), ("volumes", i, "downwardAPI")):
            if path and path[-1] == "fieldPath" and isinstance(value, str) and COMPLETION_INDEX_ANNOTATION in value:
                uses.append(
                    (
                        t.spec_path + path,
                        f"downwardAPI volume {v.get('name')!r} exposes the {COMPLETION_INDEX_ANNOTATION} annotation",
                    )
                )
    return uses


def completion_index_not_indexed(ctx, w: Workload):
    for job, t in _job_specs(w):
        mode = job.spec.get("completionMode")
        if mode == "Indexed" or (mode is None and job.default_indexed):
            continue
        uses = _index_uses(t)
        if not uses:
            continue
        completions = job.spec.get("completions")
        n = (
            completions
            if isinstance(completions, int) and not isinstance(completions, bool) and completions > 0
            else None
        )
        fix = None
        if n is not None:
            fix = Fix(
                f"Set completionMode: Indexed on {job.what}", (SetValue(job.path + ("completionMode",), "Indexed"),)
            )
            how = "set completionMode: Indexed"
        else:
            how = "set completionMode: Indexed (which needs spec.completions, e.g. equal to parallelism)"
        path, first = uses[0]
        more = f" (+{len(uses) - 1} more use{'s' if len(uses) > 2 else ''})" if len(uses) > 1 else ""
        mode_text = "completionMode NonIndexed" if mode else "no completionMode (NonIndexed)"
        yield ctx.report(
            w.resource,
            path,
            f"{first}{more}, but {job.what} has {mode_text}: the index is only set for Indexed Jobs, "
            f"so every pod gets an empty rank; {how}",
            fix=fix,
        )


# =============================================================================================
# EML802 master-addr-self
# =============================================================================================
MASTER_ENV = ("MASTER_ADDR", "PET_MASTER_ADDR")
_SELF_FIELDS = ("status.podIP", "status.podIPs")
_MASTER_ROLES = ("master", "leader", "chief", "head", "launcher", "driver", "rank0", "coordinator")


def _field_path(e: dict) -> str | None:
    vf = e.get("valueFrom")
    fr = vf.get("fieldRef") if isinstance(vf, dict) else None
    fp = fr.get("fieldPath") if isinstance(fr, dict) else None
    return fp if isinstance(fp, str) else None


def _self_ip_vars(c: Container) -> dict[str, int]:
    """Env names whose value is the pod's own IP -> env index."""
    return {str(e.get("name")): i for i, e in enumerate(c.env_list) if _field_path(e) in _SELF_FIELDS}


def _is_rank0_template(t: PodTemplate) -> bool:
    """A template whose single pod is the rendezvous host: its own IP is the right address."""
    if t.workload.kind == "LeaderWorkerSet" and t.role == "leader":
        return True  # one leader per group; workers use LWS_LEADER_ADDRESS
    role = t.role.split(":", 1)[-1].lower()
    return t.replicas == 1 and any(k in role for k in _MASTER_ROLES)


def master_addr_self(ctx, t: PodTemplate):
    w = t.workload
    if w.operator_managed or not w.is_multi_pod or t not in w.collective_templates:
        return
    if _is_rank0_template(t):
        return
    pods = t.replicas if t.replicas is not None else "several"
    for c in t.containers:
        self_vars = _self_ip_vars(c)
        if not self_vars:
            continue
        reported = False
        for name in MASTER_ENV:
            if name in self_vars:
                i = self_vars[name]
                yield ctx.report(
                    t.resource,
                    c.path + ("env", i, "valueFrom", "fieldRef", "fieldPath"),
                    f"{name} of container {c.name!r} is the pod's own status.podIP, but the "
                    f"{t.role!r} template runs {pods} pods of a {w.collective_size}-pod collective: each pod "
                    "waits for itself as rendezvous master; point it at the rank-0 pod's DNS name "
                    "(e.g. <job>-0.<subdomain> of an Indexed Job with a headless Service)",
                )
                reported = True
                break
        if reported:
            continue
        for site in container_sites(c):
            for key in ("master_addr", "rdzv_endpoint", "main_process_ip"):
                opt = site.inv.option(key)
                if opt is None or opt.value is None:
                    continue
                hit = next(
                    (
                        v
                        for v in self_vars
                        if f"$({v})" in opt.value or re.search(rf"\$\{{?{re.escape(v)}\b", opt.value)
                    ),
                    None,
                )
                if hit is None:
                    continue
                pos = opt.value_position or opt.position
                yield site.report(
                    ctx,
                    pos,
                    opt.raw,
                    f"{site.inv.launcher} --{key}={opt.value} in container {c.name!r} is the pod's own IP "
                    f"({hit} from status.podIP), but the {t.role!r} template runs {pods} pods of a "
                    f"{w.collective_size}-pod collective: each pod waits for itself as rendezvous master",
                )
                reported = True
                break
            if reported:
                break


# =============================================================================================
# EML803 visible-devices-override
# =============================================================================================
_VISIBLE_ENV = {
    "CUDA_VISIBLE_DEVICES": (GPU,),
    "NVIDIA_VISIBLE_DEVICES": (GPU,),
    "NEURON_RT_VISIBLE_CORES": (NEURON, NEURONCORE, NEURONDEVICE),
}


def _index_list(value: str) -> list[int] | None:
    """``0,1,2`` / ``0-3`` -> indices; None when not a plain index list (UUIDs, ``all``) or a
    range spans more than 4096 indices."""
    ranges = index_ranges(value)
    if ranges is None or any(hi - lo > 4096 for lo, hi in ranges):
        return None
    return [i for lo, hi in ranges for i in range(lo, hi + 1)]


def _visible_problem(name: str, value: str, devices: int) -> str:
    """What a hard-coded visibility variable does to the ``devices`` the plugin allocated."""
    low = value.strip().lower()
    if name == "NVIDIA_VISIBLE_DEVICES":
        if low == "all":
            return (
                f"exposes every GPU of the node to the container, not only the {devices} the device plugin "
                "allocated: it can use GPUs that belong to other pods"
            )
        if low in ("", "none", "void"):
            return f"hides the {devices} GPU(s) the device plugin allocated"
        return "replaces the device plugin's own list of allocated GPUs"
    if name == "NEURON_RT_VISIBLE_CORES":
        # core numbers depend on the devices the plugin picked; EML608 compares the counts
        return (
            "overrides the NeuronCores the Neuron device plugin assigned: the runtime opens cores by "
            "number, which may not be the ones this pod was given"
        )
    indices = _index_list(value) if value.strip() else []
    if indices is None:
        return f"overrides the {devices} GPU(s) the device plugin exposes"
    if not indices:
        return f"hides all {devices} allocated GPU(s)"
    if max(indices) >= devices:
        return (
            f"names GPU index {max(indices)} but the container is allocated {devices}, numbered from 0: "
            "CUDA silently drops every index from the first missing one on, so the list does not mean "
            "what it says"
        )
    if len(set(indices)) < devices:
        return f"hides {devices - len(set(indices))} of the {devices} allocated GPUs"
    return (
        f"repeats what the device plugin already exposes for the {devices} allocated GPUs and breaks "
        "as soon as the count changes"
    )


def visible_devices_override(ctx, t: PodTemplate):
    for c in t.containers + t.init_containers:
        for i, e in enumerate(c.env_list):
            name = e.get("name")
            if not isinstance(name, str) or name not in _VISIBLE_ENV or "valueFrom" in e:
                continue
            value = e.get("value")
            value = "" if value is None else str(value)
            resources = _VISIBLE_ENV[name]
            devices = sum(c.count(r) for r in resources)
            if devices <= 0:
                continue
            what = "GPU(s)" if resources == (GPU,) else "Neuron device-plugin resource(s)"
            problem = _visible_problem(name, value, devices)
            yield ctx.report(
                t.resource,
                c.path + ("env", i, "value") if "value" in e else c.path + ("env", i),
                f"container {c.name!r} hard-codes {name}={value!r} next to its {devices} allocated {what}; "
                f"it {problem}",
                fix=Fix(f"Remove {name} from container {c.name!r}", (RemovePath(c.path + ("env", i)),)),
            )


# =============================================================================================
# EML804 rendezvous-missing
# =============================================================================================
# torchrun reads only its arguments and PET_<OPTION> variables (torch/distributed/argparse_util.py
# ``env``: "Get argument values from PET_{dest} before defaulting"): a plain MASTER_ADDR is ignored.
_RDZV_ENV = ("PET_MASTER_ADDR", "PET_RDZV_ENDPOINT")
_RDZV_MENTION = re.compile(r"PET_MASTER_ADDR|PET_RDZV_ENDPOINT|rdzv[_-]endpoint|master[_-]addr")


def _nnodes_max(opt: Option | None) -> int | None:
    """torchrun ``--nnodes``: ``4`` -> 4, ``2:8`` -> 8 (elastic); None when not literal."""
    if opt is None or opt.resolved is None:
        return None
    text = opt.resolved.strip()
    if ":" in text:
        return parse_int(text.split(":", 1)[1])
    return parse_int(text)


def _operator_injects_rendezvous(w: Workload) -> str | None:
    """The operator that sets PET_MASTER_ADDR (PyTorchJob, TrainJob) for torchrun. Volcano's
    ``pytorch`` plugin is not one: it sets MASTER_ADDR/MASTER_PORT/WORLD_SIZE/RANK, which reach
    torchrun only through the command (``--master_addr=$MASTER_ADDR --node_rank=$RANK``)."""
    return w.kind if w.kind in OPERATOR_MANAGED else None


def _missing_rendezvous(inv: Invocation) -> Option | None:
    """The ``--nnodes`` option of a multi-node torchrun that names no rendezvous host."""
    if inv.launcher != "torchrun" or inv.option("standalone") is not None:
        return None
    nnodes = inv.option("nnodes")
    n = _nnodes_max(nnodes)
    if n is None or n <= 1:
        return None
    if inv.option("rdzv_endpoint") is not None or inv.option("master_addr") is not None:
        return None
    if any(k in inv.env for k in _RDZV_ENV):
        return None
    return nnodes


def rendezvous_missing(ctx, run):
    for t in run.templates:
        if _operator_injects_rendezvous(t.workload):
            continue
        for c in t.containers:
            if any(k in c.env for k in _RDZV_ENV) or _RDZV_MENTION.search(container_text(c)):
                continue
            for site in container_sites(c):
                nnodes = _missing_rendezvous(site.inv)
                if nnodes is not None:
                    yield site.report(ctx, nnodes.position, nnodes.raw, _rdzv_message(site, nnodes))
    for src, script in slurm_files(run):
        if _RDZV_MENTION.search(src.text or ""):
            continue
        for site in slurm_sites(src, script):
            nnodes = _missing_rendezvous(site.inv)
            if nnodes is not None:
                yield site.report(ctx, nnodes.position, nnodes.raw, _rdzv_message(site, nnodes))


def _rdzv_message(site: Site, nnodes: Option) -> str:
    return (
        f"torchrun --nnodes={nnodes.resolved} in {site.where} names no rendezvous host (no --rdzv_endpoint, "
        "--master_addr or PET_MASTER_ADDR, and no operator injects one; torchrun ignores a plain MASTER_ADDR): "
        "every node rendezvouses with itself at 127.0.0.1 and waits forever; pass --rdzv_backend=c10d "
        "--rdzv_endpoint=<rank-0 host>:29400 (or --master_addr=$MASTER_ADDR --node_rank=$RANK)"
    )


# =============================================================================================
# EML805 srun-launcher-multiplied
# =============================================================================================
def _tasks_source(script: SlurmScript, inv: Invocation) -> tuple[str, ArgPosition | None, str, str | None]:
    """Where the tasks-per-node of an srun step is decided: (description, position, raw, literal
    value or None). srun's own literal option wins; a derived one points at the directive."""
    srun = inv.under_srun
    for name in ("ntasks_per_node", "ntasks"):
        opt = srun.option(name) if srun is not None else None
        if opt is not None and opt.resolved is not None and opt.resolved == opt.value:
            return f"srun {opt.raw}", opt.position, opt.raw, opt.value
        if opt is not None:
            break
    for name in ("ntasks_per_node", "ntasks"):
        d = script.directive(name)
        if d is not None:
            return f"#SBATCH {d.raw}", ArgPosition("script", 0, d.line), d.raw, d.value
    opt = srun.option("ntasks_per_node") or srun.option("ntasks") if srun is not None else None
    if opt is not None:
        return f"srun {opt.raw}", opt.position, opt.raw, None
    return "srun", srun.position if srun else None, "srun", None


def _nproc(inv: Invocation) -> tuple[int | None, Option | None]:
    if inv.launcher == "torchrun":
        return _int_opt(inv, "nproc_per_node")
    if inv.launcher == "deepspeed":
        return _int_opt(inv, "num_gpus")
    if inv.launcher == "accelerate":
        procs, opt = _int_opt(inv, "num_processes")
        machines, _ = _int_opt(inv, "num_machines")
        if procs is not None and machines:
            return (procs // machines if procs % machines == 0 else None), opt
        return None, opt
    return None, None


def srun_launcher_multiplied(ctx, src: SourceFile):
    if src.kind != "slurm" or not isinstance(src.text, str):
        return
    script = slurm_of(src.text)
    flagged: list[tuple[Invocation, int]] = []
    for inv in script.invocations:
        if inv.launcher in PER_NODE_LAUNCHERS and inv.under_srun is not None:
            tasks = script.tasks_per_node(inv.under_srun)
            if tasks is not None and tasks > 1:
                flagged.append((inv, tasks))
    all_edits = steps_edits_805(src.text, script, [inv for inv, _ in flagged])  # together: linear in the steps
    for (inv, tasks), edits in zip(flagged, all_edits):
        nproc, _ = _nproc(inv)
        desc, pos, raw, _ = _tasks_source(script, inv)
        if nproc is not None:
            per = f"each runs {inv.launcher} with {nproc} processes"
            total = f": {tasks * nproc} processes per node"
            gpn = script.gpus_per_node
            if gpn:
                total += f" for {gpn} GPUs"
        else:
            per = f"each runs its own {inv.launcher}"
            total = f": {tasks} launchers per node fight over the same GPUs and rendezvous"
        fix = (
            Fix(
                f"Run one {inv.launcher} per node: " + "; ".join(f"{old} -> {new}" for _, _, old, new in edits),
                tuple(ReplaceText(*e) for e in edits),
            )
            if edits
            else None
        )
        yield ctx.report_file(
            src,
            *slurm_line_col(src, pos, raw),
            f"srun starts {tasks} tasks per node ({desc}) and {per} "
            f"(line {inv.source.position.script_line}){total}; {inv.launcher} is a per-node launcher: "
            "run it with --ntasks-per-node=1",
            fix=fix,
        )


Edit = tuple[int, int, str, str]  # (line, col, old, new), 1-based, as ReplaceText takes them


@dataclass(frozen=True, eq=False)
class _Edited:
    """A script after some EML805 edits, made exactly as ``eksmllint fix`` makes them, with its parse,
    its lines (split at "\n" like launch.slurm.script_lines and fix.text) and its invocations by line."""

    text: str
    script: SlurmScript
    lines: tuple[str, ...]
    by_line: dict[int | None, list[Invocation]]


@lru_cache(maxsize=64)
def _edited(text: str, edits: tuple[Edit, ...]) -> _Edited | None:
    """``text`` after ``edits`` (None when one does not apply). Memoised per edit sequence: the
    steps of one script usually need the same edit (their shared ``#SBATCH`` line), so a script
    with thousands of steps is re-parsed once per distinct edit instead of once per step."""
    from eksmllint.fix.spans import FixError  # only when an srun step is flagged
    from eksmllint.fix.text import replace_texts

    try:
        current = replace_texts(text, (ReplaceText(*e) for e in edits)) if edits else text
    except FixError:
        return None
    script = slurm_of(current)
    by_line: dict[int | None, list[Invocation]] = {}
    for i in script.invocations:
        by_line.setdefault(i.source.position.script_line, []).append(i)
    return _Edited(current, script, tuple(current.split("\n")), by_line)


def _edit_on_line(state: _Edited, line: int, old: str, new: str) -> Edit | None:
    """The edit replacing the only ``old`` on ``line``; None when ``old`` is not there once."""
    if not 0 < line <= len(state.lines) or state.lines[line - 1].count(old) != 1:
        return None
    return (line, state.lines[line - 1].index(old) + 1, old, new)


def _same_site(state: _Edited, inv: Invocation) -> Invocation | None:
    found = [i for i in state.by_line.get(inv.source.position.script_line, ()) if i.launcher == inv.launcher]
    return found[0] if len(found) == 1 else None


def text_edits_805(text: str, script: SlurmScript, inv: Invocation) -> tuple[Edit, ...]:
    """Text edits that make the step run one launcher per node with the same processes per node
    as before (the GPUs per node when known): ``(line, col, old, new)``, 1-based. Computed, then
    verified by re-parsing the edited script; empty when verification fails.

    The finding's fix carries them as :class:`~eksmllint.core.finding.ReplaceText` operations."""
    return steps_edits_805(text, script, [inv])[0]


def steps_edits_805(text: str, script: SlurmScript, invs: list[Invocation]) -> list[tuple[Edit, ...]]:
    """:func:`text_edits_805` for several steps of one script at once, with the same result as one by
    one. Verifying a step's edits re-parses the script; steps whose edits are on their own command
    lines share one re-parse per round (see :func:`_views`), so the work grows with the number of
    steps, not with its square (issue 16: 400 steps took 12.9 s)."""
    sites = [_site_edits(script, inv) for inv in invs]
    results: list[tuple[Edit, ...]] = [() for _ in invs]
    asked = {k: next(site) for k, site in enumerate(sites)}
    while asked:
        views = _views(text, script, asked, invs)
        again: dict[int, tuple[Edit, ...]] = {}
        for k in asked:
            try:
                again[k] = sites[k].send(views[k])
            except StopIteration as done:
                results[k] = done.value
        asked = again
    return results


# old and new text of an edit that changes one word's value without changing how the script is split
# into words and commands (an option such as ``--ntasks-per-node=8`` or ``-n 16``)
_WORD_EDIT_RE = re.compile(r"[A-Za-z0-9_.:,=+ -]+")


def _views(
    text: str, script: SlurmScript, asked: dict[int, tuple[Edit, ...]], invs: list[Invocation]
) -> dict[int, _Edited | None]:
    """For each step, the script after its edits, re-parsed. Steps whose edits outside ``#SBATCH``
    lines only change a word on lines no other step edits share one parse of the script with all
    of their edits made: such an edit changes its own command's arguments and nothing another step
    reads, which the shared parse confirms (every edit became its step's option as intended, and
    the script has the same errors, assignments and variables as without those edits); otherwise
    each step gets its own parse."""
    directive_lines = {d.line for d in script.directive_list}
    groups: dict[tuple[Edit, ...], list[int]] = {}
    for k, edits in asked.items():
        groups.setdefault(tuple(e for e in edits if e[0] in directive_lines), []).append(k)
    views: dict[int, _Edited | None] = {}
    for shared, members in groups.items():
        own = [[e for e in asked[k] if e[0] not in directive_lines] for k in members]
        combined = _combined(text, shared, own, [invs[k] for k in members]) if len(members) > 1 and any(own) else None
        for k in members:
            views[k] = combined if combined is not None else _edited(text, asked[k])
    return views


def _combined(text: str, shared: tuple[Edit, ...], own: list[list[Edit]], invs: list[Invocation]) -> _Edited | None:
    """One parse for several steps' word edits (``own``: each step's, in order; see :func:`_views`);
    None when they may interact."""
    lines = [line for edits in own for line in {e[0] for e in edits}]
    if len(set(lines)) != len(lines):
        return None  # two steps edit one line
    flat = tuple(e for edits in own for e in edits)
    if not all(_WORD_EDIT_RE.fullmatch(e[2]) and _WORD_EDIT_RE.fullmatch(e[3]) for e in flat):
        return None
    base = _edited(text, shared)
    combined = _edited(text, shared + flat)
    if base is None or combined is None:
        return None
    a, b = base.script, combined.script
    if (a.errors, a.assignments, a.variables, len(a.invocations)) != (
        b.errors,
        b.assignments,
        b.variables,
        len(b.invocations),
    ):
        return None
    for inv, edits in zip(invs, own):
        now = _same_site(combined, inv)
        if edits and (now is None or not {e[3] for e in edits} <= _option_raws(now)):
            return None  # an edit landed somewhere other than its step's own option
    return combined


def _option_raws(inv: Invocation) -> set[str]:
    srun = inv.under_srun.options.values() if inv.under_srun is not None else ()
    return {o.raw for o in (*inv.options.values(), *srun)}


def _site_edits(script: SlurmScript, inv: Invocation) -> Generator[tuple[Edit, ...], _Edited | None, tuple[Edit, ...]]:
    """One step's edits, computed one at a time: yields the edits so far and is sent the script
    re-parsed after them (None when they do not apply); returns the edits, or () when one fails."""
    nproc, _ = _nproc(inv)
    want = script.gpus_per_node or nproc
    edits: tuple[Edit, ...] = ()
    current = yield edits
    if current is None:
        return ()
    cur_script, cur_inv = script, inv
    for _ in range(4):
        tasks = cur_script.tasks_per_node(cur_inv.under_srun)
        srun = cur_inv.under_srun
        now_nproc, nproc_opt = _nproc(cur_inv)
        nodes = cur_script.nodes
        step: tuple[int, str, str] | None = None
        if tasks != 1:
            _, pos, raw, literal = _tasks_source(cur_script, cur_inv)
            if pos is None or literal is None:
                return ()
            name = "ntasks" if "ntasks-per-node" not in raw and "ntasks_per_node" not in raw else None
            if name == "ntasks" and nodes is None:
                return ()
            value = str(nodes) if name == "ntasks" else "1"
            step = (pos.script_line, raw, raw[: len(raw) - len(literal)] + value)
        elif (
            srun is not None
            and srun.option("ntasks") is not None
            and nodes is not None
            and srun.int_option("ntasks") != nodes
        ):
            opt = srun.option("ntasks")  # srun -n must shrink to one task per node as well
            if opt.value is None or not opt.raw.endswith(opt.value):
                return ()
            step = (opt.position.script_line, opt.raw, opt.raw[: len(opt.raw) - len(opt.value)] + str(nodes))
        elif (
            want is not None
            and now_nproc != want
            and nproc_opt is not None
            and nproc_opt.value is not None
            and inv.launcher in ("torchrun", "deepspeed")
        ):  # accelerate counts processes per job
            raw = nproc_opt.raw
            new = raw[: len(raw) - len(nproc_opt.value)] + str(want) if raw.endswith(nproc_opt.value) else None
            if new is None:
                return ()
            step = ((nproc_opt.value_position or nproc_opt.position).script_line, raw, new)
        else:
            return edits
        if step is None or not step[0] or step[1] == step[2]:
            return ()
        edit = _edit_on_line(current, step[0], step[1], step[2])
        if edit is None:
            return ()
        edits += (edit,)
        current = yield edits  # the re-parse that verifies the fixer's own result
        if current is None:
            return ()
        cur_script = current.script
        found = _same_site(current, inv)
        if found is None or cur_script.errors:
            return ()
        cur_inv = found
    return ()


# =============================================================================================
# EML806 slurm-gpu-task-mismatch
# =============================================================================================
@dataclass(frozen=True)
class NodeShape:
    """What one node of a Slurm partition offers (from a Slinky NodeSet in the run)."""

    source: str
    gpus: int | None
    cpus: int | None
    memory_mib: int | None


def _slinky_nodesets(run) -> list[Resource]:
    return [r for r in run.resources if r.group == SLINKY_GROUP and r.kind == "NodeSet"]


def _nodeset_partitions(r: Resource) -> set[str]:
    names = {r.name} if r.name else set()
    part = r.get(("spec", "partition"))
    if isinstance(part, str):
        names.add(part)
    return names


def _nodeset_instance(r: Resource) -> InstanceType | None:
    spec = r.get(("spec", "template", "spec"))
    if not isinstance(spec, dict):
        return None
    ns = spec.get("nodeSelector")
    name = ns.get(INSTANCE_TYPE_LABEL) if isinstance(ns, dict) else None
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
                if isinstance(e, dict) and e.get("key") == INSTANCE_TYPE_LABEL and e.get("operator") == "In":
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


def partition_shape(run, partition: str | None) -> NodeShape | None:
    """The node shape of ``partition`` from the one Slinky NodeSet serving it; None if unknown."""
    if not partition:
        return None
    sets = [r for r in _slinky_nodesets(run) if partition in _nodeset_partitions(r)]
    if len(sets) != 1:
        return None
    r = sets[0]
    it = _nodeset_instance(r)
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


def _directive_site(script: SlurmScript, name: str) -> tuple[ArgPosition | None, str]:
    d = script.directive(name)
    if d is None:
        return None, ""
    return ArgPosition("script", 0, d.line), d.raw


def _gpn(script: SlurmScript, inv: Invocation) -> tuple[int | None, str]:
    """GPUs per node of the step: srun's ``--gpus-per-node`` else the allocation's."""
    srun = inv.under_srun
    if srun is not None and srun.option("gpus_per_node") is not None:
        opt = srun.option("gpus_per_node")
        m = re.fullmatch(rf"(?:[A-Za-z0-9_.-]+:)?({DIGITS})", opt.resolved or "")
        return (int(m.group(1)) if m else None), f"srun {opt.raw}"
    d = script.directive("gpus_per_node") or script.directive("gres")
    return script.gpus_per_node, (f"#SBATCH {d.raw}, line {d.line}" if d else "")


def _step_nodes(script: SlurmScript, inv: Invocation) -> tuple[int | None, str]:
    srun = inv.under_srun
    if srun is not None and srun.option("nodes") is not None:
        opt = srun.option("nodes")
        return srun.int_option("nodes"), f"srun {opt.raw}"
    d = script.directive("nodes")
    return script.nodes, (f"#SBATCH {d.raw}, line {d.line}" if d else "")


def slurm_gpu_task_mismatch(ctx, src: SourceFile):
    if src.kind != "slurm" or not isinstance(src.text, str):
        return
    script = slurm_of(src.text)
    yield from _launcher_mismatches(ctx, src, script)
    shape = partition_shape(ctx.run, script.partition)
    if shape is not None:
        yield from _shape_mismatches(ctx, src, script, shape)


def _launcher_mismatches(ctx, src: SourceFile, script: SlurmScript):
    for site in slurm_sites(src, script):
        inv = site.inv
        if inv.under_srun is None:
            continue
        tasks = script.tasks_per_node(inv.under_srun)
        gpn, gpn_desc = _gpn(script, inv)
        nodes, nodes_desc = _step_nodes(script, inv)
        if inv.launcher in PER_NODE_LAUNCHERS:
            if tasks != 1:
                continue  # EML805's business: the count per node is multiplied anyway
            nproc, opt = _nproc(inv)
            if nproc is not None and gpn and nproc != gpn:
                flag = opt.raw.split("=")[0] if opt else "nproc"
                effect = (
                    "more processes than GPUs: ranks share or fail to find a device"
                    if nproc > gpn
                    else f"{gpn - nproc} allocated GPUs per node stay idle"
                )
                yield site.report(
                    ctx,
                    opt.value_position or opt.position,
                    opt.raw,
                    f"{inv.launcher} {flag}={nproc} starts {nproc} processes per node but the job "
                    f"gets {gpn} GPUs per node ({gpn_desc}): {effect}",
                )
            nn_names = {"torchrun": ("nnodes",), "deepspeed": ("num_nodes",), "accelerate": ("num_machines",)}[
                inv.launcher
            ]
            nn, nn_opt = _int_opt(inv, *nn_names)  # an elastic range (2:4) is no int: silent
            if nn is not None and nodes is not None and nn != nodes:
                yield site.report(
                    ctx,
                    nn_opt.value_position or nn_opt.position,
                    nn_opt.raw,
                    f"{inv.launcher} {nn_opt.raw.split('=')[0]}={nn} but the step runs on {nodes} "
                    f"nodes ({nodes_desc}): the rendezvous "
                    + (
                        "waits forever for nodes that never come"
                        if nn > nodes
                        else "closes before every node has joined"
                    ),
                )
        elif inv.launcher == "python" and tasks is not None and gpn and tasks > gpn:
            desc, pos, raw, _ = _tasks_source(script, inv)
            yield site.report(
                ctx,
                pos,
                raw,
                f"srun starts {tasks} Python processes per node ({desc}) but the job gets "
                f"{gpn} GPUs per node ({gpn_desc}): more ranks than GPUs",
            )


def _shape_mismatches(ctx, src: SourceFile, script: SlurmScript, shape: NodeShape):
    where = f"partition {script.partition!r} ({shape.source})"
    gpn = script.gpus_per_node
    if gpn is not None and shape.gpus is not None and gpn > shape.gpus:
        pos, raw = (
            _directive_site(script, "gpus_per_node")
            if script.directive("gpus_per_node")
            else _directive_site(script, "gres")
        )
        yield ctx.report_file(
            src,
            *slurm_line_col(src, pos, raw),
            f"the job asks for {gpn} GPUs per node but nodes of {where} have {shape.gpus}: it stays pending forever",
        )
    tpn = script.ntasks_per_node if script.directive("ntasks_per_node") else None
    cpt = script.cpus_per_task
    if tpn is not None and cpt is not None and shape.cpus is not None and tpn * cpt > shape.cpus:
        pos, raw = _directive_site(script, "cpus_per_task")
        yield ctx.report_file(
            src,
            *slurm_line_col(src, pos, raw),
            f"{tpn} task{'s' if tpn != 1 else ''} per node x {cpt} CPUs per task = {tpn * cpt} CPUs per node, but nodes "
            f"of {where} have {shape.cpus}: the job stays pending forever",
        )
    mem = script.mem_mb
    if mem is not None and mem > 0 and shape.memory_mib is not None and mem > shape.memory_mib:
        pos, raw = _directive_site(script, "mem")
        yield ctx.report_file(
            src,
            *slurm_line_col(src, pos, raw),
            f"{raw} asks for {mem} MiB per node but nodes of {where} have {shape.memory_mib} MiB: "
            "the job stays pending forever",
        )


# =============================================================================================
# EML807 mutable-image
# =============================================================================================
def image_mutability(image: str) -> str | None:
    """Why an image reference is mutable (``"uses the tag latest"``, ``"has no tag"``), or None
    when it is pinned (a non-latest tag or a digest) or not a literal reference."""
    ref = image.strip()
    if not ref or any(ch in ref for ch in "$<>{}") or any(ch.isspace() for ch in ref):
        return None  # templated or a placeholder
    repo = ref.split("/", 1)[1] if "/" in ref and _is_registry(ref.split("/", 1)[0]) else ref
    if repo.split("@")[0].rsplit(":", 1)[0] != repo.split("@")[0].rsplit(":", 1)[0].lower():
        return None  # repository names are lowercase: IMG_PLACEHOLDER is no image reference
    if "@" in ref:
        return None  # digest-pinned (a tag beside a digest is ignored by the runtime)
    last = ref.rsplit("/", 1)[-1]
    if ":" in last:
        tag = last.rsplit(":", 1)[1]
        return "uses the mutable tag latest" if tag == "latest" else None
    return "has no tag (the runtime pulls :latest)"


def _is_registry(first: str) -> bool:
    return "." in first or ":" in first or first == "localhost"


def mutable_image(ctx, run):
    for t in run.templates:
        if not t.is_training or not ctx.judges(t):
            continue  # idle, burn-in, serving and benchmark pods are not training images
        for c in t.init_containers + t.containers:
            image = c.image
            why = image_mutability(image) if image is not None else None
            if why is None:
                continue
            kind = "init container" if c.init else "container"
            yield ctx.report(
                t.resource,
                c.path + ("image",),
                f"image {image!r} of {kind} {c.name!r} ({t.role} pods) {why}: pods of one job and "
                "every restart can run a different build; pin a version tag, or better a digest",
            )
    for r in run.of_kind("TrainJob"):
        image = r.get(("spec", "trainer", "image"))
        why = image_mutability(image) if isinstance(image, str) else None
        if why is not None:
            yield ctx.report(
                r,
                ("spec", "trainer", "image"),
                f"trainer image {image!r} {why}: nodes of one job and every restart can run a different build; "
                "pin a version tag, or better a digest",
            )


# =============================================================================================
# EML808 collective-restart-policy
# =============================================================================================
DEFAULT_BACKOFF_LIMIT = 6
_RESTART_EVENTS = frozenset({"PodFailed", "PodEvicted", "*"})


def _volcano_restarts_job(w: Workload) -> bool:
    policies: list = []
    p = w.resource.get(("spec", "policies"))
    if isinstance(p, list):
        policies += p
    tasks = w.resource.get(("spec", "tasks"))
    if isinstance(tasks, list):
        for task in tasks:
            if isinstance(task, dict) and isinstance(task.get("policies"), list):
                policies += task["policies"]
    for pol in policies:
        if not isinstance(pol, dict) or pol.get("action") != "RestartJob":
            continue
        events = set()
        if isinstance(pol.get("event"), str):
            events.add(pol["event"])
        if isinstance(pol.get("events"), list):
            events.update(str(e) for e in pol["events"])
        if events & _RESTART_EVENTS:
            return True
    return False


def _elastic_torchrun(w: Workload) -> bool:
    for t in w.collective_templates:
        for c in t.containers:
            for inv in container_invocations(c):
                if inv.launcher != "torchrun":
                    continue
                restarts = inv.option("max_restarts")
                nn = inv.option("nnodes")
                if (restarts is not None and (restarts.int_value() or 0) > 0) or (
                    nn is not None and nn.resolved is not None and ":" in nn.resolved
                ):
                    return True
    return False


_MPI_WORDS = re.compile(r"\b(mpirun|mpiexec|horovodrun)\b")


def _mpi_launched(w: Workload) -> bool:
    """One pod starts every rank with mpirun over ssh (Volcano ssh/svc plugins, an MPI launcher
    task): restarting that pod re-runs mpirun, which restarts the whole collective."""
    return any(
        _MPI_WORDS.search(container_text(c)) or any(i.launcher == "mpirun" for i in container_invocations(c))
        for t in w.templates
        for c in t.containers
    )


def _int_or_none(v: object) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def collective_restart_policy(ctx, w: Workload):
    if w.operator_managed or not w.is_multi_pod:
        return
    if not (w.is_batch_job or w.is_volcano_job or w.kind == "JobSet") or not w.is_collective:
        return
    if w.is_volcano_job and _volcano_restarts_job(w):
        return
    if w.kind == "JobSet" and isinstance(w.resource.get(("spec", "failurePolicy")), dict):
        return
    if _elastic_torchrun(w) or _mpi_launched(w):
        return
    try:
        limit = int(ctx.options["max-backoff-limit"])
    except (TypeError, ValueError):
        limit = 0
    size = w.collective_size
    seen: set[DocPath] = set()
    for t in w.collective_templates:
        policy = t.spec.get("restartPolicy")
        if policy in ("OnFailure", "Always"):
            path = t.spec_path + ("restartPolicy",)
            if path in seen:
                continue
            seen.add(path)
            yield ctx.report(
                w.resource,
                path,
                f"restartPolicy {policy} restarts one failed container of the {size}-pod collective in place "
                f"while its peers keep waiting in (or time out of) the old communicator; {_remedy(w)}",
            )
            continue
        if w.is_volcano_job:
            continue
        job_path = t.path[:-1]
        job = w.resource.get(job_path)
        if not isinstance(job, dict) or isinstance(job.get("podFailurePolicy"), dict):
            continue
        explicit = _int_or_none(job.get("backoffLimit"))
        backoff = DEFAULT_BACKOFF_LIMIT if "backoffLimit" not in job else explicit
        if backoff is None or backoff <= limit:
            continue
        path = job_path + ("backoffLimit",) if "backoffLimit" in job else job_path
        if path in seen:
            continue
        seen.add(path)
        stated = f"backoffLimit {backoff}" if "backoffLimit" in job else f"backoffLimit (default {backoff})"
        yield ctx.report(
            w.resource,
            path,
            f"{stated}, above max-backoff-limit {limit}, recreates failed pods one at a time ({backoff} times) "
            "while the other pods of the "
            f"{size}-pod collective keep running against a communicator that lost a rank; {_remedy(w)}",
        )


def _remedy(w: Workload) -> str:
    if w.is_volcano_job:
        return "add a job policy {event: PodFailed, action: RestartJob} (and PodEvicted)"
    if w.kind == "JobSet":
        return "set spec.failurePolicy (maxRestarts) so the whole JobSet restarts, with child backoffLimit: 0"
    return (
        "use a podFailurePolicy with restartPolicy: Never, backoffLimit: 0 and an outer retry, "
        "a JobSet with failurePolicy, or elastic torchrun (--max_restarts with c10d rendezvous)"
    )


# =============================================================================================
# DeepSpeed configs of the run (EML809, EML005)
# =============================================================================================
_DS_NAME = re.compile(r"^ds_config|deepspeed", re.IGNORECASE)


def ds_named(name: str) -> bool:
    """File names that say "DeepSpeed config": ``ds_config*`` or ``*deepspeed*``."""
    return bool(_DS_NAME.search(posixpath.basename(name)))


def _first_doc(f: SourceFile) -> object:
    return f.documents[0].data if f.documents else None


def is_deepspeed_file(f: SourceFile) -> bool:
    return f.kind == "json" and isinstance(f.text, str) and (ds_named(f.path) or looks_like_deepspeed(_first_doc(f)))


def json_files(run) -> list[SourceFile]:
    return [f for f in run.files if f.kind == "json" and isinstance(f.text, str)]


def _norm(path: str) -> str:
    return posixpath.normpath(path.replace("\\", "/"))


def _under(path: str, base: str) -> bool:
    d = posixpath.dirname(_norm(path))
    base = _norm(base) if base else "."
    return base == "." or d == base or d.startswith(base.rstrip("/") + "/")


def resolve_file_ref(run, ref: str, base_dir: str, allow_only: bool) -> tuple[SourceFile, str] | None:
    """The JSON file of the run a path reference means (see the module docstring): (file, how)
    with ``how`` one of ``exact``, ``basename``, ``only``."""
    files = json_files(run)
    target = _norm(ref if ref.startswith("/") else posixpath.join(base_dir or ".", ref))
    for f in files:
        if _norm(f.path) == target:
            return f, "exact"
    base = posixpath.basename(ref)
    same = [f for f in files if posixpath.basename(_norm(f.path)) == base and _under(f.path, base_dir)]
    if len(same) == 1:
        return same[0], "basename"
    if allow_only:
        local = [f for f in files if is_deepspeed_file(f) and _under(f.path, base_dir)]
        if len(local) == 1:
            return local[0], "only"
    return None


def mounted_keys(run, c: Container) -> dict[str, MountedFile]:
    """Absolute path -> ConfigMap key of every ConfigMap file the container mounts."""
    return {_norm(k): v for k, v in mounted_files(run, c).items()}


def mounted_configmaps(run) -> list[Resource]:
    """ConfigMaps of the run that some pod template mounts (volume or projected source)."""
    out: dict[int, Resource] = {}
    for t in run.templates:
        for _, v in t.volumes:
            for ref in configmap_refs(v):
                cm = find_configmap(run, ref.get("name"), t.resource.namespace)
                if cm is not None:
                    out[id(cm)] = cm
    return list(out.values())


@dataclass(frozen=True, eq=False)
class DSConfig:
    """A parsed DeepSpeed config and where it lives: a JSON file or a ConfigMap key."""

    config: DeepSpeedConfig
    text: str
    file: SourceFile | None = None
    mounted: MountedFile | None = None
    how: str = "exact"

    @property
    def ident(self) -> tuple:
        if self.file is not None:
            return ("file", self.file.path)
        return ("cm", id(self.mounted.configmap), self.mounted.key)

    @property
    def name(self) -> str:
        if self.file is not None:
            return self.file.path
        cm = self.mounted.configmap
        return f"ConfigMap {cm.ref.display().split(' ', 1)[1]} key {self.mounted.key}"

    def key_line(self, dotted: str) -> int | None:
        return self.config.line_of(dotted)


def ds_config_for(run, site: Site, ref: Option) -> DSConfig | None:
    """The DeepSpeed config a launcher's ``--deepspeed PATH`` names, when it is in the run."""
    path = ref.resolved
    if not path or "$" in path:
        return None
    if site.container is not None:
        c = site.container
        files = mounted_keys(run, c)
        hit = None
        if path.startswith("/"):
            hit = files.get(_norm(path))
        else:
            wd = c.data.get("workingDir")
            if isinstance(wd, str) and wd.startswith("/"):
                hit = files.get(_norm(posixpath.join(wd, path)))
            if hit is None:
                tail = "/" + _norm(path)
                matches = [f for p, f in files.items() if p.endswith(tail)]
                hit = matches[0] if len(matches) == 1 else None
        if hit is not None:
            text = hit.text
            cfg = deepspeed_of(text, hit.key) if text is not None else None
            return DSConfig(cfg, text, mounted=hit) if isinstance(cfg, DeepSpeedConfig) else None
        base_dir = posixpath.dirname(_norm(c.template.resource.doc.file.path))
        found = resolve_file_ref(run, path, base_dir, allow_only=False)
    else:
        base_dir = posixpath.dirname(_norm(site.src.path))
        found = resolve_file_ref(run, path, base_dir, allow_only=True)
    if found is None:
        return None
    f, how = found
    cfg = deepspeed_of(f.text, f.path)
    return DSConfig(cfg, f.text, file=f, how=how) if isinstance(cfg, DeepSpeedConfig) else None


# =============================================================================================
# EML809 deepspeed-args-mismatch
# =============================================================================================
_MICRO_ARGS = ("per_device_train_batch_size", "micro_batch_size", "train_micro_batch_size_per_gpu")
_GLOBAL_ARGS = ("global_batch_size",)


def world_size(site: Site) -> int | None:
    """Processes of the launch when literally known (torchrun nnodes x nproc, deepspeed
    num_nodes x num_gpus, accelerate num_processes, srun python tasks)."""
    inv = site.inv
    if inv.launcher == "torchrun":
        nn, nn_opt = _int_opt(inv, "nnodes")
        np_, _ = _int_opt(inv, "nproc_per_node")
        if nn_opt is None and site.script is not None:
            nn = 1  # torchrun's default; in a pod an operator may inject PET_NNODES instead
        return nn * np_ if nn and np_ else None
    if inv.launcher == "deepspeed":
        nn, _ = _int_opt(inv, "num_nodes")
        ng, _ = _int_opt(inv, "num_gpus")
        return nn * ng if nn and ng else None
    if inv.launcher == "accelerate":
        return _int_opt(inv, "num_processes")[0]
    if inv.launcher == "python" and site.script is not None and inv.under_srun is not None:
        tasks = site.script.tasks_per_node(inv.under_srun)
        nodes = inv.under_srun.int_option("nodes") if inv.under_srun.option("nodes") else site.script.nodes
        return tasks * nodes if tasks and nodes else None
    return None


def _hf_style(site: Site, ref: Option) -> bool:
    """Is the config read by the HF Trainer / accelerate, which fill in ``"auto"``? Plain
    DeepSpeed (``--deepspeed_config FILE``) rejects ``"auto"``, so the fix is only offered then."""
    return ref.name in ("deepspeed", "deepspeed_config_file") or site.inv.launcher == "accelerate"


@dataclass(frozen=True)
class Mismatch:
    """One disagreement: the config key the finding points at, the message (without the
    config's own location), and the keys the fix sets (dotted key, new value)."""

    key: str
    message: str
    sets: tuple[tuple[str, object], ...]
    arg: Option | None = None
    consequence: str = (
        "the HF Trainer stops with a mismatch error, and scripts that do not check silently "
        "train with the config's value"
    )


def _launcher_value(
    site: Site, names: tuple[str, ...], launcher_names: tuple[str, ...] = ()
) -> tuple[int | None, Option | None]:
    v, opt = _script_int(site.inv, *names)
    if opt is None and launcher_names:
        v, opt = _int_opt(site.inv, *launcher_names)
    return v, opt


def _flag_text(site: Site, opt: Option) -> str:
    where = site.describe(opt.value_position or opt.position)
    return opt.raw + (f" at {where}" if where else "")


def deepspeed_mismatches(site: Site, ds: DSConfig) -> list[Mismatch]:
    """Every way the launcher's literal arguments disagree with the config's literal values."""
    cfg = ds.config
    out: list[Mismatch] = []
    ga_cfg = cfg.grad_accum()
    ga_arg, ga_opt = _launcher_value(site, ("gradient_accumulation_steps",), ("gradient_accumulation_steps",))
    if ga_cfg is not None and ga_arg is not None and ga_cfg != ga_arg:
        out.append(
            Mismatch(
                "gradient_accumulation_steps",
                f"gradient_accumulation_steps is {ga_cfg} but {site.where} passes {_flag_text(site, ga_opt)}",
                (("gradient_accumulation_steps", "auto"),),
                ga_opt,
            )
        )
    mb_cfg = cfg.micro_batch()
    mb_arg, mb_opt = _launcher_value(site, _MICRO_ARGS)
    if mb_cfg is not None and mb_arg is not None and mb_cfg != mb_arg:
        out.append(
            Mismatch(
                "train_micro_batch_size_per_gpu",
                f"train_micro_batch_size_per_gpu is {mb_cfg} but {site.where} passes {_flag_text(site, mb_opt)}",
                (("train_micro_batch_size_per_gpu", "auto"),),
                mb_opt,
            )
        )
    out.extend(_precision_mismatch(site, ds))
    tb = cfg.train_batch()
    if tb is None:
        return out
    gb_arg, gb_opt = _launcher_value(site, _GLOBAL_ARGS)
    if gb_arg is not None and gb_arg != tb:
        out.append(
            Mismatch(
                "train_batch_size",
                f"train_batch_size is {tb} but {site.where} passes {_flag_text(site, gb_opt)}",
                (("train_batch_size", "auto"),),
                gb_opt,
            )
        )
        return out
    # "auto" values are what HF / accelerate fill in from the launcher's arguments
    micro = mb_cfg if mb_cfg is not None else (mb_arg if cfg.train_micro_batch_size_per_gpu == "auto" else None)
    ga = ga_cfg if ga_cfg is not None else (ga_arg if cfg.gradient_accumulation_steps == "auto" else None)
    world = world_size(site)
    if micro and ga and world and tb != micro * ga * world:
        out.append(
            Mismatch(
                "train_batch_size",
                f"train_batch_size is {tb} but micro batch {micro} x gradient accumulation {ga} x "
                f"{world} processes of {site.where} = {micro * ga * world}",
                (("train_batch_size", "auto"),),
                consequence="DeepSpeed refuses to start: train_batch_size must equal micro batch x "
                "accumulation x world size",
            )
        )
    return out


def _enabled_literal(cfg: DeepSpeedConfig, name: str) -> tuple[bool | None, str | None]:
    """Literal ``enabled`` of a precision block (bf16 also via its alias bfloat16) and its key."""
    for key in ("bf16", "bfloat16") if name == "bf16" else (name,):
        block = getattr(cfg, key, None)
        if block is not None and isinstance(block.enabled, bool):
            return block.enabled, key
    return None, None


def _has_block(cfg: DeepSpeedConfig, name: str) -> bool:
    return any(getattr(cfg, k, None) is not None for k in (("bf16", "bfloat16") if name == "bf16" else (name,)))


def _precision_mismatch(site: Site, ds: DSConfig) -> list[Mismatch]:
    """The launcher trains in one half precision (``--bf16``, accelerate ``--mixed_precision``)
    and the config literally enables the other, or disables the one the launcher wants."""
    wanted = site.inv.precision() & {"fp16", "bf16"}
    if len(wanted) != 1:
        return []  # none (unknown trainer: silent) or both (EML403's business)
    want = next(iter(wanted))
    wrong: list[tuple[str, bool]] = []
    for name in ("fp16", "bf16"):
        have, key = _enabled_literal(ds.config, name)
        if have is not None and key is not None and have != (name == want):
            wrong.append((key, have))
    if not wrong:
        return []
    flag = (
        site.inv.script_flag(want)
        or site.inv.script_flag("precision")
        or site.inv.script_flag("mixed_precision")
        or site.inv.option("mixed_precision")
    )
    sets: list[tuple[str, object]] = [(f"{k}.enabled", "auto") for k, _ in wrong]
    if not _has_block(ds.config, want):
        sets.append((f"{want}.enabled", "auto"))
    text = ", ".join(f"{k}.enabled is {'true' if v else 'false'}" for k, v in wrong)
    arg = _flag_text(site, flag) if flag is not None else want
    return [Mismatch(f"{wrong[0][0]}.enabled", f"{text} but {site.where} trains in {want} ({arg})", tuple(sets), flag)]


def _config_only(ds: DSConfig) -> Mismatch | None:
    cfg = ds.config
    tb, mb, ga = cfg.train_batch(), cfg.micro_batch(), cfg.grad_accum()
    if tb and mb and ga and tb % (mb * ga):
        return Mismatch(
            "train_batch_size",
            f"train_batch_size {tb} is not a multiple of train_micro_batch_size_per_gpu {mb} x "
            f"gradient_accumulation_steps {ga} = {mb * ga}, so no world size satisfies "
            "train_batch_size = micro x accumulation x world size",
            (),
        )
    return None


def _text_set(text: str, cfg: DeepSpeedConfig, dotted: str, value: object, is_json: bool) -> str | None:
    """``text`` with the existing key ``dotted`` set to ``value``, edited on the key's line only
    (the block scalar of a ConfigMap keeps its layout); None when that is not possible."""
    line = cfg.line_of(dotted)
    if line is None:
        return None
    key = dotted.rsplit(".", 1)[-1]
    lines = text.split("\n")
    if not 0 < line <= len(lines):
        return None
    src = lines[line - 1]
    if is_json:
        pat = re.compile(
            r'("' + re.escape(key) + r'"\s*:\s*)(true|false|null|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|"[^"]*")'
        )
        new_value = json.dumps(value)
    else:
        pat = re.compile(r"(^\s*['\"]?" + re.escape(key) + r"['\"]?\s*:\s*)([^#\s]+)")
        new_value = str(value)
    if len(pat.findall(src)) != 1:
        return None
    lines[line - 1] = pat.sub(lambda m: m.group(1) + new_value, src, count=1)
    return "\n".join(lines)


def _fix_title(ds: DSConfig, m: Mismatch) -> str:
    return f'Set {", ".join(k for k, _ in m.sets)} to "auto" in {ds.name}'


def _configmap_fix(ds: DSConfig, m: Mismatch) -> Fix | None:
    """The ConfigMap value with each key set to "auto" by a one-line edit, verified by parsing."""
    key = ds.mounted.key
    is_json = not key.lower().endswith((".yaml", ".yml"))
    text, cfg = ds.text, ds.config
    for dotted, value in m.sets:
        new = _text_set(text, cfg, dotted, value, is_json)
        parsed = deepspeed_of(new, key) if new is not None else None
        if not isinstance(parsed, DeepSpeedConfig):
            return None
        text, cfg = new, parsed
    return Fix(_fix_title(ds, m), (SetValue(("data", key), text),), Applicability.SAFE)


def _file_fix(ds: DSConfig, m: Mismatch) -> Fix:
    ops: tuple[FixOp, ...] = tuple(SetValue(tuple(k.split(".")), v) for k, v in m.sets)
    return Fix(_fix_title(ds, m), ops, Applicability.SAFE)


def _report_ds(ctx, ds: DSConfig, m: Mismatch, head: str, tail: str, fixable: bool) -> Finding:
    """Report at the config key: its line in a JSON file; the ConfigMap data key otherwise (a
    line inside a block scalar is no document path), naming the line inside the value."""
    fix = None
    if fixable and m.sets:
        fix = _file_fix(ds, m) if ds.file is not None else _configmap_fix(ds, m)
    line = ds.key_line(m.key)
    if ds.file is not None:
        line = line or 1
        text = ds.file.lines[line - 1] if 0 < line <= len(ds.file.lines) else ""
        leaf = '"' + m.key.rsplit(".", 1)[-1] + '"'
        col = text.find(leaf) + 1 if leaf in text else 1
        return ctx.report_file(ds.file, line, col, head + tail, fix=fix)
    at = f" (line {line} of key {ds.mounted.key!r})" if line is not None else f" (key {ds.mounted.key!r})"
    return ctx.report(ds.mounted.configmap, ("data", ds.mounted.key), head + at + tail, fix=fix)


def deepspeed_args_mismatch(ctx, run):
    grouped: dict[tuple, list[tuple[Site, DSConfig, Mismatch, bool]]] = {}
    configs: dict[tuple, DSConfig] = {}
    for site in all_sites(run):
        ref = site.inv.deepspeed_config()
        if ref is None:
            continue
        ds = ds_config_for(run, site, ref)
        if ds is None:
            continue
        configs.setdefault(ds.ident, ds)
        for m in deepspeed_mismatches(site, ds):
            key = (ds.ident, m.key, m.message.split(" but ", 1)[0], m.arg.resolved if m.arg else None)
            grouped.setdefault(key, []).append((site, ds, m, _hf_style(site, ref)))
    for entries in grouped.values():
        site, ds, m, _ = entries[0]
        more = f" (+{len(entries) - 1} more launcher{'s' if len(entries) > 2 else ''})" if len(entries) > 1 else ""
        ref = site.inv.deepspeed_config()
        via = ""
        if ds.how == "basename":
            via = f" (--deepspeed {ref.resolved} matched by file name)"
        elif ds.how == "only":
            via = f" (--deepspeed {ref.resolved} matched to the only DeepSpeed config beside the script)"
        yield _report_ds(
            ctx,
            ds,
            m,
            "DeepSpeed config",
            f" disagrees with its launcher{via}: {m.message}{more}; {m.consequence}",
            all(e[3] for e in entries),
        )
    for ds in _run_ds_configs(run):
        configs.setdefault(ds.ident, ds)
    for ds in configs.values():
        m = _config_only(ds)
        if m is not None:
            yield _report_ds(
                ctx, ds, m, "DeepSpeed config", f" is inconsistent: {m.message}; DeepSpeed refuses to start", False
            )


def _run_ds_configs(run) -> list[DSConfig]:
    """Every parseable DeepSpeed config of the run: JSON files and mounted ConfigMap keys."""
    out: list[DSConfig] = []
    for f in json_files(run):
        if not is_deepspeed_file(f):
            continue
        cfg = deepspeed_of(f.text, f.path)
        if isinstance(cfg, DeepSpeedConfig):
            out.append(DSConfig(cfg, f.text, file=f))
    for cm, key, text, _ in _configmap_ds_candidates(run):
        cfg = deepspeed_of(text, key)
        if isinstance(cfg, DeepSpeedConfig):
            out.append(DSConfig(cfg, text, mounted=MountedFile(cm, key)))
    return out


# =============================================================================================
# EML810 ephemeral-checkpoints
# =============================================================================================
CHECKPOINT_ARGS = ("output_dir", "checkpoint_dir", "save_dir", "ckpt_dir", "save")


def _mount_for(c: Container, directory: str) -> tuple[int, dict] | None:
    """The volume mount holding ``directory`` (longest mountPath prefix)."""
    best: tuple[int, dict] | None = None
    best_len = -1
    for i, m in c.volume_mounts:
        mp = str(m.get("mountPath", "")).rstrip("/") or "/"
        if directory == mp or directory.startswith(mp.rstrip("/") + "/"):
            if len(mp) > best_len:
                best, best_len = (i, m), len(mp)
    return best


def _shared_with_other_container(t: PodTemplate, c: Container, volume: str) -> bool:
    return any(
        o is not c and any(m.get("name") == volume for _, m in o.volume_mounts)
        for o in t.containers + t.init_containers
    )


def _rank_containers(t: PodTemplate, c: Container) -> list[tuple[PodTemplate, Container]]:
    """Where the processes ``c`` starts write their files: ``c`` itself, or for an MPIJob launcher
    (workload class ``launcher``: mpirun starts the ranks over ssh) the workers' first containers."""
    if classify_template(t).cls is not WorkloadClass.LAUNCHER:
        return [(t, c)]
    return [(u, u.containers[0]) for u in t.workload.templates if u is not t and u.containers]


def ephemeral_checkpoints(ctx, t: PodTemplate):
    for c in t.containers:
        wd = c.data.get("workingDir")
        seen: set[str] = set()
        hosts = _rank_containers(t, c)
        if not hosts:
            continue
        for site in container_sites(c):
            for name in CHECKPOINT_ARGS:
                opt = site.inv.script_flag(name)
                if opt is None or not opt.resolved or "$" in opt.resolved:
                    continue
                directory = opt.resolved.strip()
                if not directory.startswith("/"):
                    if name == "save" or not (isinstance(wd, str) and wd.startswith("/")):
                        continue
                    directory = posixpath.join(wd, directory)
                directory = _norm(directory)
                if directory in seen:
                    continue
                seen.add(directory)
                flag = opt.raw.split("=", 1)[0].split()[0]
                problems = [_ephemeral_problem(u, uc, directory) for u, uc in hosts]
                if any(p is None for p in problems):
                    continue  # at least one pod that runs the ranks keeps it: stay silent
                where = (
                    f"container {c.name!r}"
                    if hosts == [(t, c)]
                    else (
                        f"the {fmt_list(sorted({u.role for u, _ in hosts}))} pods (container {hosts[0][1].name!r}), "
                        "where mpirun starts the ranks,"
                    )
                )
                yield site.report(
                    ctx, opt.value_position or opt.position, opt.raw, f"{flag} {directory} of {where} {problems[0]}"
                )


def _ephemeral_problem(t: PodTemplate, c: Container, directory: str) -> str | None:
    mount = _mount_for(c, directory)
    if mount is None:
        return (
            "is on no volume: checkpoints go to the container's own filesystem and are lost when the "
            "container restarts or the pod is rescheduled; mount a PersistentVolumeClaim there"
        )
    _, m = mount
    vname = m.get("name")
    vol = t.volume(vname) if isinstance(vname, str) else None
    if vol is None:
        return None  # a dangling mount is EML703's business
    _, v = vol
    if "emptyDir" in v:
        kind = (
            "a memory-backed emptyDir"
            if isinstance(v.get("emptyDir"), dict) and v["emptyDir"].get("medium") == "Memory"
            else "an emptyDir"
        )
    elif "ephemeral" in v:
        kind = "a generic ephemeral volume"
    else:
        return None
    if _shared_with_other_container(t, c, vname):
        return None  # a sidecar mounting it too presumably uploads the checkpoints
    return (
        f"is on {kind} (volume {vname!r} at {m.get('mountPath')}), which is deleted with the pod: a "
        "rescheduled or retried pod cannot resume from its checkpoints; use a PersistentVolumeClaim"
    )


# =============================================================================================
# EML005 launch-file-invalid
# =============================================================================================
def _configmap_ds_candidates(run) -> list[tuple[Resource, str, str, object]]:
    """(ConfigMap, key, text, loosely parsed data or None) of mounted keys that look like
    DeepSpeed configs by name (``ds_config*``, ``*deepspeed*``) or by content."""
    out = []
    for cm in mounted_configmaps(run):
        data = cm.get(("data",))
        if not isinstance(data, dict):
            continue
        for key, text in data.items():
            if not isinstance(key, str) or not isinstance(text, str):
                continue
            loose = _loose_parse(text)
            if ds_named(key) or looks_like_deepspeed(loose):
                out.append((cm, key, text, loose))
    return out


@lru_cache(maxsize=1024)
def _loose_parse_cached(text: str) -> object:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        pass
    try:
        return load_data(text)  # the loader's limits (aliases, depth, nodes): this is a user's ConfigMap
    except YAMLLoadError:
        return None


def _loose_parse(text: str) -> object:
    """JSON, else YAML; None when neither (for 'does this look like DeepSpeed' only)."""
    return _loose_parse_cached(text)


def _referenced_json(run) -> dict[str, str]:
    """JSON files of the run that some launcher names as its DeepSpeed config (exact path or
    file name match only) -> the reference as written."""
    out: dict[str, str] = {}
    for site in all_sites(run):
        ref = site.inv.deepspeed_config()
        if ref is None or not ref.resolved or "$" in ref.resolved:
            continue
        if site.container is not None:
            if _norm(ref.resolved) in mounted_keys(run, site.container):
                continue
            base = posixpath.dirname(_norm(site.container.template.resource.doc.file.path))
        else:
            base = posixpath.dirname(_norm(site.src.path))
        found = resolve_file_ref(run, ref.resolved, base, allow_only=False)
        if found is not None:
            out.setdefault(found[0].path, ref.resolved)
    return out


def launch_file_invalid(ctx, run):
    for src, script in slurm_files(run):
        for line, msg in script.errors:
            yield ctx.report_file(src, line, _error_col(src, line, msg), f"Slurm batch script: {msg}")
    files = json_files(run)
    referenced = _referenced_json(run) if files else {}  # every launcher of the run: only for JSON files
    for f in files:
        named = ds_named(f.path) or f.path in referenced or looks_like_deepspeed(_first_doc(f))
        if not named:
            continue
        cfg = deepspeed_of(f.text, f.path)
        if isinstance(cfg, DeepSpeedConfig) or loader_rejects(f.path, f.text, f.kind):
            continue
        why = f" (named by --deepspeed {referenced[f.path]})" if f.path in referenced else ""
        yield ctx.report_file(f, cfg.line or 1, cfg.col or 1, f"DeepSpeed config{why} cannot be loaded: {cfg.message}")
    for cm, key, text, _loose in _configmap_ds_candidates(run):
        cfg = deepspeed_of(text, key)
        if isinstance(cfg, DeepSpeedConfig):
            continue
        at = f" (line {cfg.line} of the value)" if cfg.line else ""
        yield ctx.report(
            cm, ("data", key), f"DeepSpeed config in ConfigMap key {key!r} cannot be loaded{at}: {cfg.message}"
        )


def _error_col(src: SourceFile, line: int, msg: str) -> int:
    """Column of the text an error message quotes ('--nodse'), else of the line's first word."""
    lines = script_lines(src.text) if src.text else ()
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    for quoted in re.findall(r"'([^']+)'", msg):
        k = text.find(quoted)
        if k >= 0:
            return k + 1
    return len(text) - len(text.lstrip()) + 1


__all__ = [
    "collective_restart_policy",
    "completion_index_not_indexed",
    "container_invocations",
    "deepspeed_args_mismatch",
    "ephemeral_checkpoints",
    "image_mutability",
    "launch_file_invalid",
    "master_addr_self",
    "mutable_image",
    "partition_shape",
    "rendezvous_missing",
    "resolve_file_ref",
    "slurm_gpu_task_mismatch",
    "srun_launcher_multiplied",
    "text_edits_805",
    "visible_devices_override",
]
