"""Platform versions: the config's ``platform:`` section, ``--platform`` flags, what rules read
(``ctx.platform``) and what ``explain`` says was assumed."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from eksmllint.cli import cli
from eksmllint.config import Config, ConfigError, load_config_file, parse_config, with_overrides
from eksmllint.core.engine import lint_text
from eksmllint.core.registry import Registry
from eksmllint.core.rule import Rule, RuleSpec
from eksmllint.docs import explain_text
from eksmllint.platform import Platform, components

POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: x:1}]}\n"


def _spec(**extra) -> RuleSpec:
    data = {
        "code": "EML996",
        "slug": "platform-probe",
        "severity": "info",
        "fix": "no",
        "summary": "s",
        "check": "tests:none",
        "target": "resources",
        "description": "d",
        "rationale": "r",
        **extra,
    }
    return RuleSpec.model_validate(data)


def test_defaults_are_the_newest_known_releases_and_say_so():
    p = Config().platform
    for name, component in components().items():
        assert p.describe(name) == f"{component.label} {component.newest} (assumed; set platform.{name})"
    assert p.at_least("karpenter", components()["karpenter"].newest)


@pytest.mark.parametrize(
    "name,text",
    [
        (".eksmllint.yaml", "platform:\n  karpenter: 1.10\n  neuron-sdk: v2.24.1\n"),
        ("pyproject.toml", '[tool.eksmllint.platform]\nkarpenter = 1.10\nneuron-sdk = "v2.24.1"\n'),
    ],
)
def test_file_releases_keep_their_text_and_are_named_as_given(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    p = load_config_file(path).platform
    assert (p.karpenter, p.neuron_sdk) == ("1.10", "2.24")
    assert p.describe("karpenter") == "Karpenter 1.10 (from the config)"
    assert p.describe("kueue").endswith("(assumed; set platform.kueue)")
    assert not p.at_least("neuron-sdk", "2.25") and p.at_least("karpenter", "1.9")


@pytest.mark.parametrize(
    "data,fragment",
    [
        ({"platform": {"karpenterr": "1.8"}}, "unknown key 'platform.karpenterr'"),
        ({"platform": {"kueue": "banana"}}, "expected a release such as"),
        ({"platform": {"kueue": 0.1}}, "write the version as a string"),
    ],
)
def test_bad_platform_sections_name_the_key(data, fragment):
    with pytest.raises(ConfigError, match=fragment):
        parse_config(data, "cfg.yaml")


def test_flags_override_one_component_and_keep_the_files_others(tmp_path):
    cfg = parse_config({"platform": {"kueue": "0.16"}}, "cfg.yaml")
    merged = with_overrides(cfg, platform=("karpenter=1.8",), select=("EML301",))
    assert (merged.platform.karpenter, merged.platform.kueue) == ("1.8", "0.16")
    assert merged.platform.describe("kuberay").endswith("(assumed; set platform.kuberay)")
    # an unrelated flag keeps the defaults "assumed", not "from the config"
    assert with_overrides(Config(), select=("EML301",)).platform.model_fields_set == set()


@pytest.mark.parametrize("flag,fragment", [("karpenter", "NAME=VERSION"), ("helm=3.1", "unknown component")])
def test_bad_flags_exit_2(flag, fragment):
    result = CliRunner().invoke(cli, ["lint", "--platform", flag, "-"], input=POD)
    assert result.exit_code == 2 and fragment in result.output


def test_rules_read_the_runs_platform():
    seen: list[str] = []

    def probe(ctx, resource):
        seen.append(ctx.platform.describe("neuron-sdk"))
        return ()

    registry = Registry([Rule(_spec(), probe)])
    lint_text(POD, with_overrides(Config(), platform=("neuron-sdk=2.20",)), registry=registry)
    lint_text(POD, Config(), registry=registry)
    newest = components()["neuron-sdk"].newest
    assert seen == ["Neuron SDK 2.20 (from the config)", f"Neuron SDK {newest} (assumed; set platform.neuron-sdk)"]


def test_explain_names_the_release_a_rule_assumes():
    rule = Rule(_spec(platform=["kuberay"]), lambda ctx, r: ())
    assert "KubeRay 1.3 (from the config)" in explain_text(rule, Platform(kuberay="1.3"))
    assert f"KubeRay {components()['kuberay'].newest} (assumed" in explain_text(rule)
    with pytest.raises(ValueError, match="unknown platform component"):
        _spec(platform=["helm"])


def test_explain_command_takes_the_flag():
    # a built-in rule may not declare a platform dependency yet: check the flag is accepted
    result = CliRunner().invoke(cli, ["explain", "EML301", "--platform", "kuberay=1.1"])
    assert result.exit_code == 0, result.output
