"""CI report formats as CI systems read them: repository-relative paths, unique fingerprints,
suppressions, JUnit valid for Jenkins xunit, Helm stdin mapped to the chart, hostile names."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner
from junit_xsd import violations
from repository import ROOT

from eksmllint.cli import cli

SARIF_SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text())
BAD_TEXT = (ROOT / "fixtures" / "rules" / "EML301-shm-missing" / "bad.yaml").read_text()
GOOD_TEXT = (ROOT / "fixtures" / "rules" / "EML301-shm-missing" / "good.yaml").read_text()
BAD_LINE = 14  # the container name line EML301 points at


def run(*args, input=None):
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A git checkout (``.git`` folder) with k8s/job.yaml, entered at a subfolder."""
    root = tmp_path / "checkout"
    (root / ".git").mkdir(parents=True)
    (root / "k8s").mkdir()
    (root / "k8s" / "job.yaml").write_text(BAD_TEXT)
    (root / "tools").mkdir()
    monkeypatch.chdir(root)
    return root


def sarif_results(*args):
    doc = json.loads(run("lint", "--format", "sarif", *args).output)
    jsonschema.validate(doc, SARIF_SCHEMA)
    return doc["runs"][0]["results"]


def uris(results):
    return [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results]


@pytest.mark.parametrize("spelling", ["k8s/job.yaml", "./k8s/job.yaml", "k8s/../k8s/job.yaml", "ABS", "./k8s", "."])
def test_paths_are_relative_to_the_repository_root_however_typed(repo, spelling):
    arg = str(repo / "k8s" / "job.yaml") if spelling == "ABS" else spelling
    results = sarif_results(arg)
    assert uris(results) == ["k8s/job.yaml"]
    assert results[0]["partialFingerprints"] == sarif_results("k8s/job.yaml")[0]["partialFingerprints"]
    github = run("lint", "--format", "github", arg).output
    assert github.startswith("::warning file=k8s/job.yaml,line=14,col=15,")
    (issue,) = json.loads(run("lint", "--format", "gitlab", arg).output)
    assert issue["location"] == {"path": "k8s/job.yaml", "lines": {"begin": BAD_LINE}}
    junit = ET.fromstring(run("lint", "--format", "junit", arg).output.encode())
    assert [c.get("classname") for c in junit.iter("testcase") if c.find("failure") is not None] == ["k8s/job.yaml"]


def test_from_a_subfolder_paths_still_start_at_the_root(repo, monkeypatch):
    monkeypatch.chdir(repo / "tools")
    assert uris(sarif_results("../k8s/job.yaml")) == ["k8s/job.yaml"]


def test_a_file_outside_the_repository_stays_absolute(repo, tmp_path):
    outside = tmp_path / "elsewhere.yaml"
    outside.write_text(BAD_TEXT)
    (uri,) = uris(sarif_results(str(outside)))
    assert uri == outside.as_uri()
    assert f"file={outside.as_posix().replace(':', '%3A')}," in run("lint", "--format", "github", str(outside)).output
    assert json.loads(run("lint", "--format", "gitlab", str(outside)).output)[0]["location"]["path"] == str(outside)


def test_without_a_repository_paths_are_relative_to_the_working_directory(tmp_path, monkeypatch):
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "job.yaml").write_text(BAD_TEXT)
    monkeypatch.chdir(tmp_path / "plain")
    from eksmllint.formatters.places import repo_root

    if repo_root() != str(tmp_path / "plain"):
        pytest.skip("the temporary directory is itself inside a git checkout")
    assert uris(sarif_results(str(tmp_path / "plain" / "job.yaml"))) == ["job.yaml"]


def test_sarif_carries_what_github_code_scanning_reads(repo):
    (repo / "k8s" / "more.yaml").write_text(BAD_TEXT.replace("llama-pretrain", "llama-finetune"))
    results = sarif_results("k8s")
    assert len(results) == 2
    for r in results:
        assert re.fullmatch(r"EML\d{3}", r["ruleId"]) and r["message"]["text"]
        uri = r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        assert not uri.startswith(("/", "./", "file:")) and "<" not in uri
        assert r["locations"][0]["physicalLocation"]["region"]["startLine"] >= 1
        assert r["partialFingerprints"]["eksmllint/v2"]


