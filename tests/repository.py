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

#: Set by .ci/run: what the end-to-end tests build in the background (control plane, image) must
#: be there (or being built); a skip would hide a failure.
E2E_REQUIRED = os.environ.get("EKSMLLINT_E2E_REQUIRED") == "1" or os.environ.get("CI", "").lower() == "true"


def find_shared() -> Path | None:
    """The shared folder, or None when it is absent. Tests reach it through the ``shared`` fixture."""
    named = os.environ.get(SHARED_ENV)
    if named:
        return Path(named).resolve() if Path(named).is_dir() else None
    for folder in ROOT.parents:
        if (folder / "shared" / "seed").is_dir():
            return folder / "shared"
    return None


#: The examples' EFA NodePool and one of the jobs that land on it (paths inside the examples).
EFA_POOL = "platform/karpenter/nodepool-h100-efa.yaml"
EFA_JOB = "jobs/pytorchjob-llama3-pretrain.yaml"


def examples_with_multi_zone_efa_pool(dest: Path) -> Path:
    """A copy of fixtures/examples whose EFA NodePool spans three zones (an EML101 error that
    needs the pool and its EFA jobs together), for the context and pre-commit tests."""
    import shutil

    shutil.copytree(ROOT / "fixtures" / "examples", dest)
    pool = dest / EFA_POOL
    text = pool.read_text(encoding="utf-8")
    one_zone = 'values: ["us-west-2a"]'
    assert one_zone in text, "the examples' EFA pool no longer pins us-west-2a: update this helper"
    pool.write_text(text.replace(one_zone, 'values: ["us-west-2a", "us-west-2b", "us-west-2c"]'), encoding="utf-8")
    return dest


def registry_unreachable() -> str | None:
    """Why pip cannot reach the package index (the last line of its error), None when it can:
    tests that install with pip (pre-commit's hook environment, the GitHub Action) skip with it."""
    import shutil
    import subprocess
    import sys
    import tempfile

    target = tempfile.mkdtemp(prefix="eksmllint-pip-probe-")
    try:
        probe = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", target, "hatchling"],
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        shutil.rmtree(target, ignore_errors=True)
    return None if probe.returncode == 0 else (probe.stderr.strip().splitlines() or ["pip failed"])[-1]
