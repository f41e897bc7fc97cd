"""The items of a ``kind: List`` count like documents against the file's and the run's document
budgets (issue 22): a List cannot carry more objects past the budgets than documents can."""

from __future__ import annotations

import eksmllint.loader as loader_module
from eksmllint.loader import load
from eksmllint.yamlpos import MAX_DOCUMENTS


def _pod(i: int) -> str:
    return f"{{apiVersion: v1, kind: Pod, metadata: {{name: p{i}}}, spec: {{containers: [{{name: c, image: x}}]}}}}"


def test_list_items_past_the_document_budget_are_reported_not_linted(tmp_path):
    items = "\n".join(f"- {_pod(i)}" for i in range(MAX_DOCUMENTS + 5))
    path = tmp_path / "pods.yaml"
    path.write_text(f"apiVersion: v1\nkind: List\nitems:\n{items}\n")
    result = load([str(path)])
    linted = len(result.resources)  # (a failing assert would print every resource)
    assert linted == MAX_DOCUMENTS
    (problem,) = [p for p in result.problems if "document budget" in p.message]
    assert problem.code == "EML001" and "List" in problem.message
    assert problem.line == 4 + MAX_DOCUMENTS  # the first item over the budget


def test_list_items_count_against_the_run_budget(tmp_path, monkeypatch):
    monkeypatch.setattr(loader_module, "MAX_RUN_DOCUMENTS", 50)
    items = "\n".join(f"- {_pod(i)}" for i in range(40))
    for name in ("a.yaml", "b.yaml"):
        (tmp_path / name).write_text(f"apiVersion: v1\nkind: List\nitems:\n{items}\n")
    result = load([str(tmp_path)])
    linted = len(result.resources)
    assert linted == 40  # b.yaml would take the run to 80 objects
    assert any("run budget" in p.message and p.file.endswith("b.yaml") for p in result.problems)