def test_fingerprints_unique_per_file_rule_and_resource(repo):
    """The same resource copied into two files is two results, in SARIF and GitLab alike."""
    (repo / "k8s" / "copy.yaml").write_text(BAD_TEXT)
    sarif = [r["partialFingerprints"]["eksmllint/v2"] for r in sarif_results("k8s")]
    gitlab = [i["fingerprint"] for i in json.loads(run("lint", "--format", "gitlab", "k8s").output)]
    assert len(sarif) == 2 and len(set(sarif)) == 2
    assert sorted(gitlab) == sorted(sarif)


def test_fingerprints_unique_for_repeated_identities():
    """Two findings with the same file, rule, resource and path (no resource: a whole-file finding
    twice) still get distinct fingerprints, deterministically."""
    from eksmllint.core.finding import Finding, Location, Severity
    from eksmllint.formatters.places import ReportPaths, fingerprints

    same = [Finding("EML001", "yaml-invalid", Severity.ERROR, m, Location("a.yaml")) for m in ("x", "y")]
    fps = fingerprints(same, ReportPaths(root="/"))
    assert len(set(fps)) == 2 and fps == fingerprints(same, ReportPaths(root="/"))


def test_suppressed_and_baselined_findings_are_not_sarif_results(repo):
    (repo / "k8s" / "quiet.yaml").write_text(
        BAD_TEXT.replace("llama-pretrain", "quiet").replace(
            "- name: pytorch  # expect: EML301", "- name: pytorch  # eksmllint: disable=EML301"
        )
    )
    assert [r["ruleId"] for r in sarif_results("k8s")] == ["EML301"]
    run("lint", "--write-baseline", "baseline.json", "k8s")
    assert sarif_results("--baseline", "baseline.json", "k8s") == []
    assert json.loads(run("lint", "--format", "gitlab", "--baseline", "baseline.json", "k8s").output) == []
    shown = sarif_results("--baseline", "baseline.json", "--show-suppressed", "k8s")
    kinds = sorted(s["kind"] for r in shown for s in r["suppressions"])
    assert kinds == ["external", "inSource"]  # the baseline, the inline comment


def test_baseline_is_keyed_on_the_file(repo):
    run("lint", "--write-baseline", "baseline.json", "k8s")
    (repo / "k8s" / "copy.yaml").write_text(BAD_TEXT)
    out = run("lint", "--baseline", "baseline.json", "k8s")
    assert out.exit_code == 1 and "copy.yaml" in out.output and "k8s/job.yaml:" not in out.output


def test_version_1_baselines_are_still_honoured(repo):
    from eksmllint.config import Config
    from eksmllint.core.engine import lint_paths
    from eksmllint.formatters.places import identity

    (finding,) = lint_paths(["k8s"], Config()).findings
    legacy = {
        "version": 1,
        "tool": "eksmllint",
        "findings": [{"fingerprint": identity(finding, None), "code": finding.code, "file": "k8s/job.yaml"}],
    }
    Path("old.json").write_text(json.dumps(legacy))
    assert run("lint", "--baseline", "old.json", "k8s").exit_code == 0


def test_junit_is_valid_for_jenkins_xunit_with_one_failure_per_testcase(repo):
    (repo / "k8s" / "good.yaml").write_text(GOOD_TEXT)
    (repo / "k8s" / "two.yaml").write_text(BAD_TEXT + "---\n" + BAD_TEXT.replace("llama-pretrain", "second"))
    xml = run("lint", "--format", "junit", "k8s").output
    assert violations(xml) == []
    root = ET.fromstring(xml.encode())
    cases = list(root.iter("testcase"))
    failures = [c for c in cases if c.findall("failure")]
    assert all(len(c.findall("failure")) == 1 for c in cases if c.findall("failure"))
    assert len(failures) == 3 and len(cases) == 4  # three findings, one clean file
    suite = root.find("testsuite")
    assert suite.get("tests") == "4" and suite.get("failures") == "3"


def test_junit_checker_catches_what_xunit_rejects():
    assert violations('<testsuites><testsuite tests="1"><testcase name="a" file="x"/></testsuite></testsuites>')
    assert violations('<testsuites><testsuite><testcase name="a"/></testsuite></testsuites>')  # no tests=
    assert violations("<testsuites><testsuite tests='1'><testcase/></testsuite></testsuites>")  # no name=
    assert violations("<testsuites>\x01</testsuites>")
    assert not violations(
        '<testsuites><testsuite tests="1"><testcase name="a"><failure message="m"/></testcase></testsuite></testsuites>'
    )


