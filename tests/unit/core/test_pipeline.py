"""``lint`` and the webhook go through one pipeline (eksmllint.core.engine.Linter): severity
overrides, suppression, crash isolation and order are the same whichever door an object comes in."""

from __future__ import annotations

import json

from eksmllint.config import Config
from eksmllint.core.engine import lint_text
from eksmllint.core.registry import Registry, default_registry
from eksmllint.core.rule import Rule, RuleSpec
from eksmllint.server.linting import AdmissionLinter


def _crash(ctx, resource):
    raise ZeroDivisionError("boom")


CRASH = Rule(
    RuleSpec.model_validate(
        {
            "code": "EML996",
            "slug": "test-crash",
            "severity": "warning",
            "fix": "no",
            "summary": "test rule",
            "check": "tests:none",
            "target": "resources",
            "description": "d",
            "rationale": "r",
        }
    ),
    _crash,
)
POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "trainer", "namespace": "ml", "annotations": {"eksmllint.io/ignore": "EML301 # tested"}},
    "spec": {
        "restartPolicy": "Never",
        "containers": [
            {
                "name": "train",
                "image": "public.ecr.aws/pytorch/pytorch:latest",
                "command": ["torchrun", "--nproc_per_node=8", "train.py"],
                "resources": {"limits": {"nvidia.com/gpu": 8, "cpu": "90", "memory": "1000Gi"}},
            }
        ],
    },
}


def _key(f) -> tuple:
    # Where a finding points differs (a file has lines, an admitted object has none); what it is must not.
    return (f.code, f.slug, str(f.severity), f.message.replace("<admission>", "pod.json"), f.suppressed_by)


def test_lint_and_the_webhook_report_the_same_findings_with_overrides_suppression_and_crashes():
    registry = Registry([*default_registry(), CRASH])
    cfg = Config.model_validate({"severity": {"EML807": "error"}, "extend-select": ["EML996"]})
    cli = lint_text(json.dumps(POD, indent=2), cfg, "pod.json", registry)
    webhook = AdmissionLinter(cfg, registry).lint(POD)
    assert sorted(map(_key, webhook.findings)) == sorted(map(_key, cli.findings))
    codes = {(f.code, str(f.severity), f.suppressed_by is not None) for f in webhook.findings}
    assert any(code == "EML301" and suppressed for code, _, suppressed in codes)  # the annotation
    assert ("EML807", "error", False) in codes  # the override
    assert ("EML000", "error", False) in codes  # the crash, as a finding
