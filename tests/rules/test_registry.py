"""Rule metadata is complete and matches the catalogue contract."""

from __future__ import annotations

import re

import pytest
from catalogue_contract import CATALOGUE

from eksmllint.core.registry import Registry, RegistryError, default_registry, load_rule_dir
from eksmllint.core.rule import FAMILIES, Rule, RuleSpec
from eksmllint.docs import explain_text

REGISTRY = default_registry()


@pytest.mark.parametrize("code,slug,severity,fix", CATALOGUE, ids=[c[0] for c in CATALOGUE])
def test_catalogue_rule_registered_exactly(code, slug, severity, fix):
    rule = REGISTRY.get(code)
    assert rule is not None, f"{code} {slug} is not implemented"
    assert rule.slug == slug
    # EML003 is "warning/error": the default is the lower one, removed APIs are reported as errors
    assert rule.spec.severity == severity.split("/")[0]
    # "safe where the move is mechanical": fix column may carry a qualifier
    assert rule.spec.fix == fix


def test_only_catalogue_rules_plus_documented_additions():
    known = {c[0] for c in CATALOGUE} | {"EML006", "EML007", "EML008", "EML305"}
    assert {r.code for r in REGISTRY} <= known


@pytest.mark.parametrize("rule", list(REGISTRY), ids=lambda r: r.code)
def test_rule_metadata_complete(rule: Rule):
    s = rule.spec
    assert rule.family == FAMILIES[int(rule.code[3])]
    for text in (s.summary, s.description, s.rationale):
        assert text.strip() and len(text.strip()) > 20
    if s.fix != "no":
        assert s.fix_description and s.fix_description.strip()
    assert callable(rule.check)
    text = explain_text(rule)
    assert rule.code in text and rule.slug in text and "Why it matters" in text


def test_lookup_by_code_slug_family_and_prefix():
    assert REGISTRY.get("eml301") is REGISTRY.get("shm-missing")
    assert all(r.family == "shm" for r in REGISTRY.select("shm"))
    assert {r.code for r in REGISTRY.select("EML3")} == {r.code for r in REGISTRY.select("shm")}
    assert REGISTRY.select("no-such-rule") == []


def test_duplicate_codes_rejected():
    rule = REGISTRY.get("EML301")
    with pytest.raises(RegistryError, match="duplicate rule code"):
        Registry([rule, rule])


def test_bad_rule_spec_rejected():
    with pytest.raises(ValueError):
        RuleSpec.model_validate(
            {
                "code": "E301",
                "slug": "x",
                "severity": "warning",
                "fix": "no",
                "summary": "s",
                "check": "a:b",
                "target": "run",
                "description": "d",
                "rationale": "r",
            }
        )


def _rule_file(folder, code: str, slug: str, check: str | None = None):
    lines = [
        f"code: {code}",
        f"slug: {slug}",
        "severity: warning",
        "fix: 'no'",
        "summary: s",
        "target: run",
        "description: d",
        "rationale: r",
    ] + ([f"check: {check}"] if check else [])
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{code}-{slug}.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize(
    "family_dir,code,slug,fragment",
    [
        ("shm", "EML399", "no-such-rule", "no examples in fixtures/rules/EML399-no-such-rule/"),
        ("efa", "EML301", "shm-missing", "a EML301 rule belongs in rules/shm/"),
    ],
)
def test_builtin_rule_needs_its_folder_and_examples(tmp_path, family_dir, code, slug, fragment):
    _rule_file(tmp_path / family_dir, code, slug)
    with pytest.raises(RegistryError, match=re.escape(fragment)):
        list(load_rule_dir(tmp_path))


def test_builtin_rule_without_its_module_is_an_error(tmp_path, monkeypatch):
    fixtures = tmp_path / "fixtures"
    (fixtures / "EML398-no-module").mkdir(parents=True)
    monkeypatch.setattr("eksmllint.core.registry.rule_fixtures_dir", lambda: fixtures)
    _rule_file(tmp_path / "rules" / "shm", "EML398", "no-module")
    with pytest.raises(RegistryError, match=r"eksmllint\.checks\.shm\.eml398_no_module:check"):
        list(load_rule_dir(tmp_path / "rules"))


def test_plugin_rule_must_name_its_check(tmp_path):
    _rule_file(tmp_path, "EML397", "plugin-rule")
    with pytest.raises(RegistryError, match="must name its check"):
        list(load_rule_dir(tmp_path, source="my-pack"))
    _rule_file(tmp_path, "EML397", "plugin-rule", check="eksmllint.core.rule:check_module")
    assert [r.code for r in load_rule_dir(tmp_path, source="my-pack")] == ["EML397"]


def test_builtin_rule_may_not_name_its_check(tmp_path, monkeypatch):
    """One place per rule: the module is found from code and slug, never named in the rule file."""
    fixtures = tmp_path / "fixtures"
    (fixtures / "EML396-named-check").mkdir(parents=True)
    monkeypatch.setattr("eksmllint.core.registry.rule_fixtures_dir", lambda: fixtures)
    _rule_file(tmp_path / "rules" / "shm", "EML396", "named-check", check="eksmllint.core.rule:check_module")
    with pytest.raises(
        RegistryError, match=r"names no check; its module is eksmllint\.checks\.shm\.eml396_named_check"
    ):
        list(load_rule_dir(tmp_path / "rules"))
