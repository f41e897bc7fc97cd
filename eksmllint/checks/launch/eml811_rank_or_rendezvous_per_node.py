"""EML811 rank-or-rendezvous-per-node: in a Slurm script, a multi-node launch under ``srun`` computes
its rendezvous host on every node (``$(hostname)`` inside the single-quoted or escaped command that
``srun`` runs per node), or gives every node the same rank (a literal ``--node_rank 0``, or
``$SLURM_NODEID`` expanded once by the batch shell before ``srun`` copies the command)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from eksmllint.analysis.launch_sites import script_of, slurm_line_col
from eksmllint.core.context import RuleContext
from eksmllint.core.finding import Finding
from eksmllint.launch.model import Invocation, Option, parse_int
from eksmllint.launch.slurm import SlurmScript
from eksmllint.resource import SourceFile

#: Options naming the rendezvous host (torchrun, deepspeed, accelerate) and the node rank.
HOST_OPTIONS = ("rdzv_endpoint", "rdzv-endpoint", "master_addr", "master-addr", "main_process_ip")
RANK_OPTIONS = ("node_rank", "node-rank", "machine_rank")
#: Options giving the number of nodes of the launch (torchrun ``--nnodes``, accelerate, deepspeed).
NODES_OPTIONS = ("nnodes", "num_machines", "num_nodes")
#: Wrappers whose argument is a command line a shell on each node evaluates.
PER_NODE_SHELLS = frozenset({"bash -c", "sh -c"})
#: Expansions that differ per node (the node's own name) and per-node rank variables.
_HOST = re.compile(r"\$\(\s*hostname\b[^)]*\)|`\s*hostname\b[^`]*`|\$\{?(?:HOSTNAME|SLURMD_NODENAME)\b\}?")
_RANK_VAR = re.compile(r"\$\{?(?:SLURM_NODEID|SLURM_PROCID)\b\}?")


def check(ctx: RuleContext, src: SourceFile) -> Iterator[Finding]:
    if src.kind != "slurm" or not isinstance(src.text, str):
        return
    script = script_of(src)
    lines = src.text.split("\n")
    for inv in script.invocations:
        if inv.under_srun is None or not _multi_node(script, inv):
            continue
        text = _command_text(lines, inv)
        deferred = _deferred_spans(text)  # what srun's per-node shell expands
        per_node = bool(PER_NODE_SHELLS & set(inv.wrappers))
        for opt in _options(inv, HOST_OPTIONS):
            if per_node and _expands(opt.value or "", _HOST, deferred):
                yield _report(ctx, src, opt, f"{opt.raw} is evaluated on every node: each waits on itself")
        for opt in _options(inv, RANK_OPTIONS):
            value = opt.value or ""
            if parse_int(opt.resolved) is not None:
                yield _report(ctx, src, opt, f"{opt.raw} is the same on every node srun starts")
            # a rank variable that reached the command through a variable of the script
            # (``LAUNCHER="... --machine_rank \$SLURM_NODEID"``) may have been escaped where it was
            # assigned: when it was expanded is not knowable from the command line, stay silent
            elif (
                _RANK_VAR.search(value)
                and _RANK_VAR.search(text)
                and not (per_node and _expands(value, _RANK_VAR, deferred))
            ):
                yield _report(ctx, src, opt, f"{opt.raw} is expanded once by the batch shell, before srun")


def _options(inv: Invocation, names: tuple[str, ...]) -> list[Option]:
    """The options of ``inv`` among ``names`` that carry a value (each once: the launch model
    finds ``--node-rank`` under ``node_rank`` too)."""
    found = {id(o): o for o in (inv.option(n) for n in names) if o is not None and o.value}
    return list(found.values())


def _multi_node(script: SlurmScript, inv: Invocation) -> bool:
    nodes = inv.under_srun.int_option("nodes") if inv.under_srun is not None else None
    nodes = nodes if nodes is not None else script.nodes
    for name in NODES_OPTIONS:
        opt = inv.option(name)
        if opt is not None and opt.resolved is not None:
            n = parse_int(opt.resolved.split(":")[-1])
            nodes = n if n is not None else nodes
    return nodes is not None and nodes > 1


def _command_text(lines: list[str], inv: Invocation) -> str:
    """The script text of the command: its line and the continuation lines after it."""
    start = (inv.source.position.script_line or 0) - 1
    if not 0 <= start < len(lines):
        return ""
    end = start
    while end + 1 < len(lines) and lines[end].rstrip().endswith("\\"):
        end += 1
    return "\n".join(lines[start : end + 1])


def _deferred_spans(text: str) -> list[str]:
    """The expansions in ``text`` the batch shell leaves alone: inside single quotes, or escaped
    with a backslash (outside single quotes); srun's per-node shell expands them."""
    out: list[str] = []
    single = double = False
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and not single and i + 1 < len(text):
            if text[i + 1] in "$`":
                out.append(_token(text, i + 1))
            i += 2
            continue
        if ch == "'" and not double:
            single = not single
        elif ch == '"' and not single:
            double = not double
        elif ch in "$`" and single:
            out.append(_token(text, i))
        i += 1
    return [t for t in out if t]


def _token(text: str, i: int) -> str:
    m = _HOST.match(text, i) or _RANK_VAR.match(text, i)
    return m.group(0) if m else ""


def _expands(value: str, pattern: re.Pattern[str], deferred: list[str]) -> bool:
    """``value`` holds an expansion of ``pattern`` that the per-node shell evaluates."""
    return any(m.group(0) in deferred for m in pattern.finditer(value))


def _report(ctx: RuleContext, src: SourceFile, opt: Option, message: str) -> Finding:
    return ctx.report_file(src, *slurm_line_col(src, opt.position, opt.raw), message)
