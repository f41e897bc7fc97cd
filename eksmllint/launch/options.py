"""Launcher option tables and parsers: the options torchrun, mpirun, deepspeed and accelerate
take (canonical names, value/flag/pair kinds, aliases), how a launcher's options are read up to
its program, and how a training script's own ``--name value`` arguments are read."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from . import slurmopts
from .model import Arg, Option, canonical_name
from .programs import PROGRAMS, PYTHON_RE


@dataclass(frozen=True)
class LauncherSpec:
    """Options of an argparse-style launcher (canonical names)."""

    values: frozenset[str]
    flags: frozenset[str] = frozenset()
    pairs: frozenset[str] = frozenset()
    aliases: Mapping[str, str] = field(default_factory=dict)
    value_prefixes: tuple[str, ...] = ()
    attached_short: bool = True  # ``-r3`` (argparse); OpenMPI's single-dash long names are not

    def canon(self, written: str) -> str:
        c = canonical_name(written)
        return self.aliases.get(c, c)

    def kind(self, canon: str) -> str | None:
        if canon in self.values or (self.value_prefixes and canon.startswith(self.value_prefixes)):
            return "value"
        if canon in self.flags:
            return "flag"
        if canon in self.pairs:
            return "pair"
        return None


TORCHRUN_SPEC = LauncherSpec(
    values=frozenset(
        "nnodes nproc_per_node rdzv_backend rdzv_endpoint rdzv_id rdzv_conf max_restarts "
        "monitor_interval start_method event_log_handler role log_dir logs_specs redirects tee "
        "local_ranks_filter node_rank master_addr master_port local_addr numa_binding "
        "signals_to_handle local_rank".split()
    ),
    flags=frozenset("standalone module no_python run_path use_env virtual_local_rank".split()),
    aliases={"m": "module", "r": "redirects", "t": "tee"},
)

MPIRUN_SPEC = LauncherSpec(
    values=frozenset(
        "np npernode npersocket host hostfile bind_to map_by rank_by prefix wdir output_filename "
        "tune am app path launch_agent timeout rankfile cpus_per_proc cpus_per_rank cpu_set "
        "report_bindings_file stdin bootstrap iface personality max_vm_size x output "
        "hostlist ppn_mpich launcher".split()
    ),
    flags=frozenset(
        "allow_run_as_root oversubscribe nooversubscribe tag_output timestamp_output "
        "merge_stderr_to_stdout display_map display_allocation report_bindings verbose quiet "
        "noprefix bind_to_core bind_to_socket bynode byslot nolocal use_hwthread_cpus "
        "show_progress debug genvall genvnone l enable_recovery disable_recovery "
        "display_devel_map do_not_launch help version print_rank_map abort_on_error".split()
    ),
    pairs=frozenset("mca gmca pmixmca prtemca genv env".split()),
    aliases={
        "n": "np",
        "c": "np",
        "N": "npernode",
        "ppn": "npernode",
        "H": "host",
        "hosts": "host",
        "machinefile": "hostfile",
        "f": "hostfile",
        "rf": "rankfile",
        "wd": "wdir",
        "v": "verbose",
        "q": "quiet",
        "h": "help",
        "V": "version",
    },
    attached_short=False,
)

DEEPSPEED_SPEC = LauncherSpec(
    values=frozenset(
        "hostfile include exclude num_nodes min_elastic_nodes max_elastic_nodes num_gpus "
        "master_port master_addr node_rank launcher launcher_args autotuning bind_core_list "
        "ssh_port comment venv_script enable_each_rank_log".split()
    ),
    flags=frozenset(
        "module no_python no_local_rank no_ssh_check force_multi save_pid elastic_training "
        "bind_cores_to_rank no_ssh".split()
    ),
    aliases={"H": "hostfile", "i": "include", "e": "exclude", "num_accelerators": "num_gpus"},
)

ACCELERATE_SPEC = LauncherSpec(
    values=frozenset(
        "config_file mixed_precision num_processes num_machines machine_rank main_process_ip "
        "main_process_port rdzv_backend rdzv_conf dynamo_backend dynamo_mode "
        "num_cpu_threads_per_process gpu_ids deepspeed_config_file zero_stage "
        "offload_optimizer_device offload_param_device offload_optimizer_nvme_path "
        "offload_param_nvme_path gradient_accumulation_steps gradient_clipping zero3_init_flag "
        "zero3_save_16bit_model deepspeed_hostfile deepspeed_exclusion_filter "
        "deepspeed_inclusion_filter deepspeed_multinode_launcher main_training_function "
        "max_restarts monitor_interval tee log_dir role deepspeed_moe_layer_cls_names "
        "tpu_cluster tpu_vm env_file".split()
    ),
    flags=frozenset(
        "cpu multi_gpu tpu ipex use_xpu use_deepspeed use_fsdp use_megatron_lm same_network "
        "no_python module debug quiet dynamo_use_fullgraph dynamo_use_dynamic "
        "enable_cpu_affinity downcast_bf16 tpu_use_cluster tpu_use_sudo".split()
    ),
    aliases={"m": "module", "q": "quiet"},
    value_prefixes=("fsdp_", "megatron_lm_", "fp8_", "aws_", "dynamo_", "tpu_"),
)

#: ``ray job submit``'s own options (Ray Jobs CLI reference): the entrypoint follows ``--`` (or the
#: first positional) and runs, through a shell, in the Ray cluster of ``--address``.
RAY_JOB_SUBMIT_SPEC = LauncherSpec(
    values=frozenset(
        "address job_id submission_id runtime_env runtime_env_json metadata_json working_dir "
        "entrypoint_num_cpus entrypoint_num_gpus entrypoint_memory entrypoint_resources "
        "entrypoint_label_selector headers verify log_style log_color".split()
    ),
    flags=frozenset("no_wait verbose".split()),
    aliases={"v": "verbose"},
)

PER_NODE_SPECS = {"torchrun": TORCHRUN_SPEC, "deepspeed": DEEPSPEED_SPEC, "accelerate": ACCELERATE_SPEC}

_NUMBER_RE = re.compile(r"-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?")


def _is_number(t: str) -> bool:
    return bool(_NUMBER_RE.fullmatch(t))


def _is_program_like(t: str) -> bool:
    base = posixpath.basename(t)
    return t.endswith((".py", ".sh")) or base in PROGRAMS or bool(PYTHON_RE.match(base))


def _value_after_unknown(b: Arg) -> bool:
    """May the argument after an unknown option be that option's value?"""
    if b.opaque:
        return False
    t = b.text
    if t.startswith("-") and not _is_number(t):
        return False
    return not _is_program_like(t)


