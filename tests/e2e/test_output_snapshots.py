"""Byte-for-byte output snapshots: `lint --format json`, `fix --diff` and the webhook's
AdmissionReview answers over the fixtures, the examples, the seed and the corpus.

A restructuring must not change a byte of them. A change in behaviour that is meant shows up here
as a diff to review; rewrite the snapshots with ``EKSMLLINT_UPDATE_SNAPSHOTS=1 pytest
tests/e2e/test_output_snapshots.py`` and say in the commit which findings changed and why.
Cases over ``../shared`` (seed, corpus) skip when it is absent.
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
SHARED = ROOT.parent / "shared"
UPDATE = os.environ.get("EKSMLLINT_UPDATE_SNAPSHOTS") == "1"


def _cases() -> list[tuple[str, str]]:
    """(case name, path relative to the repository root) for every input that is snapshotted."""
    cases = [("examples", "fixtures/examples")]
    cases += [
        (f"rule-{d.name}", f"fixtures/rules/{d.name}")
        for d in sorted((ROOT / "fixtures/rules").iterdir())
        if d.is_dir()
    ]
    cases.append(("seed", "../shared/seed/manifests"))
    corpus = SHARED / "corpus" / "realworld"
    if corpus.is_dir():
        cases += [
            (f"corpus-{d.name}", f"../shared/corpus/realworld/{d.name}")
            for d in sorted(corpus.iterdir())
            if d.is_dir() and d.name != "licenses"
        ]
    cases.append(("corpus-all", "../shared/corpus/realworld"))
    return cases


CASES = _cases()


def _run(*args: str) -> str:
    cwd = os.getcwd()
    os.chdir(ROOT)  # paths in the outputs are relative to the repository root, as a CI run prints them
    try:
        result = CliRunner().invoke(cli, list(args), catch_exceptions=False, env={"NO_COLOR": "1"})
    finally:
        os.chdir(cwd)
    return f"exit {result.exit_code}\n{result.stdout}"


def _compare(kind: str, case: str, got: str) -> None:
    path = SNAPSHOTS / kind / f"{case}.txt"
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(got, encoding="utf-8")
        return
    assert path.exists(), f"no snapshot {path.relative_to(ROOT)}; create it with EKSMLLINT_UPDATE_SNAPSHOTS=1"
    expected = path.read_text(encoding="utf-8")
    assert got == expected, f"{kind} output of {case} changed (see {path.relative_to(ROOT)})"


def _need(rel: str) -> None:
    if not (ROOT / rel).exists():
        pytest.skip(f"{rel} is not present (the shared material lives beside the repository)")


@pytest.mark.parametrize("case,rel", CASES, ids=[c for c, _ in CASES])
def test_lint_json_is_unchanged(case, rel):
    _need(rel)
    _compare("lint", case, _run("lint", "--format", "json", "--exit-zero", "--no-frames", "--jobs", "1", rel))


@pytest.mark.parametrize("case,rel", CASES, ids=[c for c, _ in CASES])
def test_fix_diff_is_unchanged(case, rel):
    _need(rel)
    _compare("fix", case, _run("fix", "--diff", "--unsafe-fixes", rel))


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


WEBHOOK_CASES = [(c, r) for c, r in CASES if r.startswith("fixtures/")]


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
