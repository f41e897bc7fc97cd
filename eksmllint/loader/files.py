"""Read and parse one file: its bytes, its text, its kind, its documents with positions.

The unit of work of the loader (:func:`load_file`), whether files are read in this process or in
worker processes (:mod:`eksmllint.loader.workers`); :mod:`eksmllint.loader` walks the paths and
assembles the run.
"""

from __future__ import annotations

import gc
import json
import re
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from eksmllint.loader import templates
from eksmllint.resource import Document, Resource, SourceFile
from eksmllint.yamlpos import (
    MAX_DEPTH,
    MAX_DOCUMENTS,
    DuplicateJSONKey,
    RawDocument,
    YAMLLoadError,
    YList,
    YMap,
    duplicate_json_key_line,
    load_yaml_stream,
    objects_of,
    objects_over_budget,
    unique_json_pairs,
)

if TYPE_CHECKING:
    from eksmllint.cache import ParseCache

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
SLURM_SUFFIXES = (".sbatch", ".slurm")
# Shell scripts are Slurm batch scripts only when their header says so (#SBATCH).
MAYBE_SLURM_SUFFIXES = (".sh", ".bash")

DEFAULT_MAX_BYTES = 5 * 1024 * 1024
STDIN = "-"
#: How stdin is named in findings and reports when ``--stdin-filename`` does not name it.
STDIN_NAME = "<stdin>"
_SOURCE_RE = re.compile(r"^# Source: (.+?)\s*$")


@dataclass(frozen=True, slots=True)
class LoadProblem:
    file: str
    message: str
    line: int = 0
    col: int = 0
    code: str = "EML001"
    detail: str | None = None  # the finding's detail (why, what to do)


def display_name(path: str, stdin_name: str | None = None) -> str:
    """The name a file goes by in findings, reports and baselines: for stdin, the path
    ``--stdin-filename`` gives (ruff's convention), else ``<stdin>``."""
    return (stdin_name or STDIN_NAME) if path == STDIN else path


def read_bytes(
    path: str, max_bytes: int = DEFAULT_MAX_BYTES, stdin_name: str | None = None
) -> tuple[bytes | None, LoadProblem | None]:
    """The bytes of one file (``-`` = stdin), never more than ``max_bytes`` + 1 of them in memory;
    (None, problem) when it cannot be read."""
    display = display_name(path, stdin_name)
    try:
        if path == STDIN:
            return sys.stdin.buffer.read(max_bytes + 1), None
        with open(path, "rb") as fh:
            return fh.read(max_bytes + 1), None
    except OSError as err:
        return None, LoadProblem(display, f"cannot read file: {err.strerror or err}")


def decode(display: str, raw: bytes, max_bytes: int = DEFAULT_MAX_BYTES) -> tuple[str | None, LoadProblem | None]:
    """The text of a file's bytes, or (None, why not): too large, binary, not UTF-8."""
    if len(raw) > max_bytes:
        return None, LoadProblem(
            display, f"file is larger than the {max_bytes // (1024 * 1024)} MiB limit (max-file-size)"
        )
    if b"\x00" in raw[:8192]:
        return None, LoadProblem(display, "binary file (contains NUL bytes), not YAML/JSON")
    try:
        return raw.decode("utf-8-sig"), None
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        col = err.start - (raw.rfind(b"\n", 0, err.start) + 1) + 1
        return None, LoadProblem(display, "file is not valid UTF-8", line, col)


def read_source(
    path: str, max_bytes: int = DEFAULT_MAX_BYTES, stdin_name: str | None = None
) -> tuple[SourceFile | None, LoadProblem | None]:
    """Read and decode one file (``-`` = stdin). Returns (file, problem); (None, None): not ours (the run lists it as skipped)."""
    display = display_name(path, stdin_name)
    raw, problem = read_bytes(path, max_bytes, stdin_name)
    if raw is None:
        return None, problem
    text, problem = decode(display, raw, max_bytes)
    if text is None:
        return SourceFile(display, None), problem
    kind = file_kind(display, text)
    if kind is None:
        return None, None
    return SourceFile(display, text, kind), None


def file_kind(path: str, text: str) -> str | None:
    # A template is judged by the name it has once rendered: fsdp.yaml-template is YAML.
    lower, templated = templates.untemplated_name(path.lower())
    if lower.endswith(SLURM_SUFFIXES):
        return "slurm"
    if lower.endswith(MAYBE_SLURM_SUFFIXES) or not lower.endswith(MANIFEST_SUFFIXES):
        head = text[:4096]
        if "#SBATCH" in head:
            return "slurm"
        if lower.endswith(MAYBE_SLURM_SUFFIXES):
            return None  # an ordinary shell script: not ours
        if templated and not templates.looks_like_manifest(text):
            return None  # a bare *.template of something else (a config, a README)
    return "json" if lower.endswith(".json") else "yaml"


