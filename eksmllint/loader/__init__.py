"""Find and read manifest files into documents and resources.

Every problem reading a file is returned as a :class:`LoadProblem` (an ``EML001`` finding later),
never raised: a linter that crashes on one bad file in a thousand is switched off.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from eksmllint.yamlpos import YList, YMap, load_yaml_stream
from eksmllint.resource import Document, Resource, SourceFile

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
SLURM_SUFFIXES = (".sbatch", ".slurm")
# Shell scripts are Slurm batch scripts only when their header says so (#SBATCH).
MAYBE_SLURM_SUFFIXES = (".sh", ".bash")
SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", ".tox"})
DEFAULT_MAX_BYTES = 5 * 1024 * 1024
STDIN = "-"

_SOURCE_RE = re.compile(r"^# Source: (.+?)\s*$")


@dataclass(frozen=True, slots=True)
class LoadProblem:
    file: str
    message: str
    line: int = 0
    col: int = 0
    code: str = "EML001"


@dataclass
class LoadResult:
    files: list[SourceFile] = field(default_factory=list)
    resources: list[Resource] = field(default_factory=list)
    problems: list[LoadProblem] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # paths given that do not exist


def discover(paths: Iterable[str], exclude: Iterable[str] = ()) -> tuple[list[str], list[str]]:
    """Expand directories (recursively, sorted) into candidate files; returns (files, missing)."""
    patterns = tuple(exclude)
    found: list[str] = []
    missing: list[str] = []
    seen: set[str] = set()

    def excluded(p: str) -> bool:
        norm = p.replace(os.sep, "/")
        return any(fnmatch.fnmatch(norm, pat) or fnmatch.fnmatch(os.path.basename(norm), pat) for pat in patterns)

    def add(p: str) -> None:
        if p not in seen:
            seen.add(p)
            found.append(p)

    for raw in paths:
        if raw == STDIN:
            add(STDIN)
            continue
        if os.path.isdir(raw):
            for root, dirs, files in os.walk(raw):
                dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not excluded(os.path.join(root, d)))
                for name in sorted(files):
                    full = os.path.join(root, name)
                    if excluded(full):
                        continue
                    if name.endswith(MANIFEST_SUFFIXES + SLURM_SUFFIXES + MAYBE_SLURM_SUFFIXES):
                        add(full)
        elif os.path.exists(raw):
            if not excluded(raw):
                add(raw)
        else:
            missing.append(raw)
    return found, missing


def read_source(path: str, max_bytes: int = DEFAULT_MAX_BYTES) -> tuple[SourceFile | None, LoadProblem | None]:
    """Read and decode one file (``-`` = stdin). Returns (file, problem); file None = skip silently."""
    display = "<stdin>" if path == STDIN else path
    try:
        if path == STDIN:
            raw = sys.stdin.buffer.read(max_bytes + 1)
        else:
            with open(path, "rb") as fh:
                raw = fh.read(max_bytes + 1)
    except OSError as err:
        return None, LoadProblem(display, f"cannot read file: {err.strerror or err}")
    if len(raw) > max_bytes:
        return SourceFile(display, None), LoadProblem(
            display, f"file is larger than the {max_bytes // (1024 * 1024)} MiB limit (max-file-size)"
        )
    if b"\x00" in raw[:8192]:
        return SourceFile(display, None), LoadProblem(display, "binary file (contains NUL bytes), not YAML/JSON")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        col = err.start - (raw.rfind(b"\n", 0, err.start) + 1) + 1
        return SourceFile(display, None), LoadProblem(display, "file is not valid UTF-8", line, col)
    kind = _file_kind(display, text)
    if kind is None:
        return None, None
    return SourceFile(display, text, kind), None


def _file_kind(path: str, text: str) -> str | None:
    lower = path.lower()
    if lower.endswith(SLURM_SUFFIXES):
        return "slurm"
    if lower.endswith(MAYBE_SLURM_SUFFIXES) or not lower.endswith(MANIFEST_SUFFIXES):
        head = text[:4096]
        if "#SBATCH" in head:
            return "slurm"
        if lower.endswith(MAYBE_SLURM_SUFFIXES):
            return None  # an ordinary shell script: not ours
    return "json" if lower.endswith(".json") else "yaml"


def parse_source(src: SourceFile) -> tuple[list[Resource], list[LoadProblem]]:
    """Parse a YAML/JSON source into documents (kept on ``src``) and Kubernetes resources."""
    if src.text is None or src.kind == "slurm":
        return [], []
    problems: list[LoadProblem] = []
    raw_docs, err = load_yaml_stream(src.text)
    if err is not None and src.kind == "json" and not raw_docs:
        # JSON that libyaml rejects (e.g. tabs inside flow context) may still be valid JSON.
        try:
            data = json.loads(src.text)
        except json.JSONDecodeError as jerr:
            problems.append(LoadProblem(src.path, f"invalid JSON: {jerr.msg}", jerr.lineno, jerr.colno))
        else:
            raw_docs, err = [_json_doc(data)], None
    if err is not None and not problems:
        problems.append(LoadProblem(src.path, _describe(err.message, src, err.line, err.col), err.line, err.col))
    sources = _helm_sources(src.text) if "# Source:" in src.text else []
    resources: list[Resource] = []
    prev_end = 0
    for index, raw in enumerate(raw_docs):
        template = _template_for(sources, prev_end, raw.start_line)
        prev_end = raw.end_line
        doc = Document(src, index, raw.data, raw.start_line, template)
        src.documents.append(doc)
        resources.extend(_resources_of(doc))
    return resources, problems


def _json_doc(data):
    from eksmllint.yamlpos import RawDocument

    def wrap(v):
        if isinstance(v, dict):
            m = YMap()
            m.start = (1, 1)
            for k, val in v.items():
                m[k] = wrap(val)
                m.pos[k] = (1, 1)
            return m
        if isinstance(v, list):
            seq = YList()
            seq.start = (1, 1)
            for item in v:
                seq.append(wrap(item))
                seq.pos.append((1, 1))
            return seq
        return v

    return RawDocument(wrap(data), 1, 1)


def _describe(message: str, src: SourceFile, line: int, col: int) -> str:
    if line and src.text is not None and "cannot start any token" in message:
        lines = src.lines
        if 0 < line <= len(lines) and "\t" in lines[line - 1][: max(col, 1)]:
            return "tab character in indentation (YAML allows only spaces)"
    return message


def _helm_sources(text: str) -> list[tuple[int, str]]:
    return [(no, m.group(1)) for no, line in enumerate(text.splitlines(), 1) if (m := _SOURCE_RE.match(line))]


def _template_for(sources: list[tuple[int, str]], after: int, before: int) -> str | None:
    found = None
    for line, name in sources:
        if after <= line < before:
            found = name
        elif line >= before:
            break
    return found


def _resources_of(doc: Document) -> list[Resource]:
    data = doc.data
    if not isinstance(data, YMap) or "kind" not in data:
        return []  # not a Kubernetes object (values files, plain config): not ours to judge
    if data.get("kind") == "List" and isinstance(data.get("items"), list):
        return [
            Resource(doc, item, ("items", i))
            for i, item in enumerate(data["items"])
            if isinstance(item, YMap)
        ]
    return [Resource(doc, data)]


def load(paths: Iterable[str], *, exclude: Iterable[str] = (), max_bytes: int = DEFAULT_MAX_BYTES,
         context_only: bool = False) -> LoadResult:
    """Discover, read and parse everything under ``paths``."""
    result = LoadResult()
    files, result.missing = discover(paths, exclude)
    for path in files:
        src, problem = read_source(path, max_bytes)
        if problem:
            result.problems.append(problem)
        if src is None:
            continue
        src.context_only = context_only
        result.files.append(src)
        resources, problems = parse_source(src)
        result.resources.extend(resources)
        result.problems.extend(problems)
    return result


__all__ = ["LoadProblem", "LoadResult", "discover", "load", "parse_source", "read_source", "Path"]
