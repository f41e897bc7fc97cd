"""A broken context file (issue 16 item 6): reported in the log and the metrics, the rest of the
context is used, and the webhook stays ready (one `!!bool maybe` kept /readyz at 503 forever)."""

from __future__ import annotations

import asyncio

import builders as b
import httpx
import pytest

from eksmllint.config import Config
from eksmllint.core.registry import default_registry
from eksmllint.server.app import WebhookApp
from eksmllint.server.context import ContextStore, DirectoryContext
from eksmllint.server.linting import AdmissionLinter

NODEPOOL = b.manifest(b.nodepool("a100", b.requirement(b.INSTANCE_TYPE, "p4d.24xlarge")))
BROKEN = {
    # `!!bool maybe` is read as the text "maybe" since the loader's central fix (issue 16 item 5):
    # a duplicate key is what still makes a file unloadable
    "duplicate-key.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata:\n  a: '1'\n  a: '2'\n",
    "unclosed.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: z\n",
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_broken_context_file_is_reported_and_the_webhook_stays_ready(tmp_path, name, caplog):
    (tmp_path / "pools.yaml").write_text(NODEPOOL)
    (tmp_path / name).write_text(BROKEN[name])
    store = ContextStore([DirectoryContext(str(tmp_path))], interval=60)
    app = WebhookApp(AdmissionLinter(Config(), default_registry()), store=store)

    async def go():
        await app.startup()
        await asyncio.to_thread(app.warmed.wait, 60)  # readiness waits for the start-up lints
        try:
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
                return (await c.get("/readyz")).status_code, (await c.get("/metrics")).text
        finally:
            await app.shutdown()

    ready, metrics = asyncio.run(go())
    assert ready == 200
    assert store.snapshot.counts.get("NodePool") == 1  # the good file is still context
    problems = [line for line in metrics.splitlines() if line.startswith("eksmllint_webhook_context_problems ")]
    assert problems and float(problems[0].split()[1]) >= 1, metrics
    assert name in caplog.text