@dataclass(slots=True)
class ParsedText:
    """What parsing one file's text yields, independent of where the file lives: documents as
    (data, start line, end line, Helm template) and problems as (message, line, col, code).

    Plain data on purpose: it is what worker processes send back (:mod:`eksmllint.loader.workers`) and
    what the parse cache stores (:mod:`eksmllint.cache`).
    """

    docs: list[tuple[Any, int, int, str | None]]
    problems: list[tuple[str, int, int, str]]


def parse_text(text: str, kind: str) -> ParsedText:
    """Parse a YAML/JSON text into documents with positions (no file, no resources)."""
    problems: list[tuple[str, int, int, str]] = []
    raw_docs, err = load_yaml_stream(text)
    if err is not None and kind == "json" and not raw_docs:
        raw_docs, err = _json_fallback(text)
    if err is not None:
        message = _describe_text(err.message, text, err.line, err.col)
        if templates.template_syntax_at(text, err.line):  # {{ }} syntax is the renderer's, not broken YAML
            problems.append(
                (templates.template_parse_message(message, err.line), err.line, err.col, templates.TEMPLATE_CODE)
            )
        else:
            problems.append((message, err.line, err.col, "EML001"))
    sources = _helm_sources(text) if "# Source:" in text else []
    docs = []
    prev_end = 0
    for raw in raw_docs:
        template = _template_for(sources, prev_end, raw.start_line) if sources else None
        prev_end = raw.end_line
        docs.append((raw.data, raw.start_line, raw.end_line, template))
    return ParsedText(docs, problems)


def attach(src: SourceFile, parsed: ParsedText) -> tuple[list[Resource], list[LoadProblem]]:
    """Turn parsed text into the file's documents (kept on ``src``) and Kubernetes resources.

    The items of a ``kind: List`` count like documents against the file's document budget
    (:data:`~eksmllint.yamlpos.MAX_DOCUMENTS`): the objects past it are reported, not linted."""
    resources: list[Resource] = []
    problems = [LoadProblem(src.path, message, line, col, code) for message, line, col, code in parsed.problems]
    for index, (data, start_line, _end, template) in enumerate(parsed.docs):
        doc = Document(src, index, data, start_line, template)
        src.documents.append(doc)
        found = _resources_of(doc)
        room = MAX_DOCUMENTS - len(resources)
        if len(found) > room:
            resources.extend(found[:room])
            where = found[room].location(())
            problems.append(
                LoadProblem(
                    src.path,
                    objects_over_budget(MAX_DOCUMENTS),
                    where.line,
                    where.col,
                )
            )
            break
        resources.extend(found)
    return resources, problems


def objects_in(parsed: ParsedText) -> int:
    """Objects the documents hold: a ``kind: List`` counts its items, any other document one
    (what the run's document budget counts)."""
    return sum(objects_of(data) for data, *_ in parsed.docs)


def parse_source(src: SourceFile) -> tuple[list[Resource], list[LoadProblem]]:
    """Parse a YAML/JSON source into documents (kept on ``src``) and Kubernetes resources."""
    if src.text is None or src.kind == "slurm":
        return [], []
    return attach(src, parse_text(src.text, src.kind))


def _json_fallback(text: str) -> tuple[list[RawDocument], YAMLLoadError | None]:
    """A ``.json`` file libyaml rejects may still be valid JSON.

    What it rejects in practice are tabs between tokens (fine in JSON, not in YAML flow
    context). In valid JSON a tab can only stand between tokens, so the text with each tab
    turned into a space means the same and keeps every line and column: it is loaded again as
    YAML, with the YAML loader's positions and limits (depth, alias size, duplicate keys).
    Anything else goes to the JSON parser, under the same depth limit and duplicate-key check.
    """
    if "\t" in text:
        docs, err = load_yaml_stream(text.replace("\t", " "))
        if err is None:
            return docs, None
    try:
        return [_json_doc(json.loads(text, object_pairs_hook=unique_json_pairs))], None
    except json.JSONDecodeError as err:
        return [], YAMLLoadError(f"invalid JSON: {err.msg}", err.lineno, err.colno)
    except DuplicateJSONKey as dup:
        return [], YAMLLoadError(f'duplicate key "{dup.key}"', duplicate_json_key_line(text, dup.key) or 0)
    except YAMLLoadError as err:
        return [], err
    except RecursionError:
        return [], YAMLLoadError(f"nesting deeper than {MAX_DEPTH} levels")
    except ValueError as err:  # e.g. an integer longer than Python's 4,300-digit limit
        return [], YAMLLoadError(f"invalid JSON: {err}")


