"""Packaged data tables (YAML beside their module), read and validated with their pydantic model.

One reader for the tables of facts the code is driven by (``platform/*.yaml``,
``server/owners.yaml``); each caller keeps its answer with ``functools.lru_cache``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

_Model = TypeVar("_Model", bound=BaseModel)


def load_table(model: type[_Model], path: Path) -> _Model:
    """The YAML table at ``path``, validated by ``model`` (pydantic raises on any problem)."""
    import yaml  # libyaml's C loader when there is one: these tables are read at start-up

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return model.model_validate(yaml.load(path.read_text(encoding="utf-8"), Loader=loader))
