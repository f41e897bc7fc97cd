"""Code frames under findings on a terminal, like ruff and rustc: the offending line and a caret."""

from __future__ import annotations

from eksmllint.core.finding import Finding
from eksmllint.formatters.safe import one_line
from eksmllint.resource import SourceFile


def frame(lines: list[str], line: int, col: int) -> list[str]:
    if not (0 < line <= len(lines)):
        return []
    width = len(str(line))
    text = one_line(lines[line - 1].replace("\t", " "))  # no terminal escapes from the file
    caret = " " * (max(col, 1) - 1) + "^"
    return [f"  {line:>{width}} | {text}", f"  {' ' * width} | {caret}"]


def with_frames(findings: list[Finding], rendered: list[str], files: list[SourceFile]) -> list[str]:
    sources = {f.path: f for f in files}
    out = []
    for f, text in zip(findings, rendered):
        out.append(text)
        src = sources.get(f.location.file)
        if src is not None and src.text is not None:
            out.extend(frame(src.lines, f.location.line, f.location.col))
    return out
