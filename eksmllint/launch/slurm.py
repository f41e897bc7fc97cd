"""Slurm batch scripts: ``#SBATCH`` directives, variables and the launches they run.

Rules compare what a batch script asks Slurm for (``--nodes``, ``--gpus-per-node``,
``--ntasks-per-node``...) with what its launcher starts (``srun torchrun
--nproc_per_node=...``).  Directives are read the way sbatch reads them: only before the
first command line, with getopt semantics, literal values (sbatch does not expand
variables).  Variables the job sees (``SLURM_NNODES`` ...) are derived from the directives
so that ``$SLURM_NTASKS_PER_NODE`` in a launcher resolves.

:func:`parse_sbatch` never raises: problems sbatch or bash would reject are returned in
``SlurmScript.errors`` as (1-based line, message) and become EML005 findings.
"""

from __future__ import annotations

import functools
import re
import shlex
from dataclasses import dataclass, field, replace

from . import slurmopts
from .analyser import AnalysisContext, analyse_argv
from .model import Arg, Invocation, SrunInfo, parse_int, position_at
from .shell import Assignment, Known, ShellState, walk_script

__all__ = ["Directive", "SlurmScript", "is_slurm_script", "parse_sbatch", "parse_slurm_memory_mb", "parse_slurm_time"]

_SUFFIXES = (".sbatch", ".slurm")
_DIRECTIVE_RE = re.compile(r"#SBATCH(?=\s|$)")
_HEADER_SCAN_LIMIT = 2000


@dataclass(frozen=True)
class Directive:
    """One ``#SBATCH`` option: canonical long name (``ntasks_per_node``), value (None for
    flags), 1-based line and the option as written."""

    name: str
    value: str | None
    line: int
    raw: str


def parse_slurm_time(text: str) -> int | None:
    """Slurm time limit in seconds.

    Accepted: ``M``, ``M:S``, ``H:M:S``, ``D-H``, ``D-H:M``, ``D-H:M:S``.  ``UNLIMITED`` /
    ``INFINITE`` give None.  Raises ValueError for anything else.
    """
    s = text.strip()
    if s.lower() in ("unlimited", "infinite"):
        return None
    m = re.fullmatch(r"(\d+)-(\d+)(?::(\d+)(?::(\d+))?)?", s)
    if m:
        d, h, mi, se = (int(g) if g else 0 for g in m.groups())
        return ((d * 24 + h) * 60 + mi) * 60 + se
    m = re.fullmatch(r"(\d+)(?::(\d+)(?::(\d+))?)?", s)
    if m:
        a, b, c = m.groups()
        if c is not None:
            return (int(a) * 60 + int(b)) * 60 + int(c)
        if b is not None:
            return int(a) * 60 + int(b)
        return int(a) * 60
    raise ValueError(f"invalid time specification '{text}'")


_MEM_RE = re.compile(r"(\d+)([KMGT])?B?", re.IGNORECASE)
_MEM_FACTOR = {"K": 1 / 1024, "M": 1, "G": 1024, "T": 1024 * 1024}


def parse_slurm_memory_mb(text: str) -> int:
    """``--mem`` value in MiB (default unit M; K/M/G/T suffixes).  Raises ValueError."""
    m = _MEM_RE.fullmatch(text.strip())
    if m is None:
        raise ValueError(f"invalid memory specification '{text}'")
    unit = (m.group(2) or "M").upper()
    size = parse_int(m.group(1))
    if size is None:
        raise ValueError(f"memory specification too large '{text}'")
    return int(size * _MEM_FACTOR[unit])


_COUNT_RE = re.compile(r"(?:[A-Za-z0-9_.-]+:)?(\d+)")
_INT_OPTIONS = frozenset(
    {
        "ntasks",
        "ntasks_per_node",
        "cpus_per_task",
        "ntasks_per_core",
        "ntasks_per_gpu",
        "ntasks_per_socket",
        "mincpus",
        "cores_per_socket",
        "sockets_per_node",
        "threads_per_core",
        "cpus_per_gpu",
    }
)


