import sys
from pathlib import Path

import pytest

# tests import small helper modules that live beside them (builders, repository, catalogue_contract)
sys.path.insert(0, str(Path(__file__).parent))

from repository import SHARED_ENV, find_shared  # found through the path above


@pytest.fixture(scope="session")
def shared() -> Path:
    """The shared material (``../shared``: seed manifests, real-world corpus): the only way a test
    reads a path outside the repository. Skips the test when it is absent."""
    folder = find_shared()
    if folder is None:
        pytest.skip(f"no shared material beside the repository (../shared, or set {SHARED_ENV})")
    return folder
