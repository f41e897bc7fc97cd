"""Configuration as a user writes it: versions, flags, exclude, the shipped JSON schema, colour,
and the rule documentation `explain` and `rules` point at."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import jsonschema
import pytest
import yaml
from click.testing import CliRunner
from repository import ROOT

from eksmllint.cli import cli
from eksmllint.config import (
    SCHEMA_PATH,
    Config,
    ConfigError,
    _ConfigLoader,
    json_schema,
    load_config_file,
    parse_config,
    schema_text,
    with_overrides,
)
from eksmllint.core.registry import default_registry
from eksmllint.formatters import use_color
from eksmllint.schema import supported_versions

BAD_TEXT = (ROOT / "fixtures" / "rules" / "EML301-shm-missing" / "bad.yaml").read_text()


def run(*args, **kw):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False, **kw)


# --- kubernetes-version ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name,text",
    [
        (".eksmllint.yaml", "kubernetes-version: 1.30\n"),
        (".eksmllint.yaml", "kubernetes-version: '1.30'\n"),
        ("pyproject.toml", "[tool.eksmllint]\nkubernetes-version = 1.30\n"),
    ],
)
def test_unquoted_version_keeps_its_trailing_zero(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    assert load_config_file(path).kubernetes_version == "1.30"


def test_a_bare_number_without_its_text_is_rejected_with_advice():
    with pytest.raises(ConfigError, match=r'as a string such as \\?"1.30\\?"'):
        parse_config({"kubernetes-version": 1.3}, "test")


@pytest.mark.parametrize("value", ["banana", "1", "2.1", "1.x", "v1.33", ""])
def test_malformed_versions_are_rejected_in_files(value):
    with pytest.raises(ConfigError, match="kubernetes-version"):
        parse_config({"kubernetes-version": value}, "test")


def test_version_flag_is_validated_and_names_the_supported_range():
    proc = subprocess.run(
        [sys.executable, "-m", "eksmllint", "lint", "--kubernetes-version", "banana", "-"],
        input="",
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    versions = supported_versions()
    assert "'banana'" in proc.stderr and f"{versions[0]} to {versions[-1]}" in proc.stderr
    assert with_overrides(Config(), kubernetes_version="1.31").kubernetes_version == "1.31"


def test_overrides_keep_the_config_source(tmp_path):
    path = tmp_path / ".eksmllint.yaml"
    path.write_text("fail-on: error\n")
    cfg = with_overrides(load_config_file(path), select=("EML301",))
    assert cfg.source == str(path) and cfg.fail_on == "error" and cfg.select == ("EML301",)


def test_source_is_not_a_setting():
    with pytest.raises(ConfigError, match="unknown key 'source'"):
        parse_config({"source": "x"}, "test")


# --- exclude ---------------------------------------------------------------------------------------


@pytest.fixture
def project(tmp_path, monkeypatch):
    root = tmp_path / "project"
    for rel in ("k8s/job.yaml", "charts/trainer/templates/job.yaml", "k8s/skip-me.yaml", "k8s/keep/skip-me.yaml"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(BAD_TEXT.replace("llama-pretrain", rel.replace("/", "-").replace(".", "-")))
    (root / ".eksmllint.yaml").write_text('exclude: ["charts/", "skip-*.yaml", "!k8s/keep/skip-me.yaml"]\n')
    monkeypatch.chdir(root)
    return root


def linted(*args) -> set[str]:
    doc = json.loads(run("lint", "--format", "json", *args).stdout)
    return {f["resource"]["name"] for f in doc["findings"]}


@pytest.mark.parametrize("spelling", [".", "./", "ABS", "./k8s/../"])
def test_exclude_applies_however_the_path_is_typed(project, spelling):
    arg = str(project) if spelling == "ABS" else spelling
    assert linted(arg) == {"k8s-job-yaml", "k8s-keep-skip-me-yaml"}


def test_exclude_is_relative_to_the_config_file(project, monkeypatch):
    monkeypatch.chdir(project / "k8s")
    assert linted(".") == {"k8s-job-yaml", "k8s-keep-skip-me-yaml"}
    assert linted(str(project / "charts" / "trainer" / "templates" / "job.yaml")) == set()


def test_exclude_applies_to_files_named_explicitly(project):
    """The pre-commit hook passes changed files by name: excluded ones stay excluded."""
    assert linted("k8s/skip-me.yaml", "k8s/job.yaml") == {"k8s-job-yaml"}


# --- the config's JSON schema ----------------------------------------------------------------------


def test_shipped_schema_is_the_models():
    assert SCHEMA_PATH.read_text(encoding="utf-8") == schema_text(), (
        "regenerate it: python -m eksmllint.config > eksmllint/config.schema.json"
    )


SAMPLES = [
    "kubernetes-version: '1.31'\nselect: [ALL]\nignore: [EML609]\n",
    "kubernetes-version: 1.30\n",
    "kubernetes-version: banana\n",
    "kubernetes-version: 2.5\n",
    "fail-on: sometimes\n",
    "severity: {EML807: error}\nfail-on: never\n",
    "severity: {EML807: fatal}\n",
    "exclude: [charts/]\nper-path-ignores: {'sandbox/*': [EML201, shm]}\n",
    "per-path-ignores: {'sandbox/*': EML201}\n",
    "rules: {EML703: {kinds: [ConfigMap]}}\ncontext: [platform/]\n",
    "max-file-size: 0\n",
    "max-file-size: 1024\nunsafe-fixes: true\n",
    "bogus: 1\n",
    "select: EML301\n",
]


@pytest.mark.parametrize("text", SAMPLES)
def test_schema_and_model_agree(text):
    data = yaml.load(text, Loader=_ConfigLoader)
    try:
        parse_config(data, "sample")
        model_ok = True
    except ConfigError:
        model_ok = False
    schema_ok = jsonschema.Draft202012Validator(json_schema()).is_valid(data)
    assert schema_ok == model_ok


def test_schema_covers_every_setting():
    fields = {f.alias or name for name, f in Config.model_fields.items() if name != "source"}
    assert set(json_schema()["properties"]) == fields


# --- colour ----------------------------------------------------------------------------------------


class _Tty:
    def isatty(self):
        return True


@pytest.mark.parametrize(
    "env,tty,expected",
    [
        ({}, True, True),
        ({}, False, False),
        ({"NO_COLOR": "1"}, True, False),
        ({"NO_COLOR": ""}, True, True),
        ({"FORCE_COLOR": "1"}, False, True),
        ({"FORCE_COLOR": "0"}, False, False),
        ({"NO_COLOR": "1", "FORCE_COLOR": "1"}, True, False),
    ],
)
def test_no_color_and_force_color(env, tty, expected):
    assert use_color(_Tty() if tty else object(), env) is expected


def test_force_color_reaches_a_pipe_and_no_color_wins():
    bad = str(ROOT / "fixtures" / "rules" / "EML301-shm-missing" / "bad.yaml")
    assert "\x1b[" in run("lint", bad, env={"FORCE_COLOR": "1", "NO_COLOR": ""}).output
    assert "\x1b[" not in run("lint", bad, env={"FORCE_COLOR": "1", "NO_COLOR": "1"}).output


# --- rule documentation ----------------------------------------------------------------------------


@pytest.mark.parametrize("rule", list(default_registry()), ids=lambda r: r.code)
def test_explain_shows_no_fixture_markers(rule):
    out = run("explain", rule.code).output
    assert not re.search(r"#\s*expect:", out)


def test_rule_help_points_at_files_in_the_repository():
    for entry in json.loads(run("rules", "--format", "json").output):
        assert not entry["help"].startswith("http"), entry
        assert (ROOT / entry["help"]).is_file(), entry["help"]


def test_readme_configuration_example_is_valid():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Configuration\n", 1)[1]
    example = re.search(r"```yaml\n(.+?)```", section, re.S).group(1)
    data = yaml.load(example, Loader=_ConfigLoader)
    parse_config(data, "README")
    jsonschema.validate(data, json_schema())
