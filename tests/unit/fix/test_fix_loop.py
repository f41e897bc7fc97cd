"""One fix loop and one pass cap for ``eksmllint fix`` and the mutating webhook."""

from __future__ import annotations

from eksmllint.config import Config
from eksmllint.core.finding import Applicability, Fix, SetValue
from eksmllint.core.registry import Registry
from eksmllint.core.rule import Rule, RuleSpec
from eksmllint.fix import fix_text
from eksmllint.fix.loop import MAX_PASSES, fix_until_settled
from eksmllint.server.linting import AdmissionLinter


def _runaway(ctx, resource):
    """A fix that never clears its finding: it counts an annotation up, a new text every pass."""
    ann = resource.metadata.get("annotations") or {}
    n = int(ann.get("n", 0)) + 1
    path = ("metadata", "annotations", "n")
    yield ctx.report(resource, path, f"count {n}", fix=Fix("count", (SetValue(path, str(n)),), Applicability.SAFE))


RUNAWAY = Rule(
    RuleSpec.model_validate(
        {
            "code": "EML997",
            "slug": "test-runaway",
            "severity": "warning",
            "fix": "safe",
            "summary": "test rule",
            "check": "tests:none",
            "target": "resources",
            "description": "d",
            "rationale": "r",
            "fix-description": "counts up",
        }
    ),
    _runaway,
)
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}}
POD_YAML = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n"


def test_the_loop_stops_after_the_cap_and_hands_what_is_pending_to_give_up():
    applied: list[int] = []
    given_up: list[str] = []

    def apply(todo: str, pass_no: int) -> bool:
        applied.append(pass_no)
        return True

    result = fix_until_settled(lambda: "pending", lambda r: r, apply, given_up.append, max_passes=3)
    assert applied == [1, 2, 3] and given_up == ["pending"] and result == "pending"


def test_the_loop_stops_when_a_pass_changes_nothing():
    calls: list[int] = []
    fix_until_settled(lambda: "x", lambda r: r, lambda todo, n: calls.append(n) is not None, lambda _: None)
    assert calls == [1]


def test_fix_and_the_webhook_give_up_on_a_runaway_fix_after_the_same_number_of_passes():
    registry = Registry([RUNAWAY])
    cli = fix_text(POD_YAML, Config(), registry=registry)
    assert cli.fixed == POD_YAML and cli.passes == MAX_PASSES
    assert cli.error == f"fixes did not settle after {MAX_PASSES} passes; file left unchanged"
    webhook = AdmissionLinter(Config(), registry, ["EML997"]).mutate(POD)
    assert webhook.patch == [] and webhook.patched == POD
    assert webhook.errors == [f"fixes did not settle after {MAX_PASSES} passes; no patch"]
