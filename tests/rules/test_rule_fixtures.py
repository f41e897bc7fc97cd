"""Every rule's bad example is reported at its marked lines; its good example is clean."""

from __future__ import annotations

import pytest

from eksmllint.core.registry import default_registry
from eksmllint.paths import rule_fixtures_dir
from eksmllint.testing import discover_cases, expected_lines, lint_case

ENGINE_ONLY = {"EML000"}  # produced only when a rule crashes; covered in test_engine.py
CASES = discover_cases(rule_fixtures_dir())


def test_every_rule_has_examples():
    registry = default_registry()
    have = {(c.code, c.slug) for c in CASES if c.bad and c.good}
    missing = [f"{r.code}-{r.slug}" for r in registry if (r.code, r.slug) not in have and r.code not in ENGINE_ONLY]
    assert not missing, f"rules without bad/good fixtures: {missing}"


def test_fixture_dirs_name_real_rules():
    registry = default_registry()
    for case in CASES:
        rule = registry.get(case.code)
        assert rule is not None and rule.slug == case.slug, f"{case.directory.name} names no rule"


@pytest.mark.parametrize("case", [c for c in CASES if c.bad], ids=lambda c: f"{c.code}-bad")
def test_bad_example_reports_rule_at_marked_lines(case):
    expected = expected_lines(case.bad, case.code)
    assert expected, f"{case.bad} has no '# expect: {case.code}' marker"
    result = lint_case(case.bad, case.config())
    got = {(f.location.file, f.location.line) for f in result.active if f.code == case.code}
    assert got == expected, [f"{f.location.file}:{f.location.line} {f.code} {f.message}" for f in result.active]


@pytest.mark.parametrize("case", [c for c in CASES if c.good], ids=lambda c: f"{c.code}-good")
def test_good_example_is_clean(case):
    result = lint_case(case.good, case.config())
    assert not result.active, [f"{f.location.file}:{f.location.line} {f.code} {f.message}" for f in result.active]
