"""No import circle in the ``eksmllint`` package: module-level imports form a DAG, and so do all
imports, deferred ones included, but for one listed edge.

Imports under ``if TYPE_CHECKING:`` (never run) are not edges. ``from pkg import name`` is an edge to ``pkg.name`` when that is a module, else to
``pkg``; importing a submodule implicitly imports its parent packages, which is never a circle
worth reporting (the parent is already being imported).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import networkx as nx
from repository import ROOT


def _modules(package_dir: Path) -> dict[str, Path]:
    out = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = list(path.relative_to(package_dir.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _module_level(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """Import statements that run when the module is imported (also in top-level if/try)."""
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If) and not _type_checking(node.test):
            yield from _module_level(node.body + node.orelse)
        elif isinstance(node, ast.Try):
            yield from _module_level(node.body + node.orelse + node.finalbody)
            for handler in node.handlers:
                yield from _module_level(handler.body)


def _anywhere(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement, in functions too, except under ``if TYPE_CHECKING:``."""
    for node in body:
        if isinstance(node, ast.If) and _type_checking(node.test):
            continue
        for sub in ast.walk(node):
            if isinstance(sub, ast.Import | ast.ImportFrom):
                yield sub


def import_graph(package_dir: Path, deferred: bool = False) -> nx.DiGraph:
    modules = _modules(package_dir)
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        statements = (_anywhere if deferred else _module_level)(ast.parse(path.read_text(encoding="utf-8")).body)
        for node in statements:
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    here = name.split(".") if is_package else name.split(".")[:-1]
                    here = here[: len(here) - (node.level - 1)]
                    base = ".".join(here + ([node.module] if node.module else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            graph.add_edges_from((name, t) for t in targets if t in modules and t != name)
    return graph


def cycles(graph: nx.DiGraph) -> list[list[str]]:
    """Every elementary cycle, each starting at its smallest module name, shortest first."""
    found = []
    for cycle in nx.simple_cycles(graph):
        start = cycle.index(min(cycle))
        found.append(cycle[start:] + cycle[:start])
    return sorted(found, key=lambda c: (len(c), c))


def test_the_package_has_no_import_cycle():
    graph = import_graph(ROOT / "eksmllint")
    assert graph.has_edge("eksmllint.core.engine", "eksmllint.loader")  # the graph is the real one
    found = cycles(graph)
    assert not found, "import cycles:\n" + "\n".join(" -> ".join([*c, c[0]]) for c in found)


#: Deferred imports that close a circle, each with what removes it. Workload.is_collective asks
#: the classifier, which sits above the workload views; it goes when the checks that read it ask
#: ``classify(w).collective`` (they are being split into one module per rule, issue 13).
KNOWN_DEFERRED = {("eksmllint.workload", "eksmllint.analysis.workload_class")}


def test_deferred_imports_close_no_circle_but_the_known_ones():
    graph = import_graph(ROOT / "eksmllint", deferred=True)
    assert graph.has_edge("eksmllint.loader", "eksmllint.loader.workers")  # deferred edges are in
    stale = [edge for edge in KNOWN_DEFERRED if not graph.has_edge(*edge)]
    assert not stale, f"gone, remove from KNOWN_DEFERRED: {stale}"
    graph.remove_edges_from(KNOWN_DEFERRED)
    found = cycles(graph)
    assert not found, "import cycles through deferred imports:\n" + "\n".join(" -> ".join([*c, c[0]]) for c in found)


def test_a_cycle_is_found_and_named(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg.sub import b\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text("from ..a import x\nfrom typing import TYPE_CHECKING\n")
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import a\n")
    (pkg / "d.py").write_text("def f():\n    from pkg import a\n")
    (pkg / "e.py").write_text("import pkg.d\n")
    assert cycles(import_graph(pkg)) == [["pkg.a", "pkg.sub.b"]]
    (pkg / "a.py").write_text("from pkg.sub import b\nimport pkg.e\n")
    assert cycles(import_graph(pkg, deferred=True)) == [["pkg.a", "pkg.sub.b"], ["pkg.a", "pkg.e", "pkg.d"]]
