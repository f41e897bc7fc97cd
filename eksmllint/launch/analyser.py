"""The launch analyser: peels wrappers (``env``, ``numactl``, ``srun``, ``uv run``...) off an
already-expanded argument list, recognises the launcher (torchrun, mpirun, deepspeed, accelerate,
python) and reads it into :class:`~eksmllint.launch.model.Invocation` values; ``bash -c``
scripts are walked and their commands analysed in turn.  A shape that is not understood is
skipped silently rather than guessed."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from . import slurmopts
from .model import Arg, ArgPosition, Invocation, Option, Source, SrunInfo, position_at
from .options import MPIRUN_SPEC, PER_NODE_SPECS, RAY_JOB_SUBMIT_SPEC, parse_launcher_options, parse_script_args
from .programs import (
    ACCELERATE_MODULES,
    DEEPSPEED_MODULES,
    MPI4PY,
    MPIRUN_NAMES,
    PYTHON_RE,
    SHELLS,
    TOOL_MODULES,
    TORCHRUN_MODULES,
    program_of,
    python_opts,
    skip_wrapper_options,
)
from .shell import Known, ShellState, Unknown, walk_script

__all__ = ["AnalysisContext", "analyse_argv"]

_MAX_DEPTH = 4


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
    ray_job: dict[str, Option] | None = None


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
            ray_job=st.ray_job,
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
                i = skip_wrapper_options(args, i + 1, frozenset("a"))
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
                i = skip_wrapper_options(args, i + 1, frozenset("fo"))
                continue
            if base == "stdbuf":
                st.wrappers.append("stdbuf")
                i = skip_wrapper_options(args, i + 1, frozenset("ioe"))
                continue
            if base == "numactl":
                st.wrappers.append("numactl")
                i = skip_wrapper_options(
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
                j = skip_wrapper_options(args, i + 1, frozenset())
                i = j + 1  # the mask / cpu list
                continue
            if base in ("nice", "ionice", "chrt"):
                st.wrappers.append(base)
                i = skip_wrapper_options(args, i + 1, frozenset("nct"))
                continue
            if base == "sudo":
                st.wrappers.append("sudo")
                i = skip_wrapper_options(args, i + 1, frozenset("ugpCDhrt"), frozenset({"user", "group"}))
                continue
            if base == "timeout":
                st.wrappers.append("timeout")
                j = skip_wrapper_options(args, i + 1, frozenset("sk"), frozenset({"signal", "kill-after"}))
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
                i = skip_wrapper_options(args, i + 2, frozenset("np"), frozenset({"name", "prefix", "cwd"}))
                continue
            if base in ("poetry", "pipenv", "pdm") and nxt == "run":
                st.wrappers.append(f"{base} run")
                i += 2
                continue
            if base == "ray" and nxt == "job" and i + 2 < n and args[i + 2].text == "submit":
                # the entrypoint runs in the Ray cluster, through a shell: one word is a script
                st.ray_job, j = parse_launcher_options(args, i + 3, RAY_JOB_SUBMIT_SPEC, {})
                st.wrappers.append("ray job submit")
                if j == n - 1 and " " in args[j].text and not args[j].opaque:
                    return self._nested_script(args[j], st)
                i = j
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
                return [self.make("srun", a, "srun", opts, program_of(args, j + self.stopped_at), args, outer)]
            if base in SHELLS:
                if not self._has_c(args, i):
                    self.stopped_at = i  # ``bash script.sh``: a program we cannot see
                    return []
                return self._shell(args, i, st)
            if PYTHON_RE.match(base):
                return self._python(args, i, st, program_head=a)
            if base == "torchrun":
                return [self._per_node("torchrun", args, i + 1, st, a, t)]
            if base in MPIRUN_NAMES:
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
            return position_at(base.list_name, base.index, base_line + line)

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
            out.extend(sub.analyse(cmd.args, _Launch(list(st.wrappers), st.srun, env, st.ray_job)))
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
            kind, j, mod = python_opts(args, i + 1)
        if kind == "module" and mod is not None:
            module = mod.text
            written = " ".join(x.value for x in args[i:j])
            if module in TORCHRUN_MODULES:
                return [self._per_node("torchrun", args, j, st, head, written)]
            if module in DEEPSPEED_MODULES:
                return [self._per_node("deepspeed", args, j, st, head, written)]
            if module in ACCELERATE_MODULES:
                return [self._per_node("accelerate", args, j, st, head, written)]
            if module in MPI4PY:
                st.wrappers.append(f"python -m {module}")
                k = skip_wrapper_options(args, j, frozenset())
                if k < len(args):
                    return [
                        self.make("python", head, written, {}, (args[k].text, False, args[k].position, k + 1), args, st)
                    ]
                return []
            if module in TOOL_MODULES:
                return []
            return [self.make("python", head, written, {}, (module, True, mod.position, j), args, st)]
        if kind == "script" and j < len(args):
            written = " ".join(x.value for x in args[i:j])
            return [self.make("python", head, written, {}, (args[j].text, False, args[j].position, j + 1), args, st)]
        return []

    def _per_node(self, launcher: str, args: Sequence[Arg], i: int, st: _Launch, head: Arg, written: str) -> Invocation:
        """torchrun, deepspeed and accelerate: launcher options, then the script (or, with
        ``--no-python``, a program) and its arguments."""
        opts, j = parse_launcher_options(args, i, PER_NODE_SPECS[launcher], st.env)
        if j >= len(args):
            info: tuple[str | None, bool, ArgPosition | None, int] = (None, False, None, j)
        elif "no_python" in opts:
            info = program_of(args, j)
        else:
            info = (args[j].text, "module" in opts, args[j].position, j + 1)
        return self.make(launcher, head, written, opts, info, args, st)

    def _mpirun(self, args: Sequence[Arg], i: int, st: _Launch) -> list[Invocation]:
        head = args[i]
        opts, j = parse_launcher_options(args, i + 1, MPIRUN_SPEC, st.env)
        info = program_of(args, j)
        inv = self.make("mpirun", head, head.text, opts, info, args, st)
        out = [inv]
        # ``mpirun ... bash -c '...'``: also report what the script launches
        if j < len(args) and posixpath.basename(args[j].text) in SHELLS and info[0] is None:
            out.extend(self._shell(args, j, _Launch(st.wrappers + ["mpirun"], st.srun, dict(st.env))))
        return out


def analyse_argv(
    args: Sequence[Arg], ctx: AnalysisContext, env: Mapping[str, Option] | None = None
) -> list[Invocation]:
    """Analyse already-expanded arguments (a container's argv or a script's command)."""
    try:
        return _Analyser(ctx).analyse(list(args), _Launch(env=dict(env or {})))
    except RecursionError:
        return []
