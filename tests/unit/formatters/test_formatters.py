"""Output formats: SARIF validates against the 2.1.0 schema, JUnit parses back, annotations."""

from __future__ import annotations

import json
import re
import shutil

import jsonschema
from click.testing import CliRunner
from junitparser import JUnitXml
from repository import ROOT

from eksmllint.cli import cli
from eksmllint.core.registry import default_registry

SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text())
BAD = ROOT / "fixtures" / "rules" / "EML301-shm-missing" / "bad.yaml"
SUPPRESSED = ROOT / "fixtures" / "rules" / "EML006-unused-suppression" / "good.yaml"


def run(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_sarif_is_valid_and_names_rules_with_help():
    out = run("lint", "--format", "sarif", str(BAD), str(SUPPRESSED))
    doc = json.loads(out.output)
    jsonschema.validate(doc, SCHEMA)
    run_ = doc["runs"][0]
    rules = {r["id"]: r for r in run_["tool"]["driver"]["rules"]}
    assert set(rules) == {r.code for r in default_registry()}
    for result in run_["results"]:
        rule = rules[result["ruleId"]]
        assert rule["shortDescription"]["text"] and rule["help"]["text"] and rule["help"]["markdown"]
        assert "helpUri" not in rule  # no site publishes rule pages; the help text is inline
        region = result["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] >= 1
    assert not [r for r in run_["results"] if r.get("suppressions")]  # suppressed: left out
    shown = json.loads(run("lint", "--format", "sarif", "--show-suppressed", str(BAD), str(SUPPRESSED)).output)
    jsonschema.validate(shown, SCHEMA)
    suppressed = [r for r in shown["runs"][0]["results"] if r.get("suppressions")]
    assert suppressed and suppressed[0]["ruleId"] == "EML301"
    assert suppressed[0]["suppressions"][0]["kind"] == "inSource"


def test_junit_parses_back():
    out = run("lint", "--format", "junit", str(BAD))
    xml = JUnitXml.fromstring(out.output.encode())
    cases = [case for suite in xml for case in suite]
    assert any(
        case.name
        == "EML301 shm-missing: PyTorchJob training/llama-pretrain spec.pytorchReplicaSpecs.Worker.template.spec.containers[0].name"
        and case.result
        for case in cases
    )
    failure = next(case for case in cases if case.result).result[0]
    assert "EML301" in failure.type


def test_github_annotations():
    out = run("lint", "--format", "github", str(BAD))
    line = out.output.strip().splitlines()[0]
    assert re.match(
        r"^::warning file=[^,]+bad\.yaml,line=14,col=15,title=EML301 shm-missing::container 'pytorch'", line
    )


def test_gitlab_code_quality_fingerprints_are_stable(tmp_path):
    target = tmp_path / "bad.yaml"
    target.write_text(BAD.read_text())
    first = json.loads(run("lint", "--format", "gitlab", str(target)).output)
    target.write_text("# a new comment pushes every line down\n\n" + BAD.read_text())
    second = json.loads(run("lint", "--format", "gitlab", str(target)).output)
    assert first[0]["fingerprint"] == second[0]["fingerprint"]
    assert first[0]["location"]["lines"]["begin"] != second[0]["location"]["lines"]["begin"]


def test_output_file_and_terminal_text(tmp_path):
    target = tmp_path / "r.sarif"
    out = run("lint", "--format", "sarif", "--output", str(target), str(BAD))
    assert "EML301 [warning]" in out.output
    jsonschema.validate(json.loads(target.read_text()), SCHEMA)


def test_gate_options():
    assert run("lint", "--exit-zero", str(BAD)).exit_code == 0
    assert run("lint", "--fail-on", "error", "--max-warnings", "0", str(BAD)).exit_code == 1
    assert run("lint", "--fail-on", "error", "--max-warnings", "1", str(BAD)).exit_code == 0


def test_baseline_reports_only_new_findings(tmp_path):
    work = tmp_path / "repo"
    work.mkdir()
    shutil.copy(BAD, work / "a.yaml")
    baseline = tmp_path / "baseline.json"
    run("lint", "--write-baseline", str(baseline), str(work))
    assert run("lint", "--baseline", str(baseline), str(work)).exit_code == 0
    # the same resource moved down a few lines is still known
    (work / "a.yaml").write_text("# moved\n\n" + BAD.read_text())
    assert run("lint", "--baseline", str(baseline), str(work)).exit_code == 0
    # a new problem is reported, and only it
    (work / "b.yaml").write_text(BAD.read_text().replace("llama-pretrain", "llama-finetune"))
    out = run("lint", "--baseline", str(baseline), str(work))
    assert out.exit_code == 1
    assert "llama-finetune" in out.output and "training/llama-pretrain)" not in out.output.replace("suppressed", "")


def test_stale_baseline_entries_are_reported(tmp_path):
    baseline = tmp_path / "b.json"
    run("lint", "--write-baseline", str(baseline), str(BAD))
    good = ROOT / "fixtures" / "rules" / "EML301-shm-missing" / "good.yaml"
    result = CliRunner().invoke(cli, ["lint", "--baseline", str(baseline), str(good)])
    assert "stale baseline entry" in result.stderr


def test_invalid_baseline_is_a_usage_error(tmp_path):
    bad = tmp_path / "b.json"
    bad.write_text("{not json")
    assert run("lint", "--baseline", str(bad), str(BAD)).exit_code == 2


def test_code_frame_points_at_the_column():
    from eksmllint.formatters.frames import frame

    lines = ["spec:", "  containers:", "    - name: pytorch"]
    assert frame(lines, 3, 7) == ["  3 |     - name: pytorch", "    |       ^"]
    assert frame(lines, 9, 1) == []


def test_no_frames_in_pipes():
    out = run("lint", str(BAD))
    assert " | " not in out.output  # CliRunner is not a TTY
