"""Byte-for-byte output snapshots: `lint --format json`, `fix --diff` and the webhook's
AdmissionReview answers over the fixtures, the examples, the seed and the corpus.

A restructuring must not change a byte of them. A change in behaviour that is meant shows up here
as a diff to review; rewrite the snapshots with ``EKSMLLINT_UPDATE_SNAPSHOTS=1 pytest
tests/e2e/test_output_snapshots.py`` and say in the commit which findings changed and why.
Cases over the shared material (``../shared``: seed, corpus) come through the ``shared`` fixture
and skip when it is absent; the outputs name it ``../shared/`` wherever it is.
"""

from __future__ import annotations

import asyncio
import json
import os

import httpx
import pytest
from click.testing import CliRunner
from repository import ROOT

from eksmllint.cli import cli
from eksmllint.config import Config
from eksmllint.core.registry import default_registry
from eksmllint.loader import load
from eksmllint.server.app import WebhookApp
from eksmllint.server.linting import AdmissionLinter
from eksmllint.yamlpos import to_plain

SNAPSHOTS = ROOT / "tests" / "snapshots"
UPDATE = os.environ.get("EKSMLLINT_UPDATE_SNAPSHOTS") == "1"
#: How the outputs name the shared material, wherever it is (a worktree has it further up).
SHARED_AS = "../shared/"


def _cases() -> list[tuple[str, str, str]]:
    """(case name, "repo" or "shared", path relative to it) for every input that is snapshotted.
    The shared material is fixed, so its cases are the ones that have a snapshot."""
    cases = [("examples", "repo", "fixtures/examples")]
    cases += [
        (f"rule-{d.name}", "repo", f"fixtures/rules/{d.name}")
        for d in sorted((ROOT / "fixtures/rules").iterdir())
        if d.is_dir()
    ]
    cases.append(("seed", "shared", "seed/manifests"))
    corpus = sorted(p.stem for p in (SNAPSHOTS / "lint").glob("corpus-*.txt") if p.stem != "corpus-all")
    cases += [(name, "shared", f"corpus/realworld/{name.removeprefix('corpus-')}") for name in corpus]
    cases.append(("corpus-all", "shared", "corpus/realworld"))
    return cases


CASES = _cases()
#: The cases as parameters: the shared material's are slow (the corpus takes seconds).
PARAMS = [pytest.param(c, marks=pytest.mark.slow if c[1] == "shared" else (), id=c[0]) for c in CASES]


@pytest.fixture
def case_path(request) -> tuple[str, str]:
    """(the path to pass, relative to the repository root; the prefix that names the shared
    material in it). Shared cases go through the ``shared`` fixture and skip without it."""
    _, base, rel = request.param
    if base == "repo":
        return rel, SHARED_AS
    shared = request.getfixturevalue("shared")
    if not (shared / rel).exists():
        pytest.skip(f"{rel} is not in the shared material at {shared}")
    return os.path.relpath(shared / rel, ROOT), os.path.relpath(shared, ROOT) + "/"


def _run(shared_prefix: str, *args: str) -> str:
    cwd = os.getcwd()
    os.chdir(ROOT)  # paths in the outputs are relative to the repository root, as a CI run prints them
    try:
        result = CliRunner().invoke(cli, list(args), catch_exceptions=False, env={"NO_COLOR": "1"})
    finally:
        os.chdir(cwd)
    return f"exit {result.exit_code}\n{result.stdout}".replace(shared_prefix, SHARED_AS)


def _compare(kind: str, case: str, got: str) -> None:
    path = SNAPSHOTS / kind / f"{case}.txt"
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(got, encoding="utf-8")
        return
    assert path.exists(), f"no snapshot {path.relative_to(ROOT)}; create it with EKSMLLINT_UPDATE_SNAPSHOTS=1"
    expected = path.read_text(encoding="utf-8")
    assert got == expected, f"{kind} output of {case} changed (see {path.relative_to(ROOT)})"


@pytest.mark.parametrize("case_path", PARAMS, indirect=True)
def test_lint_json_is_unchanged(request, case_path):
    rel, prefix = case_path
    case = request.node.callspec.id
    _compare("lint", case, _run(prefix, "lint", "--format", "json", "--exit-zero", "--no-frames", "--jobs", "1", rel))


@pytest.mark.parametrize("case_path", PARAMS, indirect=True)
def test_fix_diff_is_unchanged(request, case_path):
    rel, prefix = case_path
    _compare("fix", request.node.callspec.id, _run(prefix, "fix", "--diff", "--unsafe-fixes", rel))


def _reviews(rel: str) -> list[dict]:
    """One AdmissionReview per Kubernetes object of the fixture folder, in load order."""
    loaded = load([str(ROOT / rel)])
    reviews = []
    for i, res in enumerate(loaded.resources):
        obj = to_plain(res.data)
        if not isinstance(obj, dict) or not obj.get("kind"):
            continue
        reviews.append(
            {
                "apiVersion": "admission.k8s.io/v1",
                "kind": "AdmissionReview",
                "request": {"uid": f"u-{i}", "operation": "CREATE", "namespace": "ml", "object": obj},
            }
        )
    return reviews


WEBHOOK_CASES = [(c, r) for c, base, r in CASES if base == "repo"]


@pytest.fixture  # one app per case: shutdown() closes the app's lint thread pool for good
def webhook_app():
    registry = default_registry()
    safe = [r.code for r in registry if r.spec.fix == "safe"]
    return WebhookApp(AdmissionLinter(Config(), registry, safe))


@pytest.mark.parametrize("case,rel", WEBHOOK_CASES, ids=[c for c, _ in WEBHOOK_CASES])
def test_webhook_answers_are_unchanged(case, rel, webhook_app):
    async def go() -> list[str]:
        await webhook_app.startup()
        try:
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=webhook_app), base_url="http://t") as c:
                out = []
                for body in _reviews(rel):
                    for endpoint in ("/validate", "/mutate"):
                        r = await c.post(endpoint, json=body)
                        out.append(f"{endpoint} {body['request']['uid']} {r.status_code} {r.text}")
                return out
        finally:
            await webhook_app.shutdown()

    _compare("webhook", case, "\n".join(asyncio.run(go())) + "\n")


def test_snapshots_cover_findings_fixes_and_denials():
    """The snapshots are not vacuous: they hold findings, diffs and denials (so a rule that
    silently stopped firing would show as a change, not as a pass)."""
    lint = json.loads((SNAPSHOTS / "lint" / "examples.txt").read_text().split("\n", 1)[1])
    assert len(lint["findings"]) >= 10
    fixes = "".join(p.read_text() for p in (SNAPSHOTS / "fix").glob("rule-*.txt"))
    assert fixes.count("\n+++ ") >= 20
    answers = "".join(p.read_text() for p in (SNAPSHOTS / "webhook").glob("*.txt"))
    assert '"allowed":false' in answers and '"patchType":"JSONPatch"' in answers
    assert "internal error" not in answers
