"""An on-disk cache of parsed files (``--cache-dir``), for pre-commit hooks and editors.

What is cached is the parse of a file's text (:class:`~eksmllint.loader.files.ParsedText`: documents
with positions, and YAML problems), never findings: rules read the whole run (a NodePool in one
file changes what a pod in another may do), so every rule runs again on every run, over every
file, cached or not. The parse depends only on the text, the file kind (yaml/json) and the parser,
so the key is a hash of exactly those: the text, the kind, the eksmllint version, the Python
version and a digest of the parser's own source (a development checkout that changes the parser
never reads old entries). Config and rule packs do not change a parse, so they are not part of the
key and changing them keeps the cache warm.

Entries are ``marshal`` data (plain dicts, lists, tuples and strings), not pickle: loading a
cache entry can never run code, even from a cache directory someone else could write to. A
damaged or foreign entry is a miss, never an error. Writes are atomic (temporary file, then
rename), so concurrent runs (pre-commit runs hooks in parallel) do not see half-written entries.
Nothing is evicted; delete the directory to reclaim space.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from eksmllint import __version__
from eksmllint.loader.files import ParsedText
from eksmllint.yamlpos import YList, YMap

FORMAT = 1
_new_map = dict.__new__
_new_list = list.__new__


def _parser_digest() -> str:
    """Digest of the modules whose code decides what a parse yields."""
    h = hashlib.blake2b(digest_size=16)
    h.update(f"{FORMAT}|{__version__}|{sys.version_info[:2]}|{marshal.version}".encode())
    for mod in ("eksmllint.yamlpos", "eksmllint.loader.files", "eksmllint.loader.templates"):
        module = sys.modules.get(mod)
        path = getattr(module, "__file__", None)
        try:
            h.update(Path(path).read_bytes() if path else mod.encode())
        except OSError:
            h.update(mod.encode())
    return h.hexdigest()


def _encode(value: Any) -> Any:
    """YMap -> (0, start, {k: v}, pos); YList -> (1, start, [v], pos); scalars as they are.
    Tuples never occur in loaded data, so a tuple always marks a collection."""
    if isinstance(value, YMap):
        return (0, value.start, {k: _encode(v) for k, v in value.items()}, value.pos)
    if isinstance(value, YList):
        return (1, value.start, [_encode(v) for v in value], value.pos)
    if isinstance(value, dict):  # plain containers (not from the loader) are kept as they are
        return (2, {k: _encode(v) for k, v in value.items()})
    if isinstance(value, list):
        return (3, [_encode(v) for v in value])
    return value


def _decode(value: Any) -> Any:
    if type(value) is not tuple:
        return value
    tag = value[0]
    if tag == 0:
        _, start, items, pos = value
        out = _new_map(YMap)
        out.start = start
        out.pos = pos
        for k, v in items.items():
            out[k] = _decode(v) if type(v) is tuple else v
        return out
    if tag == 1:
        _, start, items, pos = value
        seq = _new_list(YList)
        seq.start = start
        seq.pos = pos
        seq.extend([_decode(v) if type(v) is tuple else v for v in items])
        return seq
    if tag == 2:
        return {k: _decode(v) for k, v in value[1].items()}
    if tag == 3:
        return [_decode(v) for v in value[1]]
    raise ValueError(f"unknown cache tag {tag!r}")


class ParseCache:
    """Parsed texts under ``directory`` (created on first write)."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        self._salt = _parser_digest().encode()
        self._root = self.directory / f"parse-v{FORMAT}"
        self.hits = 0
        self.misses = 0
        self.write_errors = 0

    def key(self, kind: str, text: str) -> str:
        h = hashlib.blake2b(self._salt, digest_size=20)
        h.update(kind.encode())
        h.update(b"\0")
        h.update(text.encode("utf-8", "surrogatepass"))
        return h.hexdigest()

    def _path(self, key: str) -> Path:
        return self._root / key[:2] / key

    def get(self, kind: str, text: str) -> ParsedText | None:
        """The cached parse of ``text``, or None (missing, unreadable or damaged)."""
        try:
            raw = self._path(self.key(kind, text)).read_bytes()
        except OSError:
            self.misses += 1
            return None
        try:
            docs, problems = marshal.loads(raw)
            parsed = ParsedText(
                [(_decode(data), int(start), int(end), template) for data, start, end, template in docs],
                [(str(m), int(line), int(col), str(code)) for m, line, col, code in problems],
            )
        except Exception:
            self.misses += 1
            return None
        self.hits += 1
        return parsed

    def put(self, kind: str, text: str, parsed: ParsedText) -> None:
        """Store a parse; a read-only or full disk only costs the speed-up, never the run."""
        path = self._path(self.key(kind, text))
        try:
            blob = marshal.dumps(
                (
                    [(_encode(data), start, end, template) for data, start, end, template in parsed.docs],
                    list(parsed.problems),
                )
            )
        except ValueError:  # unmarshallable value: should not happen for loaded YAML; skip
            self.write_errors += 1
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(blob)
                os.replace(tmp, path)
            except BaseException:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
                raise
        except OSError:
            self.write_errors += 1
