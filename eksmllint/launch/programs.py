"""Program names and how a program's own arguments are read: which word is a shell, a Python
interpreter or an MPI launcher, which ``python -m`` modules are launchers or tools, and where the
program a generic launcher (mpirun, srun, ``deepspeed --no_python``) runs starts."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import replace

from .model import Arg, ArgPosition

SHELLS = frozenset({"bash", "sh", "dash", "zsh", "ksh", "ash"})
PYTHON_RE = re.compile(r"python(\d+(\.\d+)?)?[mtu]?$")
TORCHRUN_MODULES = frozenset({"torch.distributed.run", "torch.distributed.launch"})
DEEPSPEED_MODULES = frozenset({"deepspeed.launcher.runner", "deepspeed"})
ACCELERATE_MODULES = frozenset({"accelerate.commands.launch"})
# ``python -m MODULE`` tools that are not training programs
TOOL_MODULES = frozenset(
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
MPI4PY = frozenset({"mpi4py", "mpi4py.futures"})  # ``python -m mpi4py script.py`` runs the script
MPIRUN_NAMES = frozenset({"mpirun", "mpiexec", "orterun", "mpiexec.hydra", "prterun", "oshrun"})
PROGRAMS = frozenset({"torchrun", "deepspeed", "accelerate", "srun", "mpirun", "mpiexec", "env"}) | SHELLS


def python_opts(args: Sequence[Arg], i: int) -> tuple[str, int, Arg | None]:
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


def program_of(args: Sequence[Arg], i: int) -> tuple[str | None, bool, ArgPosition | None, int]:
    """The program a generic launcher (mpirun, srun, deepspeed --no_python) runs, seen
    through ``python [opts] script.py`` / ``python -m mod`` / ``bash script.sh``:
    (script, is_module, position, index of its first argument)."""
    if i >= len(args):
        return None, False, None, i
    a = args[i]
    base = posixpath.basename(a.text)
    if PYTHON_RE.match(base) and not a.opaque:
        kind, j, mod = python_opts(args, i + 1)
        if kind == "module" and mod is not None and mod.text in MPI4PY and j < len(args):
            k = skip_wrapper_options(args, j, frozenset())
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


def skip_wrapper_options(
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
