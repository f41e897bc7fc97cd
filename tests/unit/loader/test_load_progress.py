"""Progress is a callback the caller passes to the loader; the loader draws nothing itself."""

from __future__ import annotations

import ast

from repository import ROOT

from eksmllint.loader import load


def test_the_loader_reports_each_file_to_the_callback_it_is_given(tmp_path):
    for name in ("a", "b", "c"):
        (tmp_path / f"{name}.yaml").write_text(f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}}}\n")
    totals: list[int] = []
    seen: list[tuple[int, int]] = []

    def factory(total: int):
        totals.append(total)
        return lambda done, of: seen.append((done, of))

    result = load([str(tmp_path)], progress=factory)
    assert len(result.resources) == 3 and totals == [3] and seen == [(1, 3), (2, 3), (3, 3)]
    assert load([str(tmp_path)], progress=lambda total: None).resources  # a factory may decline


def test_the_loader_does_not_import_the_terminal_renderer():
    for path in (ROOT / "eksmllint" / "loader").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                assert not (node.module or "").startswith("eksmllint.render"), f"{path.name} imports {node.module}"
