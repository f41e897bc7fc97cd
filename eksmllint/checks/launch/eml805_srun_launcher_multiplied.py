"""EML805 srun-launcher-multiplied: srun starts several tasks per node and each runs a per-node
launcher (torchrun, deepspeed, accelerate); the fix edits the script to one launcher per node."""

from __future__ import annotations

import re
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from functools import lru_cache

from eksmllint.analysis.launch_sites import script_of, slurm_line_col, slurm_of
from eksmllint.checks.helpers import sentences
from eksmllint.checks.launch._shared import procs_per_node, tasks_source
from eksmllint.core.context import RuleContext
from eksmllint.core.finding import Finding, Fix, ReplaceText
from eksmllint.launch.model import PER_NODE_LAUNCHERS, Invocation
from eksmllint.launch.slurm import SlurmScript
from eksmllint.resource import SourceFile


def check(ctx: RuleContext, src: SourceFile) -> Iterator[Finding]:
    if src.kind != "slurm" or not isinstance(src.text, str):
        return
    script = script_of(src)
    flagged: list[tuple[Invocation, int]] = []
    for inv in script.invocations:
        if inv.launcher in PER_NODE_LAUNCHERS and inv.under_srun is not None:
            tasks = script.tasks_per_node(inv.under_srun)
            if tasks is not None and tasks > 1:
                flagged.append((inv, tasks))
    all_edits = steps_edits_805(src.text, script, [inv for inv, _ in flagged])  # together: linear in the steps
    for (inv, tasks), edits in zip(flagged, all_edits):
        nproc, _ = procs_per_node(inv)
        desc, pos, raw, _ = tasks_source(script, inv)
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
            f"srun starts {tasks} tasks per node ({desc}) and each runs the per-node launcher {inv.launcher}",
            detail=sentences(
                f"{per} (line {inv.source.position.script_line}){total}",
                f"{inv.launcher} is a per-node launcher: run it with --ntasks-per-node=1",
            ),
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
    nproc, _ = procs_per_node(inv)
    want = script.gpus_per_node or nproc
    edits: tuple[Edit, ...] = ()
    current = yield edits
    if current is None:
        return ()
    cur_script, cur_inv = script, inv
    for _ in range(4):
        tasks = cur_script.tasks_per_node(cur_inv.under_srun)
        srun = cur_inv.under_srun
        now_nproc, nproc_opt = procs_per_node(cur_inv)
        nodes = cur_script.nodes
        step: tuple[int | None, str, str]  # (script line, old text, new text)
        if tasks != 1:
            _, pos, raw, literal = tasks_source(cur_script, cur_inv)
            if pos is None or literal is None:
                return ()
            name = "ntasks" if "ntasks-per-node" not in raw and "ntasks_per_node" not in raw else None
            if name == "ntasks" and nodes is None:
                return ()
            value = str(nodes) if name == "ntasks" else "1"
            step = (pos.script_line, raw, raw[: len(raw) - len(literal)] + value)
        elif (
            srun is not None
            and (opt := srun.option("ntasks")) is not None
            and nodes is not None
            and srun.int_option("ntasks") != nodes
        ):  # srun -n must shrink to one task per node as well
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
        line, old, new = step
        if not line or old == new:
            return ()
        edit = _edit_on_line(current, line, old, new)
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
