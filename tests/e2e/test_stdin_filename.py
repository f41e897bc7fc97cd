"""``--stdin-filename`` (issue 25 item 6, ruff's convention): the path ``-`` stands for, used for
config discovery, ``exclude``, per-path-ignores, messages, report paths and baseline fingerprints."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from click.testing import CliRunner
from repository import ROOT

from eksmllint.cli import cli

BAD = (ROOT / "fixtures" / "rules" / "EML301-shm-missing" / "bad.yaml").read_text()
CONFIG = 'exclude: ["generated/"]\nper-path-ignores:\n  "legacy/*": [EML301]\n'


def run(*args, input=BAD):
    return CliRunner().invoke(cli, [str(a) for a in args], input=input, catch_exceptions=False)


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A repository with a config; the tests run from its root unless they say otherwise."""
    (tmp_path / ".git").mkdir()
    (tmp_path / ".eksmllint.yaml").write_text(CONFIG)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_messages_name_the_given_path(repo):
    result = run("lint", "--stdin-filename", "k8s/job.yaml", "-")
    assert result.exit_code == 1
    assert result.stdout.startswith("k8s/job.yaml:14:15: EML301 ")
    assert "<stdin>" not in result.output


def test_without_a_path_it_reads_stdin_and_with_paths_it_needs_the_dash(repo):
    assert run("lint", "--stdin-filename", "k8s/job.yaml").stdout.startswith("k8s/job.yaml:14:15: EML301 ")
    (repo / "k8s").mkdir()
    refused = run("lint", "--stdin-filename", "k8s/job.yaml", "k8s")
    assert refused.exit_code == 2 and "'-' is not among the paths" in refused.stderr


def test_an_excluded_path_lints_nothing_and_says_so(repo):
    result = run("lint", "--stdin-filename", "generated/job.yaml", "-")
    assert result.exit_code == 0
    assert "skipped generated/job.yaml: stdin: generated/job.yaml matches the config's exclude" in result.stderr
    assert "nothing was linted" in result.stderr and "Linted 0 files, 0 objects." in result.stdout


def test_a_per_path_ignore_applies(repo):
    result = run("lint", "--stdin-filename", "legacy/job.yaml", "-")
    assert result.exit_code == 0 and "1 suppressed" in result.stdout


def test_the_config_is_found_from_the_given_path(repo, tmp_path_factory, monkeypatch):
    monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))  # no config here or above
    result = run("lint", "--stdin-filename", repo / "generated" / "job.yaml", "-")
    assert result.exit_code == 0 and "matches the config's exclude" in result.stderr


def test_reports_and_baselines_name_it(repo):
    sarif, junit, gitlab, baseline = "r.sarif", "r.xml", "r.json", "baseline.json"
    formats = ["--format", f"sarif:{sarif}", "--format", f"junit:{junit}", "--format", f"gitlab:{gitlab}"]
    result = run("lint", "--stdin-filename", "k8s/job.yaml", *formats, "--format", "github", "-")
    assert result.stdout.startswith("::warning file=k8s/job.yaml,line=14,")
    location = json.loads((repo / sarif).read_text())["runs"][0]["results"][0]["locations"][0]
    assert location["physicalLocation"]["artifactLocation"]["uri"] == "k8s/job.yaml"
    assert json.loads((repo / gitlab).read_text())[0]["location"]["path"] == "k8s/job.yaml"
    assert {c.get("classname") for c in ET.parse(repo / junit).iter("testcase")} == {"k8s/job.yaml"}
    run("lint", "--stdin-filename", "k8s/job.yaml", "--write-baseline", baseline, "-")
    assert {e["file"] for e in json.loads((repo / baseline).read_text())["findings"]} == {"k8s/job.yaml"}
    assert run("lint", "--stdin-filename", "k8s/job.yaml", "--baseline", baseline, "-").exit_code == 0
    # the fingerprint holds the path: the same stream under another name is a new finding
    assert run("lint", "--stdin-filename", "k8s/other.yaml", "--baseline", baseline, "-").exit_code == 1


def test_fix_writes_the_fixed_stream_to_stdout_and_passes_an_excluded_one_on(repo):
    fixed = run("fix", "--stdin-filename", "k8s/job.yaml", "-")
    assert fixed.exit_code == 0 and "medium: Memory" in fixed.stdout
    assert "fixed k8s/job.yaml: EML301" in fixed.stderr
    assert not (repo / "k8s").exists()  # the name is a name: nothing is written there
    excluded = run("fix", "--stdin-filename", "generated/job.yaml", "-")
    assert excluded.exit_code == 0 and excluded.stdout == BAD
    assert "passed on as read: stdin: generated/job.yaml matches the config's exclude" in excluded.stderr
    assert run("fix", "--stdin-filename", "legacy/job.yaml", "-").stdout == BAD  # its only finding is ignored


def test_graph_takes_it_too(repo):
    result = run("graph", "--format", "json", "--stdin-filename", "k8s/job.yaml")
    assert result.exit_code == 0 and "k8s/job.yaml" in result.stdout
