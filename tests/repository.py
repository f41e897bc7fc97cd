"""Where the repository and the shared material are, for tests at any depth below tests/
(conftest puts tests/ on sys.path)."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: The read-only material beside the repository (seed manifests, real-world corpus, reference).
#: EKSMLLINT_SHARED names it; otherwise a ``shared`` folder beside the checkout (a CI clone has
#: ``../shared``) or beside one of its parents (a git worktree kept in a subfolder).
SHARED_ENV = "EKSMLLINT_SHARED"


def find_shared() -> Path | None:
    """The shared folder, or None when it is absent. Tests reach it through the ``shared`` fixture."""
    named = os.environ.get(SHARED_ENV)
    if named:
        return Path(named).resolve() if Path(named).is_dir() else None
    for folder in ROOT.parents:
        if (folder / "shared" / "seed").is_dir():
            return folder / "shared"
    return None
