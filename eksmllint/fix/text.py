"""Text edits (:class:`~eksmllint.core.finding.ReplaceText`) for files that are not YAML documents.

A Slurm batch script has no document tree to splice into, so its fixes name the exact text they
replace and where it starts. Each edit is checked against the text before it is made: a script
that changed since it was linted is refused, never edited in the wrong place.
"""

from __future__ import annotations

from collections.abc import Iterable

from eksmllint.core.finding import Fix, ReplaceText
from eksmllint.fix.spans import FixError


def apply_text_edits(text: str, fix: Fix) -> str:
    """``text`` with the fix's edits made in order; raises :class:`FixError` when one does not match."""
    ops = []
    for op in fix.ops:
        if not isinstance(op, ReplaceText):
            raise FixError(f"a fix mixes text edits with a {type(op).__name__}")
        ops.append(op)
    return replace_texts(text, ops)


def replace_text(text: str, op: ReplaceText) -> str:
    """``text`` with one edit made; raises :class:`FixError` when ``op.old`` is not at its place."""
    return replace_texts(text, (op,))


def replace_texts(text: str, ops: Iterable[ReplaceText]) -> str:
    """``text`` with the edits made in order, splitting and joining it once (a script may carry
    thousands of them); raises :class:`FixError` when one is not at its place."""
    lines = text.split("\n")  # lines as the shell and the Slurm parser count them (launch.slurm.script_lines)
    for op in ops:
        if any(ch in edit for ch in "\r\n" for edit in (op.old, op.new)):
            raise FixError("a text edit may not add or remove line breaks")
        if not 1 <= op.line <= len(lines) or op.col < 1:
            raise FixError(f"line {op.line} does not exist")
        line = lines[op.line - 1]
        start = op.col - 1
        if line[start:start + len(op.old)] != op.old:
            raise FixError(f"line {op.line} no longer has {op.old!r} at column {op.col}")
        lines[op.line - 1] = line[:start] + op.new + line[start + len(op.old):]
    return "\n".join(lines)
