"""The CI examples and the README's CI section: installable as written, commands the CLI accepts."""

from __future__ import annotations

import re
import shlex

import pytest
import yaml
from repository import ROOT

from eksmllint.cli import cli

EXAMPLES = sorted((ROOT / "examples" / "ci").iterdir())
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _section(title: str) -> str:
    return README.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


CI_TEXTS = {p.name: p.read_text(encoding="utf-8") for p in EXAMPLES}
CI_TEXTS["README CI section"] = _section("CI gate and pre-commit")


@pytest.mark.parametrize("name", sorted(CI_TEXTS))
def test_no_install_from_an_index_that_does_not_publish_it(name):
    """eksmllint is not on PyPI: a bare `pip install eksmllint` would fail or install a stranger's."""
    assert not re.search(r"pip install\s+['\"]?eksmllint(?![\w @\[-]*git\+)(['\"\s]|$)", CI_TEXTS[name]), name


@pytest.mark.parametrize("name", sorted(CI_TEXTS))
def test_every_eksmllint_command_parses(name):
    commands = re.findall(r"(?:^|[\s'\"`])((?:\.eksmllint/bin/)?eksmllint (?:lint|fix) [^\n'`|#]*)", CI_TEXTS[name])
    assert commands or name.startswith("pre-commit"), name
    for command in commands:
        args = shlex.split(command)[1:]
        sub = cli.get_command(None, args[0])
        sub.make_context(args[0], args[1:])  # raises on an unknown option or a bad value


@pytest.mark.parametrize("path", [p for p in EXAMPLES if p.suffix in (".yml", ".yaml")], ids=lambda p: p.name)
def test_yaml_examples_parse(path):
    assert isinstance(yaml.safe_load(path.read_text(encoding="utf-8")), dict)


def test_pre_commit_example_names_real_hooks_and_says_to_set_the_repo():
    hooks = {h["id"] for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))}
    example = yaml.safe_load((ROOT / "examples" / "ci" / "pre-commit-config.yaml").read_text(encoding="utf-8"))
    (repo,) = example["repos"]
    assert {h["id"] for h in repo["hooks"]} <= hooks
    assert "OWNER" in repo["repo"]  # a visible placeholder, never a made-up real URL


def test_readme_pre_commit_block_is_the_example_and_the_hook_sees_the_repository():
    """What the README shows is what examples/ci ships and what test_precommit.py runs: the hook's
    own default, whose entry loads the whole repository as context."""
    block = _section("CI gate and pre-commit").split("### pre-commit", 1)[1].split("```yaml\n", 1)[1].split("```")[0]
    example = yaml.safe_load((ROOT / "examples" / "ci" / "pre-commit-config.yaml").read_text(encoding="utf-8"))
    assert yaml.safe_load(block) == example
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))}
    assert all("args" not in h for h in example["repos"][0]["hooks"])
    assert hooks["eksmllint"]["entry"] == "eksmllint lint --context ."
