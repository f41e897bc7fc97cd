"""Config values a careless or hostile repository may hold (issue 22): one line naming the file
and the key, exit 2, never a traceback; rule options checked against each rule's option schema;
a config's context: paths stay inside its repository."""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner

from eksmllint.cli import cli
from eksmllint.core.registry import default_registry

POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: 'python:3.11.9-slim'}]}\n"


def _lint(directory, *args: str):
    cwd = os.getcwd()
    os.chdir(directory)
    try:
        return CliRunner().invoke(cli, ["lint", *args, "pod.yaml"])
    finally:
        os.chdir(cwd)


@pytest.mark.parametrize(
    "config,key",
    [
        (b"max-file-size: 99999999999999999999999999999999999\n", "max-file-size"),
        (b'exclude: ["!"]\n', "exclude"),
        (b'exclude: ["[z-a]"]\n', "exclude"),
        (b"select: [\xff\xfe]\n", "not UTF-8"),
        (b'rules: {EML808: {max-backoff-limit: "x"}}\n', "rules.EML808.max-backoff-limit"),
        (b"rules: {EML703: {kinds: 5}}\n", "rules.EML703.kinds"),
        (b"rules: {EML303: {budget-fraction: true}}\n", "rules.EML303.budget-fraction"),
        (b"rules: {EML101: {unused-training-pools: 'no'}}\n", "rules.EML101.unused-training-pools"),
        (b"rules: {EML004: {ignore-groups: example.com}}\n", "rules.EML004.ignore-groups"),
    ],
)
def test_bad_config_values_are_one_line_naming_file_and_key(tmp_path, config, key):
    (tmp_path / "pod.yaml").write_text(POD)
    (tmp_path / ".eksmllint.yaml").write_bytes(config)
    r = _lint(tmp_path)
    assert r.exit_code == 2, (r.output, r.exception)
    error = [line for line in r.output.splitlines() if line.startswith("Error:")]
    assert len(error) == 1 and ".eksmllint.yaml" in error[0] and key in error[0], r.output


def test_good_rule_options_are_accepted(tmp_path):
    (tmp_path / "pod.yaml").write_text(POD)
    (tmp_path / ".eksmllint.yaml").write_text(
        "rules: {EML703: {kinds: [PersistentVolumeClaim]}, EML303: {budget-fraction: 1}, EML808: {max-backoff-limit: 0}}\n"
    )
    assert _lint(tmp_path).exit_code == 0


def test_every_rule_option_has_a_type_and_explain_lists_it():
    for rule in default_registry():
        schema = rule.spec.option_schema
        assert set(schema) == set(rule.spec.options)
        if schema:
            r = CliRunner().invoke(cli, ["explain", rule.code])
            for name, kind in schema.items():
                assert f"{name}: " in r.output and f"({kind})" in r.output


@pytest.fixture()
def repo(tmp_path):
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "pod.yaml").write_text(POD)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "other.yaml").write_text(POD.replace("name: p}", "name: from-outside}"))
    (root / "inside").mkdir()
    (root / "inside" / "ctx.yaml").write_text(POD)
    os.symlink(outside, root / "link")
    return root, outside


@pytest.mark.parametrize("context", ["../outside", "ABSOLUTE", "link", "inside/../../outside"])
def test_config_context_outside_the_repository_is_refused(repo, context):
    root, outside = repo
    path = str(outside) if context == "ABSOLUTE" else context
    (root / ".eksmllint.yaml").write_text(f"context: [{path!r}]\n")
    r = _lint(root)
    assert r.exit_code == 2 and "outside the repository" in r.output and "'context'" in r.output, r.output
    allowed = _lint(root, "--allow-outside-context")
    assert allowed.exit_code == 0, allowed.output


def test_config_context_inside_the_repository_is_read(repo):
    root, _ = repo
    (root / ".eksmllint.yaml").write_text("context: [inside]\n")
    assert _lint(root).exit_code == 0