# --- Helm: `helm template | eksmllint lint -` ------------------------------------------------------

CHART_TEMPLATE_HEAD = "{{- if .Values.enabled }}\n# a template comment the render drops\n"


@pytest.fixture
def chart_repo(repo):
    chart = repo / "deploy" / "charts" / "trainer"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: trainer\nversion: 0.1.0\n")
    (chart / "templates" / "job.yaml").write_text(CHART_TEMPLATE_HEAD + BAD_TEXT + "{{- end }}\n")
    return repo


RENDERED = "---\n# Source: trainer/templates/job.yaml\n" + BAD_TEXT
TEMPLATE_PATH = "deploy/charts/trainer/templates/job.yaml"
TEMPLATE_LINE = BAD_LINE + CHART_TEMPLATE_HEAD.count("\n")
RENDERED_LINE = BAD_LINE + 2


def test_helm_stdin_points_at_the_chart_file_in_every_format(chart_repo):
    doc = json.loads(run("lint", "--format", "sarif", "-", input=RENDERED).output)
    jsonschema.validate(doc, SARIF_SCHEMA)
    (result,) = doc["runs"][0]["results"]
    loc = result["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == TEMPLATE_PATH and loc["region"]["startLine"] == TEMPLATE_LINE
    github = run("lint", "--format", "github", "-", input=RENDERED).output
    assert github.startswith(f"::warning file={TEMPLATE_PATH},line={TEMPLATE_LINE},")
    (issue,) = json.loads(run("lint", "--format", "gitlab", "-", input=RENDERED).output)
    assert issue["location"] == {"path": TEMPLATE_PATH, "lines": {"begin": TEMPLATE_LINE}}
    junit = run("lint", "--format", "junit", "-", input=RENDERED).output
    assert f'classname="{TEMPLATE_PATH}"' in junit and violations(junit) == []
    text = run("lint", "-", input=RENDERED).output
    assert f"<stdin>:{RENDERED_LINE}:15 [{TEMPLATE_PATH}:{TEMPLATE_LINE}]: EML301" in text
    (finding,) = json.loads(run("lint", "--format", "json", "-", input=RENDERED).output)["findings"]
    assert finding["template"] == "trainer/templates/job.yaml"
    assert "trainer/templates/job.yaml" in run("lint", "--format", "html", "-", input=RENDERED).output


def test_helm_stdin_maps_a_line_with_template_actions_by_its_literal_parts(chart_repo):
    """`- name: {{ .Values.name }}` rendered `- name: pytorch`: the one template line whose literal
    text around its actions matches is the finding's line (issue 25 item 5)."""
    template = chart_repo / TEMPLATE_PATH
    template.write_text(template.read_text().replace("- name: pytorch", "- name: {{ .Values.name }}"))
    (result,) = json.loads(run("lint", "--format", "sarif", "-", input=RENDERED).output)["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == TEMPLATE_LINE
    template.write_text(
        template.read_text().replace("- name: {{ .Values.name }}  # expect: EML301", "{{ .Values.c | nindent 12 }}")
    )
    (result,) = json.loads(run("lint", "--format", "sarif", "-", input=RENDERED).output)["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["region"] == {"startLine": 1}  # no literal words: not guessed


def test_helm_stdin_line_is_not_guessed(chart_repo):
    """When the flagged line does not occur once in the template, the finding is file-level and the
    message names the rendered line instead of pinning a wrong template line: here two lines could
    have rendered it."""
    template = chart_repo / TEMPLATE_PATH
    text = template.read_text().replace("- name: pytorch", "- name: {{ .Values.name }}")
    template.write_text(text.replace("  name: llama-pretrain", "  - name: {{ .Values.job }}"))
    (result,) = json.loads(run("lint", "--format", "sarif", "-", input=RENDERED).output)["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["region"] == {"startLine": 1}
    assert f"helm template output line {RENDERED_LINE}" in result["message"]["text"]
    github = run("lint", "--format", "github", "-", input=RENDERED).output
    assert github.startswith(f"::warning file={TEMPLATE_PATH},title=")


def test_helm_stdin_without_the_chart_names_the_template(repo):
    (issue,) = json.loads(run("lint", "--format", "gitlab", "-", input=RENDERED).output)
    assert issue["location"]["path"] == "trainer/templates/job.yaml"
    assert f"<stdin>:{RENDERED_LINE}:15 [trainer/templates/job.yaml]: EML301" in run("lint", "-", input=RENDERED).output


# --- hostile names (issue 16 item 12) --------------------------------------------------------------

FORGED = "x.yaml:1:1: EML999 [error] forged"
HOSTILE_OBJECT = BAD_TEXT.replace("name: llama-pretrain", f'name: "evil\\n{FORGED}\\r\\u2028\\u001b[2J"').replace(
    "- name: pytorch", f'- name: "py\\n{FORGED}\\n::error file=a.yaml::forged"'
)
HOSTILE_FILE = f"evil\n{FORGED}\n::error file=a.yaml::forged <script>.yaml"


@pytest.fixture
def hostile(repo):
    (repo / "k8s" / "job.yaml").unlink()
    (repo / "k8s" / HOSTILE_FILE).write_text(HOSTILE_OBJECT)
    return repo


def test_text_report_cannot_be_forged(hostile):
    out = run("lint", "k8s").output
    lines = out.splitlines()
    assert len(lines) == 3 and lines[1] == "Linted 1 file, 1 object." and lines[2].startswith("Found 1 finding")
    assert lines[0].startswith("k8s/evil\\nx.yaml:1:1: EML999") and "\x1b" not in out and "\u2028" not in out
    assert "EML999 [error] forged" in lines[0]  # shown, escaped, on the one real finding line


def test_github_annotations_cannot_be_forged(hostile):
    out = run("lint", "--format", "github", "k8s").output
    (line,) = out.splitlines()
    assert line.startswith("::warning file=k8s/evil%0Ax.yaml%3A1%3A1%3A EML999 [error] forged%0A%3A%3Aerror ")
    props, _, message = line[2:].partition("::")
    assert props.endswith(",line=14,col=15,title=EML301 shm-missing")  # the file name ended nothing
    assert "::error file=a.yaml::forged" in message  # a message body GitHub shows, not a command
    assert "training/evil%0Ax.yaml" in message
    assert "\x1b" not in line


def test_junit_and_html_escape_hostile_names(hostile):
    xml = run("lint", "--format", "junit", "k8s").output
    assert violations(xml) == []
    (failure,) = ET.fromstring(xml.encode()).iter("failure")
    assert "\n" not in failure.text and "\n" not in failure.get("message")
    html = run("lint", "--format", "html", "k8s").output
    assert "<script>.yaml" not in html and "&lt;script&gt;.yaml" in html


def test_log_lines_cannot_be_forged(repo):
    result = CliRunner().invoke(cli, ["lint", f"missing\n{FORGED}.yaml"])
    assert result.exit_code == 2
    assert [line for line in result.stderr.splitlines() if "EML999" in line] == [
        f"eksmllint: error: path does not exist: missing\\n{FORGED}.yaml"
    ]


def test_fix_log_lines_cannot_be_forged(hostile):
    result = CliRunner().invoke(cli, ["fix", "k8s"])
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("fixed ")]
    assert line.startswith("fixed k8s/evil\\nx.yaml:1:1: EML999") and "EML301" in line
    assert not [line for line in result.stderr.splitlines() if line.startswith(("x.yaml", "::error"))]


def test_chart_found_by_its_name_and_never_guessed_among_two(repo):
    from eksmllint.formatters.places import ReportPaths

    chart = repo / "deploy" / "trainer-chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: trainer  # the folder name differs\nversion: 1\n")
    (chart / "templates" / "job.yaml").write_text("kind: Job\n")
    found = ReportPaths(root=str(repo)).chart_file("trainer/templates/job.yaml")
    assert found == str(chart / "templates" / "job.yaml")
    twin = repo / "vendor" / "trainer"
    (twin / "templates").mkdir(parents=True)
    (twin / "Chart.yaml").write_text("apiVersion: v2\nname: trainer\nversion: 2\n")
    (twin / "templates" / "job.yaml").write_text("kind: Job\n")
    assert ReportPaths(root=str(repo)).chart_file("trainer/templates/job.yaml") is None