def _count(spec: str | None) -> int | None:
    """``8`` or ``a100:8`` -> 8 (a single GPU spec); anything else None."""
    if spec is None:
        return None
    m = _COUNT_RE.fullmatch(spec.strip())
    return parse_int(m.group(1)) if m else None


def _gres_gpus(gres: str | None) -> int | None:
    """GPUs per node from ``--gres=gpu:8`` / ``gpu:a100:8`` / ``gpu`` (1)."""
    if not gres:
        return None
    for entry in gres.split(","):
        entry = entry.split("(")[0].strip()
        fields = entry.split(":")
        if fields[0] != "gpu":
            continue
        if len(fields) == 1:
            return 1
        return parse_int(fields[-1]) if fields[-1].isdigit() else (1 if len(fields) == 2 else None)
    return None


def _validate(d: Directive) -> str | None:
    """sbatch's complaint about a directive's value, or None if it would be accepted."""
    v = d.value
    if v is None:
        return None
    name = d.name
    if name == "nodes" and not re.fullmatch(r"\d+(-\d+)?(:\d+)?|\d+(,\d+)+", v.strip()):
        return f"invalid node count '{v}' for --nodes"
    if name in _INT_OPTIONS and not re.fullmatch(r"\d+", v.strip()):
        return f"invalid value '{v}' for --{name.replace('_', '-')}: expected an integer"
    if name in ("gpus_per_node", "gpus", "gpus_per_task", "gpus_per_socket"):
        if not re.fullmatch(r"(?:[A-Za-z0-9_.-]+:)?\d+(,(?:[A-Za-z0-9_.-]+:)?\d+)*", v.strip()):
            return f"invalid GPU specification '{v}' for --{name.replace('_', '-')}"
    if name in ("mem", "mem_per_cpu", "mem_per_gpu"):
        try:
            parse_slurm_memory_mb(v)
        except ValueError as exc:
            return f"{exc} for --{name.replace('_', '-')}"
    if name in ("time", "time_min"):
        try:
            parse_slurm_time(v)
        except ValueError as exc:
            return f"{exc} for --{name.replace('_', '-')}"
    if name == "exclusive" and v not in ("user", "mcs", "topo"):
        return f"invalid value '{v}' for --exclusive (expected user, mcs or topo)"
    if name == "gres" and (not v.strip() or any(ch.isspace() for ch in v.strip())):
        return f"invalid --gres specification '{v}'"
    return None


