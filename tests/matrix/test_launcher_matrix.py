"""The launcher dimension of the shape matrix (tests/matrix/launcher_forms.py): every launch and
precision rule fires on every bad cell and stays silent on every good one, whatever form the
launcher or the setting is written in."""

from __future__ import annotations

import pytest
from launcher_forms import CASES, FORMS, NOT_IN_MATRIX, cells, manifests, markdown_table, why_empty

from eksmllint.config import Config
from eksmllint.core.engine import lint_paths
from eksmllint.core.registry import default_registry

JUDGED = [(case, form) for case, form in cells() if why_empty(case, form) is None]


def _codes(tmp_path, files: dict[str, str], code: str) -> list[str]:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    result = lint_paths([str(tmp_path)], Config())
    return [f"{f.location.file}:{f.location.line} {f.message}" for f in result.active if f.code == code]


@pytest.mark.parametrize(("case", "form"), JUDGED, ids=[f"{c.label}-{f}" for c, f in JUDGED])
def test_bad_cell_fires(tmp_path, case, form):
    assert _codes(tmp_path, manifests(case, form, bad=True), case.code)


@pytest.mark.parametrize(("case", "form"), JUDGED, ids=[f"{c.label}-{f}" for c, f in JUDGED])
def test_good_cell_is_silent(tmp_path, case, form):
    assert _codes(tmp_path, manifests(case, form, bad=False), case.code) == []


def test_every_launch_and_precision_rule_is_in_the_table():
    codes = {r.code for r in default_registry() if r.code[:4] in ("EML4", "EML8")} | {
        "EML604",
        "EML605",
        "EML606",
        "EML608",
        "EML610",
    }
    listed = {c.code for c in CASES} | set(NOT_IN_MATRIX)
    assert codes <= listed, sorted(codes - listed)


def test_table_lists_every_cell():
    table = markdown_table()
    assert all(form in table for form in FORMS)
    assert table.count("\n| EML") == len(CASES) and table.count("\n- EML") == len(NOT_IN_MATRIX)
    judged = sum(row.count("✓") for row in table.splitlines() if row.startswith("| EML"))
    assert judged == len(JUDGED)


def test_every_modelled_config_form_has_a_column():
    from launcher_forms import CONFIG_FORMS

    from eksmllint.platform.configs import config_forms

    missing = [f.label for f in config_forms() if f.modelled and not any(f.label in col for col in CONFIG_FORMS)]
    assert not missing, f"config forms without a matrix column: {missing}"


def test_readme_carries_the_current_table():
    from repository import ROOT

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("<!-- launcher-matrix:start -->\n", 1)[1].split("<!-- launcher-matrix:end -->", 1)[0]
    assert block == markdown_table(), "regenerate with: python tests/matrix/launcher_forms.py"
