"""Everyday use of the command line (issue 25): what a run read, several reports in one run,
the conventions of ruff and kube-linter, ``fix --check`` exit codes."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from click.testing import CliRunner
from repository import ROOT

from eksmllint.cli import cli

EXAMPLES = ROOT / "fixtures" / "examples"
BAD = ROOT / "fixtures" / "rules" / "EML301-shm-missing" / "bad.yaml"


def run(*args, input=None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=input, catch_exceptions=False)


# -- item 2: a run that linted nothing says so ---------------------------------------------------
def test_the_summary_says_how_many_files_and_objects_were_linted():
    out = run("lint", BAD).output.splitlines()
    assert out[-2] == "Linted 1 file, 1 object."
    assert out[-1].startswith("Found 1 finding")


def test_an_empty_directory_warns_and_fails_when_asked(tmp_path):
    (tmp_path / "values.yaml").write_text("replicas: 3\n")  # no kind: not a Kubernetes object
    plain = run("lint", tmp_path)
    assert plain.exit_code == 0
    assert "warning: nothing was linted" in plain.stderr and "Linted 1 file, 0 objects." in plain.stdout
    strict = run("lint", "--fail-if-nothing-linted", tmp_path)
    assert strict.exit_code == 2 and "error: nothing was linted" in strict.stderr
    assert run("lint", "--fail-if-nothing-linted", BAD).exit_code == 1  # something was linted: findings decide


def test_a_missing_path_is_an_error_and_nothing_else(tmp_path):
    result = run("lint", tmp_path / "nope")
    assert result.exit_code == 2
    assert "path does not exist" in result.stderr and "Found" not in result.stdout


# -- item 4: several reports per run -------------------------------------------------------------
def test_several_reports_in_one_run(tmp_path):
    sarif, junit = tmp_path / "r.sarif", tmp_path / "r.xml"
    result = run("lint", "--format", f"sarif:{sarif}", "--format", f"junit:{junit}", "--format", "json", BAD)
    assert result.exit_code == 1
    assert json.loads(result.stdout)["summary"]["total"] == 1  # the one report without a file: stdout
    assert json.loads(sarif.read_text())["runs"][0]["results"][0]["ruleId"] == "EML301"
    assert ET.parse(junit).getroot().get("failures") == "1"


def test_two_reports_cannot_share_stdout_and_formats_are_a_fixed_list(tmp_path):
    both = run("lint", "--format", "json", "--format", "sarif", BAD)
    assert both.exit_code == 2 and "only one report can go to stdout" in both.stderr
    assert run("lint", "--output", tmp_path / "x", "--format", f"json:{tmp_path / 'y'}", BAD).exit_code == 2
    helped = run("lint", "--help").stdout
    assert "[text|json|sarif|github|gitlab|junit|html][:FILE]" in helped


def test_output_means_the_same_in_lint_and_graph(tmp_path):
    for command, fmt, head in (("lint", "json", "{"), ("graph", "json", "{")):
        target = tmp_path / f"{command}.json"
        run(command, "--format", fmt, "--output", target, BAD)
        shorthand = tmp_path / f"{command}-2.json"
        run(command, "--format", f"{fmt}:{shorthand}", BAD)
        assert target.read_text().startswith(head) and target.read_text() == shorthand.read_text()
    graph = run("graph", "--format", f"dot:{tmp_path / 'g.dot'}", "--format", "mermaid", BAD)
    assert graph.stdout.startswith(("flowchart", "graph")) and (tmp_path / "g.dot").read_text().startswith("digraph")


# -- item 6: conventions people expect -----------------------------------------------------------
def test_quiet_prints_the_findings_only():
    lines = run("lint", "-q", BAD).stdout.splitlines()
    assert len(lines) == 1 and " EML301 " in lines[0]


def test_statistics_count_per_rule():
    out = run("lint", "--statistics", EXAMPLES).stdout.splitlines()
    counts = json.loads(run("lint", "--format", "json", EXAMPLES).stdout)["findings"]
    active = [f for f in counts if not f["suppressed"]]
    stats = {line.split()[1]: int(line.split()[0]) for line in out if line.split()[1].startswith("EML")}
    assert stats == {code: sum(1 for f in active if f["code"] == code) for code in {f["code"] for f in active}}
    assert out[-1].startswith("Found ")


def test_show_config_prints_the_merged_configuration(tmp_path, monkeypatch):
    (tmp_path / ".eksmllint.yaml").write_text("ignore: [EML609]\n")
    monkeypatch.chdir(tmp_path)
    out = run("lint", "--show-config", "--kubernetes-version", "1.31").stdout
    assert ".eksmllint.yaml" in out.splitlines()[0]
    assert "kubernetes-version: '1.31'" in out and "- EML609" in out


def test_a_mistyped_command_names_the_closest():
    result = run("lnt", BAD)
    assert result.exit_code == 2 and "Did you mean 'lint'?" in result.stderr


def test_explain_takes_the_number_alone():
    assert run("explain", "301").stdout.startswith("EML301 shm-missing")
    assert "did you mean shm-missing" in run("explain", "shm-mising").stderr


def test_fix_check_exit_codes(tmp_path):
    job = tmp_path / "job.yaml"
    job.write_text(BAD.read_text())
    assert run("fix", "--check", job).exit_code == 1  # fixes pending
    run("fix", job)
    assert run("fix", "--check", job).exit_code == 0  # none left
    (tmp_path / "broken.yaml").write_text("a: [\n")
    assert run("fix", "--check", tmp_path).exit_code == 2  # a file could not be read: the check vouches for nothing


def test_shell_completion_works_as_documented():
    exe = Path(sys.executable).with_name("eksmllint")  # the console script: completion keys on its name
    proc = subprocess.run([exe], capture_output=True, text=True, env={"_EKSMLLINT_COMPLETE": "bash_source"})
    assert "_eksmllint_completion" in proc.stdout
    readme = (ROOT / "README.md").read_text()
    assert "_EKSMLLINT_COMPLETE=bash_source eksmllint" in readme


# -- item 7: stable identities in reports --------------------------------------------------------
def test_junit_testcase_names_survive_a_moved_finding(tmp_path):
    job = tmp_path / "job.yaml"
    job.write_text(BAD.read_text())

    def names():
        root = ET.fromstring(run("lint", "--format", "junit", job).stdout)
        return [(c.get("name"), c.find("failure").text) for c in root.iter("testcase")]

    before = names()
    job.write_text("# a comment that moves every line down\n\n" + BAD.read_text())
    after = names()
    assert [n for n, _ in before] == [n for n, _ in after] and "line" not in before[0][0]
    assert before[0][1] != after[0][1]  # the failure text still gives the line


# -- item 8: nothing shown to users points into the project's history or checkout ----------------
def test_explain_and_rule_docs_carry_no_project_internals():
    from eksmllint.core.registry import default_registry
    from eksmllint.docs import explain_text, rule_markdown

    for rule in default_registry():
        for text in (explain_text(rule), rule_markdown(rule)):
            assert not re.search(r"\b(issue|decision) \(?\d+|\(issue", text, re.IGNORECASE), rule.code
            assert "Rule file:" not in text and "rules/" not in text.replace("github.com", ""), rule.code


# -- item 3: a one-line message, the detail beside it ---------------------------------------------
def test_detail_is_shown_on_request_and_carried_by_the_structured_formats(tmp_path):
    (finding,) = json.loads(run("lint", "--format", "json", BAD).stdout)["findings"]
    assert finding["message"].endswith("has no memory-backed /dev/shm") and "bus errors" in finding["detail"]
    plain = run("lint", BAD).stdout
    assert "bus errors" not in plain
    for flag in ("--show-detail", "-v"):
        lines = run("lint", flag, BAD).stdout.splitlines()
        assert lines[1] == "    " + finding["detail"]
    sarif = json.loads(run("lint", "--format", "sarif", BAD).stdout)["runs"][0]["results"][0]
    assert (
        sarif["message"]["text"].startswith(finding["message"]) and sarif["properties"]["detail"] == finding["detail"]
    )
    (issue,) = json.loads(run("lint", "--format", "gitlab", BAD).stdout)
    assert issue["content"]["body"] == finding["detail"]
    github = run("lint", "--format", "github", BAD).stdout
    assert "bus errors" not in github