@dataclass
class SlurmScript:
    """A parsed batch script.  ``directives`` maps canonical names to the last occurrence
    (as sbatch applies them); ``ignored_directives`` are ``#SBATCH`` lines after the first
    command, which sbatch silently ignores; ``variables`` are the literal values known at
    the end of the script (including SLURM_* derived from directives); line numbers are
    1-based throughout."""

    directives: dict[str, Directive] = field(default_factory=dict)
    directive_list: list[Directive] = field(default_factory=list)
    ignored_directives: list[Directive] = field(default_factory=list)
    assignments: list[Assignment] = field(default_factory=list)
    variables: dict[str, str] = field(default_factory=dict)
    derived: dict[str, str] = field(default_factory=dict)
    invocations: list[Invocation] = field(default_factory=list)
    errors: list[tuple[int, str]] = field(default_factory=list)

    def directive(self, name: str) -> Directive | None:
        return self.directives.get(name.lstrip("-").replace("-", "_"))

    def _value(self, name: str) -> str | None:
        d = self.directive(name)
        return d.value if d is not None else None

    def _int(self, name: str) -> int | None:
        return parse_int(self._value(name))

    @property
    def nodes(self) -> int | None:
        """Node count when it is one number (``4`` or ``4-4``); ranges give None."""
        v = self._value("nodes")
        if v is None:
            return None
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", v.strip())
        if m is None or (m.group(2) is not None and m.group(2) != m.group(1)):
            return None
        return parse_int(m.group(1))

    @property
    def ntasks(self) -> int | None:
        return self._int("ntasks")

    @property
    def ntasks_per_node(self) -> int | None:
        return self._int("ntasks_per_node")

    @property
    def cpus_per_task(self) -> int | None:
        return self._int("cpus_per_task")

    @property
    def gpus_per_node(self) -> int | None:
        """From ``--gpus-per-node`` (``8`` or ``a100:8``), else ``--gres=gpu[:type]:N``."""
        d = self.directive("gpus_per_node")
        if d is not None:
            return _count(d.value)
        return _gres_gpus(self._value("gres"))

    @property
    def gpus_per_task(self) -> int | None:
        """From ``--gpus-per-task`` (``1`` or ``a100:1``): each task's GPUs, bound to that task."""
        return _count(self._value("gpus_per_task"))

    @property
    def gpus(self) -> int | None:
        """Total GPUs of the job (``-G``/``--gpus``)."""
        return _count(self._value("gpus"))

    @property
    def mem_mb(self) -> int | None:
        v = self._value("mem")
        try:
            return parse_slurm_memory_mb(v) if v is not None else None
        except ValueError:
            return None

    @property
    def time_seconds(self) -> int | None:
        v = self._value("time")
        try:
            return parse_slurm_time(v) if v is not None else None
        except ValueError:
            return None

    @property
    def partition(self) -> str | None:
        return self._value("partition")

    @property
    def job_name(self) -> str | None:
        return self._value("job_name")

    @property
    def output(self) -> str | None:
        return self._value("output")

    @property
    def exclusive(self) -> bool:
        return "exclusive" in self.directives

    def tasks_per_node(self, srun: SrunInfo | None) -> int | None:
        """Tasks per node of an ``srun`` step: srun's own ``--ntasks-per-node``, else its
        ``-n`` over its (or the allocation's) nodes, else the allocation's settings, which
        srun inherits; Slurm's default is one task per node.  None when a value involved
        is not literally known or ``-n`` does not divide evenly."""
        nodes = self.nodes
        if srun is not None:
            if srun.option("ntasks_per_node") is not None:
                return srun.int_option("ntasks_per_node")
            if srun.option("nodes") is not None:
                nodes = srun.int_option("nodes")
            if srun.option("ntasks") is not None:
                return _per_node(srun.int_option("ntasks"), nodes)
        if self.directive("ntasks_per_node") is not None:
            return self.ntasks_per_node
        if self.directive("ntasks") is not None:
            return _per_node(self.ntasks, nodes)
        return 1


def _per_node(ntasks: int | None, nodes: int | None) -> int | None:
    if ntasks is None or not nodes or ntasks % nodes:
        return None
    return ntasks // nodes


@functools.lru_cache(maxsize=64)  # the parser and every finding's column lookup ask for the same script
def script_lines(text: str) -> tuple[str, ...]:
    """Lines as a shell counts them: split at "\n" only (a CRLF's "\r" dropped). ``str.splitlines``
    also splits at form feeds, "\x85" or U+2028, which would number directives differently from
    the commands (the shell lexer) and from the fixer's text edits."""
    return tuple(line[:-1] if line.endswith("\r") else line for line in text.split("\n"))


def is_slurm_script(path: str, text: str) -> bool:
    """A ``*.sbatch``/``*.slurm`` file, or any file whose header (the comment block before
    the first command) holds an ``#SBATCH`` directive."""
    if path.lower().endswith(_SUFFIXES):
        return True
    for k, line in enumerate(script_lines(text)):
        if k > _HEADER_SCAN_LIMIT:
            break
        if _DIRECTIVE_RE.match(line):
            return True
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return False
    return False


