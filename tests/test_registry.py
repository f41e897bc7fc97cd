"""Rule metadata is complete and matches the catalogue contract."""

from __future__ import annotations

import pytest
from catalogue_contract import CATALOGUE

from eksmllint.core.registry import Registry, RegistryError, default_registry
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
    known = {c[0] for c in CATALOGUE} | {"EML006", "EML007"}
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
