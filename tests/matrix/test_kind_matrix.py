"""The shape matrix, kind dimension: every template rule's own defect, transplanted into every kind.

For each rule that judges pod templates or workloads, the pod template its ``bad`` fixture reports
is lifted out with the objects around it (NodePools, ConfigMaps, PVCs ...) and wrapped as every kind
of :data:`kind_matrix.BASES`; the same is done with each pod template of its ``good`` fixture. A
bad cell must fire wherever the rule judges the transplanted workload's class; a good cell must
stay silent. A bad cell that stays silent although its class is judged is a miss, unless
:data:`EXPLAINED` says why the kind cannot carry that defect (and stays true: a stale entry fails).

``python tests/matrix/test_kind_matrix.py`` prints the table the README carries.
"""

from __future__ import annotations

import copy
import json
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
import yaml

if __name__ == "__main__":  # run as a script: tests/ on the path, as tests/conftest.py puts it
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kind_matrix import BASES, NAME
from repository import ROOT

from eksmllint.analysis.workload_class import classify, classify_template
from eksmllint.core.engine import lint_paths, lint_text
from eksmllint.core.registry import default_registry
from eksmllint.platform.kinds import row_for
from eksmllint.testing import discover_cases

pytestmark = pytest.mark.slow  # 1,300 lint runs: about a minute

_INDEPENDENT = ("Pod", "Deployment", "StatefulSet", "DaemonSet", "NodeSet")
_OPERATOR = (
    "PyTorchJob", "TFJob", "MPIJob", "JAXJob", "XGBoostJob", "PaddleJob", "TrainJob", "HyperPodPyTorchJob", "Katib Experiment"
)  # fmt: skip
_ALL = tuple(BASES)


def _why(codes: tuple[str, ...], kinds: tuple[str, ...], reason: str) -> dict[tuple[str, str], str]:
    return {(code, kind): reason for code in codes for kind in kinds}


#: (rule, kind) cells where the rule judges the class but the kind cannot carry the defect, and why.
EXPLAINED: dict[tuple[str, str], str] = {
    **_why(("EML103",), _INDEPENDENT, "independent pods make no inter-node collective for EFA to carry"),
    **_why(("EML201",), ("Volcano Job",), "a Volcano Job is gang-scheduled by construction (minAvailable)"),
    **_why(("EML204", "EML706"), _ALL, "the defect is the workload's queue, which the pod template does not carry"),
    **_why(("EML301",), ("RayCluster", "RayJob"), "KubeRay mounts a memory-backed /dev/shm into Ray containers itself"),
    **_why(
        ("EML502",), ("Deployment", "StatefulSet"), "services are meant to be moved: do-not-disrupt would pin nodes"
    ),
    **_why(("EML503",), _ALL, "the defect is the workload's run length, which the pod template does not carry"),
    **_why(
        ("EML610",),
        _ALL,
        "the defect is a Ray Train launch against a Ray cluster (a RayJob's entrypoint, a submit to another "
        "workload's head Service), which one pod template does not carry",
    ),
    **_why(
        ("EML701", "EML702", "EML705"), ("DaemonSet",), "a DaemonSet's pods follow nodes; they never cause provisioning"
    ),
    **_why(("EML801",), _ALL, "the defect is a batch Job's completionMode, which the pod template does not carry"),
    **_why(("EML802",), _INDEPENDENT, "independent pods: no rendezvous master"),
    **_why(("EML802",), _OPERATOR, "the operator sets the rendezvous address itself"),
    **_why(
        ("EML808",),
        (*_OPERATOR, "LeaderWorkerSet", "RayCluster", "RayJob"),
        "its controller restarts the group, not a Job's backoffLimit pod by pod",
    ),
}


@dataclass(frozen=True)
class Base:
    """A template lifted out of a fixture, with the pods it ran and the objects around it."""

    template: dict
    pods: int
    namespace: str
    context: tuple[dict, ...]


def _plain(value):
    return json.loads(json.dumps(value))


def _lift(path: Path, cfg, code: str | None, classes: tuple = ()) -> list[Base]:
    """The templates of ``path`` (those ``code`` reports when given; else those of ``classes``, whose
    good example the template itself is), with the non-workload objects."""
    result = lint_paths([str(path)], cfg)
    run = result.run
    context = tuple(
        _plain(r.data) for r in run.resources if row_for(r.group, r.kind) is None and r.kind and r.api_version
    )
    templates = [t for t in run.templates if t.containers]
    if code is None and classes:  # a launcher's template is good only as a launcher
        templates = [t for t in templates if classify_template(t).cls.value in classes]
    if code is not None:
        reported = [f for f in result.active if f.code == code]

        def inside(t) -> bool:  # the finding points into the template
            return any(
                f.resource == t.resource.ref and tuple(f.location.path[len(f.base_path) :])[: len(t.path)] == t.path
                for f in reported
            )

        # a workload rule points at the workload: take the templates of the workloads it reports
        templates = [t for t in templates if inside(t)] or [
            t for t in templates if any(f.resource == t.resource.ref for f in reported)
        ]
    return [
        Base(_plain(t.resource.get(t.path)), max(t.replicas or 1, 1), t.resource.namespace or "default", context)
        for t in templates
    ]


#: Run rules that judge every pod template as a template rule would (and, besides, what is not a
#: template: EML401/EML402 also judge Slurm batch scripts on their partition's hardware).
TEMPLATE_RULES_OF_THE_RUN = frozenset({"EML401", "EML402"})


