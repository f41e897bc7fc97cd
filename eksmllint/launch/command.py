"""Container command analysis: find the launcher, its options and the training script.

A container's ``command``/``args`` may start a launcher directly (``torchrun ...``), through
wrappers (``neuron_parallel_compile``, ``env``, ``numactl``, ``srun``...) or inside a
``bash -c`` script.  Every recognised launch becomes an :class:`Invocation`; anything whose
shape is not understood is skipped silently rather than guessed.

Kubernetes first expands ``$(VAR)`` in command/args from the container's env (exact
kubelet semantics, see :func:`expand_k8s_vars`); a shell, if there is one, then sees the
result.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from . import slurmopts
from .model import Arg, ArgPosition, Invocation, Option, Source, SrunInfo, canonical_name
from .shell import ExpansionBudget, Known, ShellState, Unknown, walk_script

__all__ = ["AnalysisContext", "analyse_argv", "analyse_container", "expand_k8s_vars", "k8s_env"]

_MAX_DEPTH = 4


# --------------------------------------------------------------------------- $(VAR)


def _expand_k8s(s: str, env: Mapping[str, str | None], budget: ExpansionBudget | None = None) -> tuple[str, bool]:
    """Kubelet's expansion (third_party/forked/golang/expansion): ``$(NAME)`` -> value when
    NAME is defined, ``$$`` -> ``$``, anything else copied.  Returns the text and whether a
    reference to a variable without a literal value (valueFrom) was left in place.  A result
    over the expansion budget (``B=$(A)$(A)``, ``C=$(B)$(B)``... doubles) is returned as written
    and unresolved: unknown."""
    budget = budget or ExpansionBudget()
    size = 0
    out: list[str] = []
    unresolved = False
    checkpoint = 0
    cursor = 0
    n = len(s)
    while cursor < n:
        if s[cursor] == "$" and cursor + 1 < n:
            out.append(s[checkpoint:cursor])
            nxt = s[cursor + 1]
            if nxt == "$":
                out.append("$")
                advance = 1
            elif nxt == "(":
                close = s.find(")", cursor + 2)
                if close < 0:
                    out.append("$(")
                    advance = 1
                else:
                    name = s[cursor + 2 : close]
                    if name in env and env[name] is not None:
                        value = str(env[name])
                        size += len(value)
                        if size > budget.value_limit:
                            return s, True
                        out.append(value)
                    else:
                        if name in env:
                            unresolved = True
                        out.append(f"$({name})")
                    advance = close - cursor
            else:
                out.append("$" + nxt)
                advance = 1
            cursor += advance
            checkpoint = cursor + 1
        cursor += 1
    out.append(s[checkpoint:])
    if size and not budget.allow(size):
        return s, True
    return "".join(out), unresolved


def expand_k8s_vars(s: str, env: Mapping[str, str | None]) -> str:
    """Expand ``$(VAR)`` references the way the kubelet does for command, args and env.

    ``$(VAR)`` is replaced when VAR is defined in ``env`` with a literal value; a VAR whose
    value comes from ``valueFrom`` (given as None) is only known at run time, so the
    reference is kept; an undefined VAR is left as is (as Kubernetes does); ``$$`` is an
    escaped ``$``.
    """
    return _expand_k8s(s, env)[0]


def k8s_env(pairs: Sequence[tuple[str, str | None]]) -> dict[str, str | None]:
    """Build a container's env mapping from its ``env`` list in order, expanding ``$(VAR)``
    in each value from the variables defined before it (Kubernetes semantics).  A value
    that still references a run-time-only variable becomes None (not literally known)."""
    env: dict[str, str | None] = {}
    budget = ExpansionBudget()
    for name, value in pairs:
        if value is None:
            env[name] = None
            continue
        text, unresolved = _expand_k8s(value, env, budget)
        env[name] = None if unresolved else text
    return env


# --------------------------------------------------------------------------- tables


@dataclass(frozen=True)
class _Spec:
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


_TORCHRUN = _Spec(
    values=frozenset(
        "nnodes nproc_per_node rdzv_backend rdzv_endpoint rdzv_id rdzv_conf max_restarts "
        "monitor_interval start_method event_log_handler role log_dir logs_specs redirects tee "
        "local_ranks_filter node_rank master_addr master_port local_addr numa_binding "
        "signals_to_handle local_rank".split()
    ),
    flags=frozenset("standalone module no_python run_path use_env virtual_local_rank".split()),
    aliases={"m": "module", "r": "redirects", "t": "tee"},
)

_MPIRUN = _Spec(
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

_DEEPSPEED = _Spec(
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

_ACCELERATE = _Spec(
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

_PER_NODE_SPECS = {"torchrun": _TORCHRUN, "deepspeed": _DEEPSPEED, "accelerate": _ACCELERATE}

SHELLS = frozenset({"bash", "sh", "dash", "zsh", "ksh", "ash"})
_PYTHON_RE = re.compile(r"python(\d+(\.\d+)?)?[mtu]?$")
_TORCHRUN_MODULES = frozenset({"torch.distributed.run", "torch.distributed.launch"})
_DEEPSPEED_MODULES = frozenset({"deepspeed.launcher.runner", "deepspeed"})
_ACCELERATE_MODULES = frozenset({"accelerate.commands.launch"})
# ``python -m MODULE`` tools that are not training programs
_TOOL_MODULES = frozenset(
    {
        "pip",
        "venv",
        "ensurepip",
        "virtualenv",
        "http.server",
        "json.tool",
        "site",
        "pydoc",
        "compileall",
        "zipfile",
        "tarfile",
        "timeit",
    }
)
_MPI4PY = frozenset({"mpi4py", "mpi4py.futures"})  # ``python -m mpi4py script.py`` runs the script
_MPIRUN_NAMES = frozenset({"mpirun", "mpiexec", "orterun", "mpiexec.hydra", "prterun", "oshrun"})
_PROGRAMS = frozenset({"torchrun", "deepspeed", "accelerate", "srun", "mpirun", "mpiexec", "env"}) | SHELLS
_NUMBER_RE = re.compile(r"-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?")


def _is_number(t: str) -> bool:
    return bool(_NUMBER_RE.fullmatch(t))


def _is_program_like(t: str) -> bool:
    base = posixpath.basename(t)
    return t.endswith((".py", ".sh")) or base in _PROGRAMS or bool(_PYTHON_RE.match(base))


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


def _parse_launcher_options(
    args: Sequence[Arg], i: int, spec: _Spec, env: dict[str, Option]
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
        if canon == "x" and spec is _MPIRUN:
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


# --------------------------------------------------------------------------- analyser


@dataclass
class AnalysisContext:
    """What the analyser needs besides the arguments: the kind of source, the text shown
    for the command, and the shell variables a nested ``bash -c`` would see."""

    kind: str
    text: str
    state: ShellState
    depth: int = 0


@dataclass
class _Launch:
    """State accumulated while peeling wrappers."""

    wrappers: list[str] = field(default_factory=list)
    srun: SrunInfo | None = None
    env: dict[str, Option] = field(default_factory=dict)


def _python_opts(args: Sequence[Arg], i: int) -> tuple[str, int, Arg | None]:
    """After ``python``: returns ("module", index after module, module arg) /
    ("script", index of script, None) / ("inline"|"none", ...)."""
    n = len(args)
    while i < n:
        a = args[i]
        if a.opaque:
            return "none", i, None
        t = a.text
        if t == "--":
            i += 1
            continue
        if t.startswith("--"):
            i += 1
            continue
        if t.startswith("-") and len(t) > 1:
            for j, ch in enumerate(t[1:], start=1):
                if ch in "mcWX":
                    rest = t[j + 1 :]
                    if ch in "mc":
                        if rest:
                            mod = replace(a, value=rest, resolved=rest if a.resolved is not None else None)
                            return ("module" if ch == "m" else "inline"), i + 1, mod
                        if i + 1 < n:
                            return ("module" if ch == "m" else "inline"), i + 2, args[i + 1]
                        return "none", n, None
                    if not rest:
                        i += 1  # -W arg / -X opt
                    break
            i += 1
            continue
        return "script", i, None
    return "none", n, None


def _program_of(args: Sequence[Arg], i: int) -> tuple[str | None, bool, ArgPosition | None, int]:
    """The program a generic launcher (mpirun, srun, deepspeed --no_python) runs, seen
    through ``python [opts] script.py`` / ``python -m mod`` / ``bash script.sh``:
    (script, is_module, position, index of its first argument)."""
    if i >= len(args):
        return None, False, None, i
    a = args[i]
    base = posixpath.basename(a.text)
    if _PYTHON_RE.match(base) and not a.opaque:
        kind, j, mod = _python_opts(args, i + 1)
        if kind == "module" and mod is not None and mod.text in _MPI4PY and j < len(args):
            k = _skip_wrapper_options(args, j, frozenset())
            if k < len(args):
                return args[k].text, False, args[k].position, k + 1
        if kind == "module" and mod is not None:
            return mod.text, True, mod.position, j
        if kind == "script":
            return args[j].text, False, args[j].position, j + 1
        return None, False, a.position, len(args)
    if base in SHELLS and i + 1 < len(args):
        b = args[i + 1]
        if not b.text.startswith("-"):
            return b.text, False, b.position, i + 2
        return None, False, a.position, len(args)
    return a.text, False, a.position, i + 1


def _skip_wrapper_options(
    args: Sequence[Arg], i: int, with_value: frozenset[str], long_with_value: frozenset[str] = frozenset()
) -> int:
    """Step over ``-x [value]`` options of a simple wrapper (stdbuf, numactl, timeout...)."""
    n = len(args)
    while i < n:
        t = args[i].text
        if args[i].opaque or not t.startswith("-") or t == "-":
            return i
        if t == "--":
            return i + 1
        if t.startswith("--"):
            name = t[2:].split("=", 1)[0]
            i += 2 if ("=" not in t and name in long_with_value) else 1
            continue
        i += 2 if (len(t) == 2 and t[1] in with_value) else 1
    return i


class _Analyser:
    def __init__(self, ctx: AnalysisContext) -> None:
        self.ctx = ctx
        # index (in the args last passed to analyse) of a program that is no launcher
        self.stopped_at: int | None = None

    def source(self, a: Arg) -> Source:
        return Source(self.ctx.kind, a.position, self.ctx.text)

    def make(
        self,
        launcher: str,
        head: Arg,
        program: str,
        options: dict[str, Option],
        script_info: tuple[str | None, bool, ArgPosition | None, int],
        args: Sequence[Arg],
        st: _Launch,
    ) -> Invocation:
        script, module, spos, j = script_info
        sargs, positionals = parse_script_args(args[j:]) if script is not None else ({}, ())
        return Invocation(
            launcher=launcher,
            options=options,
            script=script,
            script_args=sargs,
            wrappers=tuple(st.wrappers),
            under_srun=st.srun,
            source=self.source(head),
            program=program,
            script_module=module,
            script_position=spos,
            positionals=positionals,
            env=dict(st.env),
        )

    # -- entry -----------------------------------------------------------------
    def analyse(self, args: Sequence[Arg], st: _Launch | None = None) -> list[Invocation]:
        st = st or _Launch()
        i = 0
        n = len(args)
        while i < n:
            a = args[i]
            if a.opaque:
                if a.option_like:
                    i += 1
                    continue
                return []
            if a.resolved is None:
                return []
            t = a.resolved
            base = posixpath.basename(t)
            nxt = args[i + 1].text if i + 1 < n else None
            if base == "exec":
                st.wrappers.append("exec")
                i = _skip_wrapper_options(args, i + 1, frozenset("a"))
                continue
            if base == "env":
                st.wrappers.append("env")
                i = self._peel_env(args, i + 1, st)
                continue
            if base in ("nohup", "command", "builtin"):
                st.wrappers.append(base)
                i += 1
                continue
            if base == "time":
                st.wrappers.append("time")
                i = _skip_wrapper_options(args, i + 1, frozenset("fo"))
                continue
            if base == "stdbuf":
                st.wrappers.append("stdbuf")
                i = _skip_wrapper_options(args, i + 1, frozenset("ioe"))
                continue
            if base == "numactl":
                st.wrappers.append("numactl")
                i = _skip_wrapper_options(
                    args,
                    i + 1,
                    frozenset("NmiCpPwb"),
                    frozenset(
                        {
                            "cpunodebind",
                            "membind",
                            "interleave",
                            "physcpubind",
                            "preferred",
                            "preferred-many",
                            "weighted-interleave",
                        }
                    ),
                )
                continue
            if base == "taskset":
                st.wrappers.append("taskset")
                j = _skip_wrapper_options(args, i + 1, frozenset())
                i = j + 1  # the mask / cpu list
                continue
            if base in ("nice", "ionice", "chrt"):
                st.wrappers.append(base)
                i = _skip_wrapper_options(args, i + 1, frozenset("nct"))
                continue
            if base == "sudo":
                st.wrappers.append("sudo")
                i = _skip_wrapper_options(args, i + 1, frozenset("ugpCDhrt"), frozenset({"user", "group"}))
                continue
            if base == "timeout":
                st.wrappers.append("timeout")
                j = _skip_wrapper_options(args, i + 1, frozenset("sk"), frozenset({"signal", "kill-after"}))
                i = j + 1  # the duration
                continue
            if base == "neuron_parallel_compile":
                st.wrappers.append(base)
                i += 1
                continue
            if base == "uv" and nxt == "run":
                st.wrappers.append("uv run")
                j = self._skip_uv_run(args, i + 2)
                if j < n and args[j].text in ("-m", "--module"):
                    return self._python(args, i, st, module_at=j + 1, program_head=a)
                if j < n and args[j].text.endswith(".py"):
                    return self._python(args, i, st, script_at=j, program_head=a)
                i = j
                continue
            if base in ("conda", "mamba", "micromamba") and nxt == "run":
                st.wrappers.append(f"{base} run")
                i = _skip_wrapper_options(args, i + 2, frozenset("np"), frozenset({"name", "prefix", "cwd"}))
                continue
            if base in ("poetry", "pipenv", "pdm") and nxt == "run":
                st.wrappers.append(f"{base} run")
                i += 2
                continue
            if base == "srun":
                if st.wrappers.count("srun") >= _MAX_DEPTH:
                    return []  # ``srun srun srun ...``: each level copies the rest of the line (issue 16)
                opts, _, j, _ = slurmopts.parse_getopt(args, i + 1, slurmopts.SRUN_LONG, slurmopts.SRUN_SHORT)
                if j >= n:
                    return []
                outer = _Launch(list(st.wrappers), st.srun, dict(st.env))
                st.srun = SrunInfo(opts, a.position)
                st.wrappers.append("srun")
                self.stopped_at = None
                inner = self.analyse(args[j:], st)
                if inner:
                    return inner
                if self.stopped_at is None:
                    return []
                # srun running a program that is no launcher: record it as an srun step
                return [self.make("srun", a, "srun", opts, _program_of(args, j + self.stopped_at), args, outer)]
            if base in SHELLS:
                if not self._has_c(args, i):
                    self.stopped_at = i  # ``bash script.sh``: a program we cannot see
                    return []
                return self._shell(args, i, st)
            if _PYTHON_RE.match(base):
                return self._python(args, i, st, program_head=a)
            if base == "torchrun":
                return [self._per_node("torchrun", args, i + 1, st, a, t)]
            if base in _MPIRUN_NAMES:
                return self._mpirun(args, i, st)
            if base == "deepspeed":
                return [self._per_node("deepspeed", args, i + 1, st, a, t)]
            if base == "accelerate" and nxt == "launch":
                return [self._per_node("accelerate", args, i + 2, st, a, f"{t} launch")]
            if base == "accelerate-launch":
                return [self._per_node("accelerate", args, i + 1, st, a, t)]
            self.stopped_at = i
            return []
        return []

    # -- wrappers --------------------------------------------------------------
    def _peel_env(self, args: Sequence[Arg], i: int, st: _Launch) -> int:
        n = len(args)
        while i < n:
            a = args[i]
            t = a.text
            if t in ("-u", "--unset", "-C", "--chdir", "-S", "--split-string"):
                i += 2
                continue
            if t.startswith("-") and t != "-":
                i += 1
                continue
            if not a.opaque and re.match(r"[A-Za-z_][A-Za-z0-9_]*=", t):
                name = t.split("=", 1)[0]
                val, res = slurmopts.split_value(a)
                st.env[name] = Option(name, val, a.raw, a.position, res, a.position)
                i += 1
                continue
            return i
        return i

    @staticmethod
    def _skip_uv_run(args: Sequence[Arg], i: int) -> int:
        with_value = frozenset(
            {
                "with",
                "with-editable",
                "with-requirements",
                "python",
                "project",
                "directory",
                "extra",
                "group",
                "only-group",
                "no-group",
                "env-file",
                "package",
                "index",
                "index-url",
                "extra-index-url",
                "find-links",
                "config-file",
                "cache-dir",
                "script-from",
            }
        )
        n = len(args)
        while i < n:
            t = args[i].text
            if t == "--":
                return i + 1
            if t in ("-m", "--module") or not t.startswith("-"):
                return i
            if t.startswith("--"):
                name = t[2:].split("=", 1)[0]
                i += 2 if ("=" not in t and name in with_value) else 1
                continue
            i += 2 if t in ("-p", "-w") else 1
        return i

    @staticmethod
    def _has_c(args: Sequence[Arg], i: int) -> bool:
        for a in args[i + 1 :]:
            t = a.text
            if a.opaque or not t.startswith(("-", "+")) or len(t) < 2 or t == "--":
                return False
            if not t.startswith("--") and "c" in t[1:]:
                return True
        return False

    def _shell(self, args: Sequence[Arg], i: int, st: _Launch) -> list[Invocation]:
        """``bash [-lxe] -c SCRIPT``: analyse the script's commands."""
        n = len(args)
        j = i + 1
        has_c = False
        while j < n and args[j].text.startswith(("-", "+")) and len(args[j].text) > 1 and not args[j].opaque:
            t = args[j].text
            if t == "--":
                j += 1
                break
            if t.startswith("--"):
                j += 1
                continue
            if "c" in t[1:]:
                has_c = True
            if t[1:] in ("o", "O") or (t.startswith("+") and t[1:] == "O"):
                j += 1  # -o option-name
            j += 1
        if not has_c or j >= n:
            return []  # ``bash script.sh`` runs a file we cannot see
        script_arg = args[j]
        if script_arg.opaque or self.ctx.depth >= _MAX_DEPTH:
            return []
        st.wrappers.append(f"{posixpath.basename(args[i].text)} -c")
        return self._nested_script(script_arg, st)

    def _nested_script(self, script_arg: Arg, st: _Launch) -> list[Invocation]:
        base = script_arg.position
        base_line = base.script_line or 0
        per_arg = base.list_name == "script"

        def make_pos(line: int) -> ArgPosition:
            return ArgPosition(base.list_name, base.index, base_line + line)

        state = self.ctx.state.child()
        for name, opt in st.env.items():
            state.vars[name] = Known(opt.resolved) if opt.resolved is not None else Unknown(False)
            state.exported.add(name)
        # an unresolved script is re-read as written: what the outer level could not expand
        # (``$(VAR)`` from valueFrom, a command substitution) is unknown to the inner one too
        text = script_arg.resolved if script_arg.resolved is not None else script_arg.value
        if not state.budget.allow(len(text)):
            return []  # re-reading scripts is expansion work too (a script may run itself)
        commands, _ = walk_script(text, state, make_pos, index_args=per_arg)
        kind = "slurm" if per_arg else "shell"
        out: list[Invocation] = []
        for cmd in commands:
            sub = _Analyser(AnalysisContext(kind, cmd.text, cmd.state, self.ctx.depth + 1))
            env = dict(st.env)
            env.update(cmd.env)
            out.extend(sub.analyse(cmd.args, _Launch(list(st.wrappers), st.srun, env)))
        return out

    # -- launchers -------------------------------------------------------------
    def _python(
        self,
        args: Sequence[Arg],
        i: int,
        st: _Launch,
        program_head: Arg,
        module_at: int | None = None,
        script_at: int | None = None,
    ) -> list[Invocation]:
        head = program_head
        if module_at is not None:
            if module_at >= len(args):
                return []
            kind, j, mod = "module", module_at + 1, args[module_at]
        elif script_at is not None:
            kind, j, mod = "script", script_at, None
        else:
            kind, j, mod = _python_opts(args, i + 1)
        if kind == "module" and mod is not None:
            module = mod.text
            written = " ".join(x.value for x in args[i:j])
            if module in _TORCHRUN_MODULES:
                return [self._per_node("torchrun", args, j, st, head, written)]
            if module in _DEEPSPEED_MODULES:
                return [self._per_node("deepspeed", args, j, st, head, written)]
            if module in _ACCELERATE_MODULES:
                return [self._per_node("accelerate", args, j, st, head, written)]
            if module in _MPI4PY:
                st.wrappers.append(f"python -m {module}")
                k = _skip_wrapper_options(args, j, frozenset())
                if k < len(args):
                    return [
                        self.make("python", head, written, {}, (args[k].text, False, args[k].position, k + 1), args, st)
                    ]
                return []
            if module in _TOOL_MODULES:
                return []
            return [self.make("python", head, written, {}, (module, True, mod.position, j), args, st)]
        if kind == "script" and j < len(args):
            written = " ".join(x.value for x in args[i:j])
            return [self.make("python", head, written, {}, (args[j].text, False, args[j].position, j + 1), args, st)]
        return []

    def _per_node(self, launcher: str, args: Sequence[Arg], i: int, st: _Launch, head: Arg, written: str) -> Invocation:
        """torchrun, deepspeed and accelerate: launcher options, then the script (or, with
        ``--no-python``, a program) and its arguments."""
        opts, j = _parse_launcher_options(args, i, _PER_NODE_SPECS[launcher], st.env)
        if j >= len(args):
            info: tuple[str | None, bool, ArgPosition | None, int] = (None, False, None, j)
        elif "no_python" in opts:
            info = _program_of(args, j)
        else:
            info = (args[j].text, "module" in opts, args[j].position, j + 1)
        return self.make(launcher, head, written, opts, info, args, st)

    def _mpirun(self, args: Sequence[Arg], i: int, st: _Launch) -> list[Invocation]:
        head = args[i]
        opts, j = _parse_launcher_options(args, i + 1, _MPIRUN, st.env)
        info = _program_of(args, j)
        inv = self.make("mpirun", head, head.text, opts, info, args, st)
        out = [inv]
        # ``mpirun ... bash -c '...'``: also report what the script launches
        if j < len(args) and posixpath.basename(args[j].text) in SHELLS and info[0] is None:
            out.extend(self._shell(args, j, _Launch(st.wrappers + ["mpirun"], st.srun, dict(st.env))))
        return out


