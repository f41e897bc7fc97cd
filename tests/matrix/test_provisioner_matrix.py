"""The provisioner dimension of the shape matrix (issue 21): every placement rule fires on its
defect and stays silent on its repair in every provisioner form it applies to
(:mod:`provisioner_cells`, which also prints the table for the README)."""

from __future__ import annotations

import pytest
from provisioner_cells import CASES, FORMS, Case, cells, markdown, render

from eksmllint.config import Config
from eksmllint.core.engine import lint_text


def _codes(text: str, code: str) -> list[str]:
    result = lint_text(text, Config().model_copy(update={"select": (code, "EML000")}), name="cell.yaml")
    crashes = [f.message for f in result.active if f.code == "EML000"]
    assert not crashes, crashes
    return [f.message for f in result.active if f.code == code]


@pytest.mark.parametrize(("case", "form"), cells(), ids=[f"{c.rule}-{f}" for c, f in cells()])
def test_rule_fires_on_the_bad_cell_and_not_on_the_good_one(case: Case, form: str):
    bad = render(form, *case.bad)
    assert _codes(bad, case.rule), f"{case.rule} silent on its defect ({case.what}) in form {form}:\n{bad}"
    good = render(form, *case.good)
    assert _codes(good, case.rule) == [], f"{case.rule} fires on the repaired case in form {form}:\n{good}"


def test_every_cell_is_judged_or_explained():
    """A form a rule does not apply to says why; the table names every cell."""
    table = markdown()
    for case in CASES:
        assert set(case.not_for) <= set(FORMS), case.rule
        assert all(why.strip() for why in case.not_for.values())
        assert f"| {case.rule} |" in table
    assert len(cells()) + sum(len(c.not_for) for c in CASES) == len(CASES) * len(FORMS)


def test_every_modelled_provisioner_form_is_a_column():
    """A provisioner row added to provisioners.yaml without a matrix column is a test failure."""
    from eksmllint.platform.provisioners import provisioners

    modelled = {name for name, p in provisioners().provisioners.items() if p.modelled}
    assert modelled == set(FORMS)
