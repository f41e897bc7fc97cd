"""Text edits (:class:`~eksmllint.core.finding.ReplaceText`) for files that are not YAML documents.

A Slurm batch script has no document tree to splice into, so its fixes name the exact text they
replace and where it starts. Each edit is checked against the text before it is made: a script
that changed since it was linted is refused, never edited in the wrong place.
"""

from __future__ import annotations

from collections.abc import Iterable

from eksmllint.core.finding import Fix, ReplaceText
from eksmllint.fix.spans import FixError


class ScriptText:
    """A script's lines, edited fix by fix: split once and joined once however many fixes a pass
    applies (a script may carry thousands). A fix whose edits do not all match changes nothing."""

    def __init__(self, text: str) -> None:
        self.lines = text.split("\n")  # lines as the shell and the Slurm parser count them (launch.slurm.script_lines)

    def apply(self, fix: Fix) -> None:
        """Make the fix's edits in order; raises :class:`FixError` when one does not match."""
        ops = []
        for op in fix.ops:
            if not isinstance(op, ReplaceText):
                raise FixError(f"a fix mixes text edits with a {type(op).__name__}")
            ops.append(op)
        for index, line in _edited(self.lines, ops).items():
            self.lines[index] = line

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def replace_texts(text: str, ops: Iterable[ReplaceText]) -> str:
    """``text`` with the edits made in order, splitting and joining it once; raises
    :class:`FixError` when one is not at its place."""
    lines = text.split("\n")
    for index, line in _edited(lines, ops).items():
        lines[index] = line
    return "\n".join(lines)


def _edited(lines: list[str], ops: Iterable[ReplaceText]) -> dict[int, str]:
    """The new text of every line the edits touch (``lines`` is left as it is, so a failed edit
    changes nothing); raises :class:`FixError` when an edit is not at its place."""
    changed: dict[int, str] = {}
    for op in ops:
        if any(ch in edit for ch in "\r\n" for edit in (op.old, op.new)):
            raise FixError("a text edit may not add or remove line breaks")
        if not 1 <= op.line <= len(lines) or op.col < 1:
            raise FixError(f"line {op.line} does not exist")
        index = op.line - 1
        line = changed.get(index, lines[index])
        start = op.col - 1
        if line[start : start + len(op.old)] != op.old:
            raise FixError(f"line {op.line} no longer has {op.old!r} at column {op.col}")
        changed[index] = line[:start] + op.new + line[start + len(op.old) :]
    return changed