def _parse_directive_line(line: str, lineno: int) -> tuple[list[Directive], list[tuple[int, str]]]:
    rest = line[len("#SBATCH") :]
    errors: list[tuple[int, str]] = []
    try:
        lexer = shlex.shlex(rest, posix=True)
        lexer.whitespace_split = True
        lexer.commenters = "#"
        tokens = list(lexer)
    except ValueError as exc:
        return [], [(lineno, f"#SBATCH directive: {exc}")]
    args = [Arg(t, t, t, position_at("script", k, lineno)) for k, t in enumerate(tokens)]
    _, order, end, errs = slurmopts.parse_getopt(args, 0, slurmopts.SBATCH_LONG, slurmopts.SBATCH_SHORT)
    for _, msg in errs:
        errors.append((lineno, f"#SBATCH {msg}"))
    directives = [Directive(o.name, o.value, lineno, o.raw) for o in order]
    if end < len(args):
        errors.append((lineno, f"#SBATCH: unexpected argument '{args[end].value}'"))
    for d in directives:
        problem = _validate(d)
        if problem is not None:
            errors.append((lineno, f"#SBATCH {problem}"))
    return directives, errors


def _derive(script: SlurmScript) -> dict[str, str]:
    """Variables sbatch puts in the job's environment, from the directives."""
    env: dict[str, str] = {}
    if script.nodes is not None:
        env["SLURM_NNODES"] = env["SLURM_JOB_NUM_NODES"] = str(script.nodes)
    if script.ntasks_per_node is not None:
        env["SLURM_NTASKS_PER_NODE"] = str(script.ntasks_per_node)
    if script.ntasks is not None:
        env["SLURM_NTASKS"] = env["SLURM_NPROCS"] = str(script.ntasks)
    elif script.ntasks_per_node is not None and script.nodes is not None:
        env["SLURM_NTASKS"] = env["SLURM_NPROCS"] = str(script.ntasks_per_node * script.nodes)
    gpn = script.directive("gpus_per_node")
    if gpn is not None and gpn.value is not None:
        env["SLURM_GPUS_PER_NODE"] = gpn.value
    gpus = script.directive("gpus")
    if gpus is not None and gpus.value is not None:
        env["SLURM_GPUS"] = gpus.value
    if script.cpus_per_task is not None:
        env["SLURM_CPUS_PER_TASK"] = str(script.cpus_per_task)
    if script.mem_mb is not None:
        env["SLURM_MEM_PER_NODE"] = str(script.mem_mb)
    if script.partition is not None:
        env["SLURM_JOB_PARTITION"] = script.partition
    if script.job_name is not None:
        env["SLURM_JOB_NAME"] = script.job_name
    return env


def _parse(text: str) -> SlurmScript:
    script = SlurmScript()
    header = True
    for lineno, line in enumerate(script_lines(text), start=1):
        is_directive = _DIRECTIVE_RE.match(line) is not None
        if header:
            stripped = line.strip()
            if stripped and not stripped.startswith("#"):
                header = False
            elif is_directive:
                ds, errs = _parse_directive_line(line, lineno)
                script.directive_list.extend(ds)
                script.errors.extend(errs)
                continue
        if not header and is_directive:
            ds, _ = _parse_directive_line(line, lineno)
            script.ignored_directives.extend(ds)
    for d in script.directive_list:
        script.directives[d.name] = d
    script.derived = _derive(script)
    state = ShellState(
        {k: Known(v) for k, v in script.derived.items()},
        set(script.derived),
        frozenset(script.derived),
    )
    log: list[Assignment] = []
    commands, lex_errors = walk_script(
        text, state, lambda ln: position_at("script", 0, ln + 1), index_args=True, assignments=log
    )
    script.errors.extend((ln + 1, msg) for ln, msg in lex_errors)
    script.assignments = [replace(a, line=a.line + 1) for a in log]
    for cmd in commands:
        ctx = AnalysisContext("slurm", cmd.text, cmd.state)
        script.invocations.extend(analyse_argv(cmd.args, ctx, env=cmd.env))
    script.variables = {k: v.text for k, v in state.vars.items() if isinstance(v, Known)}
    script.errors.sort(key=lambda e: e[0])
    return script


def parse_sbatch(text: str) -> SlurmScript:
    """Parse a batch script; never raises (problems are in ``errors``)."""
    if not isinstance(text, str):
        text = ""
    try:
        return _parse(text)
    except Exception as exc:  # pragma: no cover - defensive; hypothesis tests cover inputs
        return SlurmScript(errors=[(1, f"could not analyse script: {type(exc).__name__}")])