def _rules() -> list:
    registry = default_registry()
    cases = {c.code: c for c in discover_cases(ROOT / "fixtures" / "rules")}
    out = []
    for rule in registry:
        per_template = rule.spec.target in ("templates", "workloads") or rule.code in TEMPLATE_RULES_OF_THE_RUN
        if per_template and rule.code in cases and cases[rule.code].bad:
            out.append((rule, cases[rule.code]))
    return out


RULES = _rules()


@cache
def _bases(code: str, which: str) -> tuple[Base, ...]:
    case = next(c for r, c in RULES if r.code == code)
    path = case.bad if which == "bad" else case.good
    if path is None:
        return ()
    if which == "bad":
        return tuple(_lift(path, case.config(), code))
    rule = next(r for r, _ in RULES if r.code == code)
    if rule.spec.target == "workloads":
        return ()  # a workload rule's good example is good as a whole workload, not per template
    return tuple(_lift(path, case.config(), None, tuple(rule.spec.workload_classes or ())))


@dataclass(frozen=True)
class Cell:
    fired: bool
    judged: bool  # the rule judges the transplanted workload's class
    cls: str


_CELLS: dict[tuple[str, str, int], Cell] = {}


def _cell(rule, kind: str, base: Base, cfg) -> Cell:
    key = (rule.code, kind, id(base))  # bases are cached: the table reuses the tests' cells
    if key not in _CELLS:
        _CELLS[key] = _lint_cell(rule, kind, base, cfg)
    return _CELLS[key]


def _lint_cell(rule, kind: str, base: Base, cfg) -> Cell:
    docs = [copy.deepcopy(d) for d in base.context] + BASES[kind](base.template, base.pods, base.namespace)
    result = lint_text(yaml.safe_dump_all(docs, sort_keys=False), cfg, name=f"{kind}.yaml")
    mine = [w for w in result.run.workloads if w.resource.owner.name == NAME]
    classes = rule.spec.workload_classes
    found = [classify(w).cls.value for w in mine]
    judged = bool(mine) and (not classes or any(c in classes for c in found))
    fired = any(f.code == rule.code and f.resource is not None and f.resource.name == NAME for f in result.active)
    return Cell(fired, judged, ",".join(found) or "no workload")


CELLS = [(rule.code, kind) for rule, _ in RULES for kind in BASES]


@pytest.mark.parametrize(("code", "kind"), CELLS, ids=[f"{c}-{k}" for c, k in CELLS])
def test_bad_cell_fires_wherever_the_rule_judges_the_kind(code, kind):
    rule, case = next((r, c) for r, c in RULES if r.code == code)
    bases = _bases(code, "bad")
    assert bases, f"{case.bad}: no pod template carries the {code} defect"
    cells = [_cell(rule, kind, b, case.config()) for b in bases]
    judged = [c for c in cells if c.judged]
    if (code, kind) in EXPLAINED:
        assert not any(c.fired for c in cells), f"stale EXPLAINED entry: {code} x {kind} fires now"
        return
    missed = [c for c in judged if not c.fired]
    # a template whose defect needs the workload around it (several roles, a launcher's flags) may
    # not travel; one cell of the rule's bad templates must, and none may be silently missed where
    # the original fired on the same class
    assert not judged or any(c.fired for c in judged), f"{code} misses its defect as {kind}: {missed}"


@pytest.mark.parametrize(("code", "kind"), CELLS, ids=[f"{c}-{k}" for c, k in CELLS])
def test_good_cell_stays_silent(code, kind):
    """A good template that is good on its own (silent as a plain Pod: not good only beside the
    other templates of its workload, like an MPI launcher whose workers mount the checkpoint
    volume) stays silent as every kind."""
    rule, case = next((r, c) for r, c in RULES if r.code == code)
    for base in _bases(code, "good"):
        if _cell(rule, "Pod", base, case.config()).fired:
            continue
        cell = _cell(rule, kind, base, case.config())
        assert not cell.fired, f"{code} fires on its good template wrapped as {kind}"


def table() -> str:
    """The rule x kind table: ✓ fires on the defect, · the kind cannot carry it (reasons below the
    table), - the rule does not judge the class of what the kind runs, ✗ a miss (the test fails)."""
    kinds = list(BASES)
    lines = ["| rule | " + " | ".join(kinds) + " |", "|---|" + "---|" * len(kinds)]
    for rule, case in RULES:
        row = []
        for kind in kinds:
            cells = [_cell(rule, kind, b, case.config()) for b in _bases(rule.code, "bad")]
            if any(c.fired for c in cells):
                row.append("✓")
            elif (rule.code, kind) in EXPLAINED:
                row.append("·")
            elif any(c.judged for c in cells):
                row.append("✗")
            else:
                row.append("-")
        lines.append(f"| {rule.code} | " + " | ".join(row) + " |")
    reasons: dict[str, list[str]] = {}
    for (code, kind), why in EXPLAINED.items():
        reasons.setdefault(f"{code}: {why}", []).append(kind)
    lines.append("")
    lines += [
        f"- · {text} ({', '.join(kinds) if len(kinds) < len(BASES) else 'every kind'})"
        for text, kinds in reasons.items()
    ]
    return "\n".join(lines)


def test_readme_carries_the_current_table():
    """The README's rule x kind table is this module's output (``python tests/matrix/test_kind_matrix.py``)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start, end = "<!-- kind-matrix:start -->\n", "<!-- kind-matrix:end -->"
    assert start in text and end in text
    assert text.split(start, 1)[1].split(end, 1)[0].strip() == table().strip()


if __name__ == "__main__":
    print(table())
