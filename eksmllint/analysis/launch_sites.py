"""Launch sites: each launcher invocation of the run with where it lives (a container command or a
Slurm batch script), and how a finding points at one of its arguments.

Parsing is pure: a run's script is parsed once and kept on its SourceFile (:func:`script_of`), so
every rule that reads it shares one parse however many scripts the run holds; texts that are not a
file of the run (the EML805 fix's edited scripts) go through a small per-text cache (:func:`slurm_of`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache

from eksmllint.checks.helpers import container_invocations
from eksmllint.core.finding import DocPath, Finding
from eksmllint.launch.model import ArgPosition, Invocation, Option
from eksmllint.launch.slurm import SlurmScript, parse_sbatch, script_lines
from eksmllint.lazy import kept_on
from eksmllint.resource import SourceFile
from eksmllint.workload import Container


@lru_cache(maxsize=128)
def slurm_of(text: str) -> SlurmScript:
    """The parsed batch script (never raises)."""
    return parse_sbatch(text)


@kept_on
def script_of(src: SourceFile) -> SlurmScript:
    """The run's Slurm file parsed, once per file: an LRU cache keyed on the text thrashed once a
    run held more scripts than its size (8 rules x N scripts parses, issue 23)."""
    return parse_sbatch(src.text or "")


def container_text(c: Container) -> str:
    """Command and args joined: for conservative 'is this mentioned at all' tests."""
    command, args = c.argv_lists()
    return "\n".join((command or []) + (args or []))


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
    return [(f, script_of(f)) for f in run.files if f.kind == "slurm" and isinstance(f.text, str)]


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


def int_opt(inv: Invocation, *names: str) -> tuple[int | None, Option | None]:
    """The first of the launcher's own options ``names`` that is given, with its integer value."""
    return _first_int(inv.option, names)


def script_int(inv: Invocation, *names: str) -> tuple[int | None, Option | None]:
    """The first of the training script's arguments ``names`` that is given, with its integer value."""
    return _first_int(inv.script_flag, names)


def _first_int(lookup: Callable[[str], Option | None], names: tuple[str, ...]) -> tuple[int | None, Option | None]:
    for n in names:
        opt = lookup(n)
        if opt is not None:
            return opt.int_value(), opt
    return None, None
