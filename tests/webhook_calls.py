"""The webhook's ASGI app in process: a pod, a rule that crashes, and one request through httpx's
ASGI transport (no socket). Shared by the in-process and the end-to-end server tests."""

from __future__ import annotations

import asyncio

import builders as b
import httpx

from eksmllint.config import Config
from eksmllint.core.registry import Registry, default_registry
from eksmllint.core.rule import Rule, RuleSpec
from eksmllint.server.app import WebhookApp
from eksmllint.server.linting import AdmissionLinter
from eksmllint.server.settings import ServerSettings


def _spec(code: str, slug: str) -> RuleSpec:
    return RuleSpec.model_validate(
        {
            "code": code,
            "slug": slug,
            "severity": "warning",
            "fix": "no",
            "summary": "test rule",
            "check": "tests:none",
            "target": "resources",
            "description": "d",
            "rationale": "r",
        }
    )


def crash(ctx, resource):
    raise ZeroDivisionError("boom")


def registry_with(*extra: Rule) -> Registry:
    return Registry([*default_registry(), *extra])


#: A Job the webhook denies: EML601 (a GPU requested, not in limits).
BAD_JOB = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": {"name": "tokenize", "namespace": "ml"},
    "spec": {
        "template": {
            "spec": {
                "restartPolicy": "Never",
                "containers": [
                    {
                        "name": "t",
                        "image": "python:3.11.9-slim",
                        "resources": {"requests": {"nvidia.com/gpu": 1}, "limits": {"cpu": "2", "memory": "4Gi"}},
                    }
                ],
            }
        }
    },
}


POD = b.pod("p", b.container("c", "python:3.11.9-slim", limits={"cpu": "1", "memory": "1Gi"}))


def call(app: WebhookApp, path: str, body: dict) -> tuple[int, dict | str]:
    async def go():
        await app.startup()
        try:
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://test") as c:
                r = await c.post(path, json=body)
                return r.status_code, (r.json() if r.headers["content-type"].startswith("application/json") else r.text)
        finally:
            await app.shutdown()

    return asyncio.run(go())


def app_with(rule: Rule, **settings) -> WebhookApp:
    return WebhookApp(AdmissionLinter(Config(), registry_with(rule)), ServerSettings(**settings))
