"""Packaged data tables (YAML beside their module), read and validated with their pydantic model.

One reader for the tables of facts the code is driven by (``platform/*.yaml``,
``server/owners.yaml``, the instance catalogue, the rule files); each caller keeps its answer with
``functools.lru_cache``.

Parsing the YAML was most of what reading these tables cost at start-up (~0.1 G instructions of a
one-file lint), so :func:`parsed` keeps the *parse* (plain data, before validation) in the user
cache directory: pydantic still validates the tables on every run. An entry is keyed on the text
itself, the parse function, the eksmllint, Python and PyYAML versions and the parser's own source,
so it cannot be stale; it is ``marshal`` data (loading it never runs code) behind a digest of its
bytes, so a damaged or foreign file is a miss. Any read or write error is a miss too, never fatal.
``EKSMLLINT_TABLE_CACHE`` names another directory; set empty, it turns the cache off.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
import tempfile
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

_Model = TypeVar("_Model", bound=BaseModel)
FORMAT = 1
_DIGEST = 16  # bytes of blake2b over an entry's payload, in front of it


def load_table(model: type[_Model], path: Path) -> _Model:
    """The YAML table at ``path``, validated by ``model`` (pydantic raises on any problem)."""
    return model.model_validate(parsed(path.read_text(encoding="utf-8"), _yaml_load))


def packaged_data(text: str) -> Any:
    """A packaged YAML text's data as :func:`eksmllint.yamlpos.load_data` reads it (its errors carry
    the line), the parse kept in the cache: the rule files and the instance catalogue."""
    from eksmllint.yamlpos import load_data

    return parsed(text, load_data)


def _yaml_load(text: str) -> Any:
    import yaml  # libyaml's C loader when there is one

    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def cache_dir() -> Path | None:
    """Where parsed tables are kept: ``$EKSMLLINT_TABLE_CACHE``, else the user cache directory."""
    given = os.environ.get("EKSMLLINT_TABLE_CACHE")
    if given is not None:
        return Path(given) if given else None
    base = Path(os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"))
    return base / "eksmllint" / f"tables-v{FORMAT}" if base.is_absolute() else None  # no home: no cache


@lru_cache(maxsize=1)
def _salt() -> bytes:
    """What else decides a parse: versions, and the parser's source (a development checkout)."""
    import yaml

    from eksmllint import __version__, yamlevents, yamlnodes, yamlpos

    h = hashlib.blake2b(digest_size=16)
    h.update(f"{FORMAT}|{__version__}|{sys.version_info[:2]}|{marshal.version}|{yaml.__version__}".encode())
    for source in (__file__, yamlpos.__file__, yamlnodes.__file__, yamlevents.__file__):  # the parsers
        h.update(Path(source or "").read_bytes())
    return h.digest()


def parsed(text: str, parse: Callable[[str], Any]) -> Any:
    """``parse(text)`` as plain data, read from the cache when this text was parsed before.
    Errors of ``parse`` are raised as they are (nothing is cached for them)."""
    from eksmllint.yamlpos import to_plain  # not at import: `eksmllint --help` reads no table

    directory = cache_dir()
    if directory is None:
        return to_plain(parse(text))
    h = hashlib.blake2b(_salt(), digest_size=20)
    h.update(f"{parse.__module__}.{parse.__qualname__}\0".encode())
    h.update(text.encode("utf-8", "surrogatepass"))
    key = h.hexdigest()
    found = _read(directory / key, key)
    if found is not None:
        return found[0]
    data = to_plain(parse(text))
    _write(directory / key, key, data)
    return data


def _read(path: Path, key: str) -> tuple[Any] | None:
    """(data,) of the entry ``key`` at ``path``; None when it is missing, unreadable, damaged or
    another key's entry."""
    try:
        raw = path.read_bytes()
        payload = raw[_DIGEST:]
        if raw[:_DIGEST] != hashlib.blake2b(payload, digest_size=_DIGEST).digest():
            return None
        stored, data = marshal.loads(payload)
        return (data,) if stored == key else None
    except Exception:
        return None


def _write(path: Path, key: str, data: Any) -> None:
    """Store ``data`` atomically (a temporary file renamed), so concurrent runs never read half an
    entry; data marshal cannot hold (dates) and any OS error leave nothing behind."""
    try:
        payload = marshal.dumps((key, data))
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    except (ValueError, OSError):
        return
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(hashlib.blake2b(payload, digest_size=_DIGEST).digest() + payload)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