def _json_doc(data: Any) -> RawDocument:
    def wrap(v, depth=0):
        if depth > MAX_DEPTH and isinstance(v, (dict, list)):
            raise YAMLLoadError(f"nesting deeper than {MAX_DEPTH} levels")
        if isinstance(v, dict):
            m = YMap()
            m.start = (1, 1)
            for k, val in v.items():
                m[k] = wrap(val, depth + 1)
                m.pos[k] = (1, 1)
            return m
        if isinstance(v, list):
            seq = YList()
            seq.start = (1, 1)
            for item in v:
                seq.append(wrap(item, depth + 1))
                seq.pos.append((1, 1))
            return seq
        return v

    return RawDocument(wrap(data), 1, 1)


def _describe(message: str, src: SourceFile, line: int, col: int) -> str:
    return _describe_text(message, src.text or "", line, col)


def _describe_text(message: str, text: str, line: int, col: int) -> str:
    if line and "cannot start any token" in message:
        lines = text.splitlines()
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
        return [Resource(doc, item, ("items", i)) for i, item in enumerate(data["items"]) if isinstance(item, YMap)]
    return [Resource(doc, data)]


_gc_lock = threading.Lock()
_gc_depth = 0
_gc_paused_state = {"was_enabled": True}


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a large tree of live objects is built.

    Loading allocates hundreds of thousands of dicts, lists and tuples that all stay alive; every
    generation-2 collection on the way re-scans everything loaded so far, which cost ~40% of the
    loading time (bench/README.md). Nothing freed during loading is cyclic garbage worth waiting
    for. Re-entrant and thread-safe (the webhook loads in threads): the collector is re-enabled
    when the outermost pause ends, and only if it was enabled before.

    When the outermost pause ends, what it kept alive moves to the oldest generation (freeze,
    then unfreeze): left in the youngest, the first collection after the pause would scan every
    object loaded (0.5 s at 10,000 documents).
    """
    global _gc_depth
    with _gc_lock:
        if _gc_depth == 0:
            _gc_paused_state["was_enabled"] = gc.isenabled()
            gc.disable()
        _gc_depth += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_depth -= 1
            if _gc_depth == 0:
                gc.freeze()
                gc.unfreeze()
                if _gc_paused_state["was_enabled"]:
                    gc.enable()


@dataclass(slots=True)
class FileLoad:
    """One discovered path after reading and parsing (what :func:`load_file` returns)."""

    path: str
    src: SourceFile | None
    problem: LoadProblem | None  # reading it (unreadable, binary, too large ...)
    parsed: ParsedText | None = None  # None: not parsed (unreadable, or a Slurm script)
    skipped: str | None = None  # why it was read but not linted
    chart: str | None = None  # the Helm chart it is a template of (skipped: render first)


def load_file(
    path: str, max_bytes: int = DEFAULT_MAX_BYTES, cache: ParseCache | None = None, stdin_name: str | None = None
) -> FileLoad:
    """Read and parse one file; the unit of work of both the serial and the parallel loader.
    Stdin named by ``stdin_name`` is judged by that name, as the file would be."""
    src, problem = read_source(path, max_bytes, stdin_name)
    path = display_name(path, stdin_name) if stdin_name else path
    if src is None and problem is None:  # not ours (a shell script, _helpers.tpl): say why
        if chart := templates.chart_of(path):
            return FileLoad(path, None, None, skipped=templates.chart_skip_reason(chart), chart=chart)
        return FileLoad(path, None, None, skipped=templates.skip_reason(path.lower()))
    if src is not None and src.text is not None and (chart := templates.chart_source(path, src.text)):
        return FileLoad(path, None, problem, skipped=templates.chart_skip_reason(chart), chart=chart)
    if src is not None and src.kind == "slurm" and (line := templates.script_template_line(path, src.text or "")):
        reason = templates.script_template_message()
        return FileLoad(path, None, LoadProblem(src.path, reason, line, 1, templates.TEMPLATE_CODE), skipped=reason)
    if src is None or src.text is None or src.kind == "slurm":
        return FileLoad(path, src, problem)
    parsed = cache.get(src.kind, src.text) if cache is not None else None
    if parsed is None:
        try:
            parsed = parse_text(src.text, src.kind)
        except Exception as exc:
            message = f"internal error while parsing: {type(exc).__name__}: {exc}"
            return FileLoad(path, src, LoadProblem(src.path, message, code="EML000"))
        if cache is not None:
            cache.put(src.kind, src.text, parsed)
    return FileLoad(path, src, problem, parsed)