def _eq_option(name: str, a: Arg) -> Option:
    value, resolved = slurmopts.split_value(a)
    return Option(name, value, a.raw, a.position, resolved, a.position)


def _pair_option(name: str, a: Arg, b: Arg) -> Option:
    return Option(name, b.value, f"{a.raw} {b.raw}", a.position, b.resolved, b.position)


def parse_launcher_options(
    args: Sequence[Arg], i: int, spec: LauncherSpec, env: dict[str, Option]
) -> tuple[dict[str, Option], int]:
    """Options of a launcher up to its program (first positional)."""
    opts: dict[str, Option] = {}
    n = len(args)
    while i < n:
        a = args[i]
        if a.opaque:
            if a.option_like:
                i += 1
                continue
            break
        t = a.text
        if t == "--":
            i += 1
            break
        if not t.startswith("-") or t == "-" or _is_number(t):
            break
        written, eq, _ = t.partition("=")
        canon = spec.canon(written)
        kind = spec.kind(canon)
        if (
            kind is None
            and not eq
            and spec.attached_short
            and len(written) > 2
            and written[1] != "-"
            and spec.kind(spec.canon(written[:2])) == "value"
        ):
            # attached short value (argparse): ``-r3``
            short = spec.canon(written[:2])
            shown = a.value[2:]
            opts[short] = Option(short, shown, a.raw, a.position, t[2:] if a.resolved is not None else None, a.position)
            i += 1
            continue
        if canon == "x" and spec is MPIRUN_SPEC:
            if i + 1 < n:
                b = args[i + 1]
                name, beq, _ = b.text.partition("=")
                if beq:
                    val, res = slurmopts.split_value(b)
                    env[name] = Option(name, val, f"{a.raw} {b.raw}", b.position, res, b.position)
                else:
                    env[name] = Option(name, None, f"{a.raw} {b.raw}", b.position, None, None)
                i += 2
                continue
            i += 1
            continue
        if kind == "pair":
            if i + 2 < n:
                key, value_arg = args[i + 1], args[i + 2]
                opt = Option(
                    key.text,
                    value_arg.value,
                    f"{a.raw} {key.raw} {value_arg.raw}",
                    a.position,
                    value_arg.resolved,
                    value_arg.position,
                )
                if canon in ("genv", "env"):
                    env[key.text] = opt
                else:
                    opts[f"{canon}.{key.text}"] = replace(opt, name=f"{canon}.{key.text}")
            i += 3
            continue
        if eq:
            opts[canon] = _eq_option(canon, a)
            i += 1
            continue
        if kind == "flag":
            opts[canon] = Option(canon, None, a.raw, a.position)
            i += 1
            continue
        if kind == "value" or (kind is None and i + 1 < n and _value_after_unknown(args[i + 1])):
            if i + 1 < n:
                opts[canon] = _pair_option(canon, a, args[i + 1])
                i += 2
            else:
                opts[canon] = Option(canon, None, a.raw, a.position)
                i += 1
            continue
        opts[canon] = Option(canon, None, a.raw, a.position)
        i += 1
    return opts, i


def parse_script_args(args: Sequence[Arg]) -> tuple[dict[str, Option], tuple[str, ...]]:
    """Generic training-script arguments: ``--name=value``, ``--name value``, ``--flag``.

    A following argument is taken as the value unless it looks like another option
    (negative numbers are values).  Names are canonical; the last occurrence wins, as with
    argparse."""
    opts: dict[str, Option] = {}
    positionals: list[str] = []
    n = len(args)
    i = 0
    while i < n:
        a = args[i]
        if a.opaque and a.option_like:
            i += 1
            continue
        t = a.text
        if t == "--":
            positionals.extend(x.value for x in args[i + 1 :])
            break
        if not a.opaque and t.startswith("-") and len(t) > 1 and not _is_number(t):
            written, eq, _ = t.partition("=")
            canon = canonical_name(written)
            if not canon:
                positionals.append(a.value)
                i += 1
                continue
            if eq:
                opts[canon] = _eq_option(canon, a)
                i += 1
                continue
            if i + 1 < n:
                b = args[i + 1]
                bt = b.text
                if not (b.opaque and b.option_like) and (
                    b.opaque or not bt.startswith("-") or _is_number(bt) or bt == "-"
                ):
                    opts[canon] = _pair_option(canon, a, b)
                    i += 2
                    continue
            opts[canon] = Option(canon, None, a.raw, a.position)
            i += 1
            continue
        positionals.append(a.value)
        i += 1
    return opts, tuple(positionals)
