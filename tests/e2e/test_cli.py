"""The command line: exit codes, formats, rules/explain, README rule table."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from click.testing import CliRunner
from repository import ROOT

from eksmllint.cli import cli
from eksmllint.core.registry import default_registry
from eksmllint.docs import rules_markdown

EXAMPLES = ROOT / "fixtures" / "examples"
BAD = ROOT / "fixtures" / "rules" / "EML301-shm-missing" / "bad.yaml"
GOOD = ROOT / "fixtures" / "rules" / "EML301-shm-missing" / "good.yaml"


def run(*args, input=None):
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


def test_lint_exit_codes():
    assert run("lint", str(GOOD)).exit_code == 0
    bad = run("lint", str(BAD))
    assert bad.exit_code == 1
    assert re.search(r"bad\.yaml:\d+:\d+: EML301 \[warning\] .*\(PyTorchJob training/llama-pretrain\)", bad.output)
    assert "Found 1 finding" in bad.output
    assert run("lint", "--fail-on", "error", str(BAD)).exit_code == 0
    assert run("lint", "--fail-on", "never", str(BAD)).exit_code == 0


def test_usage_errors_exit_2(tmp_path):
    assert run("lint", str(tmp_path / "missing.yaml")).exit_code == 2
    proc = subprocess.run(
        [sys.executable, "-m", "eksmllint", "lint", "--format", "nope", str(GOOD)], capture_output=True, text=True
    )
    assert proc.returncode == 2 and "unknown format" in proc.stderr
    cfg = tmp_path / "c.yaml"
    cfg.write_text("bogus: 1\n")
    proc = subprocess.run(
        [sys.executable, "-m", "eksmllint", "lint", "--config", str(cfg), str(GOOD)], capture_output=True, text=True
    )
    assert proc.returncode == 2 and "unknown key 'bogus'" in proc.stderr and "Traceback" not in proc.stderr


def test_json_output_schema():
    out = run("lint", "--format", "json", str(BAD))
    doc = json.loads(out.output)
    assert doc["version"] == 1 and doc["summary"]["warning"] == 1
    (f,) = doc["findings"]
    assert {"code", "slug", "severity", "message", "file", "line", "column", "path", "resource"} <= set(f)
    assert f["resource"] == {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "namespace": "training",
        "name": "llama-pretrain",
    }


def test_stdin():
    out = run("lint", "-", input=BAD.read_text())
    assert out.exit_code == 1 and "<stdin>:" in out.output


@pytest.mark.parametrize("rule", list(default_registry()), ids=lambda r: r.code)
def test_explain_every_rule_by_code_and_slug(rule):
    by_code = run("explain", rule.code)
    assert by_code.exit_code == 0 and rule.slug in by_code.output
    assert run("explain", rule.slug).output == by_code.output


def test_explain_unknown_rule():
    assert run("explain", "EML999").exit_code == 2


def test_rules_table_lists_every_rule():
    out = run("rules").output
    for rule in default_registry():
        assert rule.code in out and rule.slug in out


def test_readme_rule_table_is_current():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start, end = "<!-- rules:start -->\n", "<!-- rules:end -->"
    assert start in readme and end in readme, "README lacks the generated rule table markers"
    table = readme.split(start, 1)[1].split(end, 1)[0]
    assert table == rules_markdown(default_registry()), (
        "run `python -m eksmllint rules --format markdown` and paste it into the README"
    )


def test_examples_lint_and_fail():
    out = run("lint", str(EXAMPLES))
    assert out.exit_code == 1 and "EML" in out.output


def test_ci_runs_exactly_the_readme_test_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(r"<!-- test-command -->\n```(?:sh|bash)?\n(.+?)\n```", readme)
    assert m, "README lacks the test command block"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert m.group(1) in ci


def test_lint_fix_applies_safe_fixes_then_lints(tmp_path):
    target = tmp_path / "job.yaml"
    target.write_text(BAD.read_text())
    out = run("lint", "--fix", str(target))
    assert out.exit_code == 0, out.output
    assert "mountPath: /dev/shm" in target.read_text()
    assert run("lint", str(target)).exit_code == 0