# --------------------------------------------------------------------------- entry


def analyse_argv(
    args: Sequence[Arg], ctx: AnalysisContext, env: Mapping[str, Option] | None = None
) -> list[Invocation]:
    """Analyse already-expanded arguments (a container's argv or a script's command)."""
    try:
        return _Analyser(ctx).analyse(list(args), _Launch(env=dict(env or {})))
    except RecursionError:
        return []


def _as_text(item: object) -> str:
    if isinstance(item, str):
        return item
    if item is None:
        return ""
    if isinstance(item, bool):
        return "true" if item else "false"
    return str(item)


def analyse_container(
    command: Sequence[object] | None,
    args: Sequence[object] | None,
    env: Mapping[str, str | None] | None = None,
) -> list[Invocation]:
    """All launches a container's ``command`` + ``args`` start.

    ``env`` maps the container's env names to literal values (None for ``valueFrom``).
    When ``command`` is None the image entrypoint is unknown and ``args`` are analysed
    alone (they often start with the launcher anyway).  Never raises.
    """
    env = dict(env or {})
    budget = ExpansionBudget()
    argv: list[Arg] = []
    for list_name, items in (("command", command), ("args", args)):
        if not isinstance(items, (list, tuple)):
            continue
        for idx, item in enumerate(items):
            raw = _as_text(item)
            text, unresolved = _expand_k8s(raw, env, budget)
            argv.append(Arg(text, None if unresolved else text, raw, ArgPosition(list_name, idx)))
    if not argv:
        return []
    state = ShellState(
        {k: (Known(v) if v is not None else Unknown(False)) for k, v in env.items()},
        set(env),
        budget=budget,
    )
    ctx = AnalysisContext("exec", " ".join(a.value for a in argv), state)
    try:
        return analyse_argv(argv, ctx)
    except Exception:  # pragma: no cover - defensive: analysis must never break a lint run
        return []
