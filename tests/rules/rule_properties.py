"""Properties every rule family's tests assert on its own fixtures: a safe fix, applied by the
real fixer, removes its finding and leaves a schema-valid document; no mutation of a fixture
makes a rule crash (an EML000 finding)."""

from __future__ import annotations

import copy
from functools import cache

import yaml
from builders import said
from hypothesis import strategies as st

from eksmllint.config import Config
from eksmllint.core.engine import lint_text
from eksmllint.fix.apply import apply_fix
from eksmllint.paths import rule_fixtures_dir

FIXTURES = rule_fixtures_dir()


def assert_fixes_remove_findings(case: str, code: str) -> None:
    """Fix the bad example of ``case`` one finding per pass (re-linting in between, so paths
    stay valid): every fixable finding goes, the others stay, and the result is schema-valid."""
    text = (FIXTURES / case / "bad.yaml").read_text(encoding="utf-8")
    cfg = Config(select=(code,))
    before = [f for f in lint_text(text, cfg, name="bad.yaml").active if f.code == code]
    fixable = [f for f in before if f.fix is not None]
    assert fixable, "the bad fixture has fixable findings"
    for _ in range(len(before)):
        current = [f for f in lint_text(text, cfg, name="bad.yaml").active if f.code == code and f.fix]
        if not current:
            break
        f = current[0]
        text = apply_fix(text, f.fix, f.location.doc_index)
    after = [f for f in lint_text(text, cfg, name="bad.yaml").active if f.code == code]
    assert len(after) == len(before) - len(fixable)
    assert not [f for f in lint_text(text, Config(select=("EML002",)), name="bad.yaml").active]


# deep-copied per draw: a shared [] or {} placed twice would make a cycle in the document
_ODD = st.sampled_from([None, "x", -1, 0, 3.5, True, [], {}, ["a"], {"k": "v"}, "720h", "Never", "0"]).map(
    copy.deepcopy
)


@cache
def _documents(pattern: str) -> list[dict]:
    return [
        d
        for case in sorted(FIXTURES.glob(pattern))
        for name in ("bad.yaml", "good.yaml")
        if (case / name).is_file()
        for d in yaml.safe_load_all((case / name).read_text(encoding="utf-8"))
        if isinstance(d, dict)
    ]


def _paths(data, path=()):
    yield path
    if isinstance(data, dict):
        for k, v in data.items():
            yield from _paths(v, path + (k,))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            yield from _paths(v, path + (i,))


def _set(data, path, value):
    cur = data
    for p in path[:-1]:
        cur = cur[p]
    cur[path[-1]] = value


def assert_never_crashes(data: st.DataObject, pattern: str, codes: tuple[str, ...]) -> None:
    """Draw up to four documents of the fixtures matching ``pattern``, replace up to four values
    with odd ones, and lint with ``codes``: no rule may crash."""
    docs = copy.deepcopy(data.draw(st.lists(st.sampled_from(_documents(pattern)), min_size=1, max_size=4)))
    for _ in range(data.draw(st.integers(1, 4))):
        doc = data.draw(st.sampled_from(docs))
        paths = [p for p in _paths(doc) if p]
        _set(doc, data.draw(st.sampled_from(paths)), data.draw(_ODD))
    text = yaml.safe_dump_all(docs)
    result = lint_text(text, Config(select=codes), name="m.yaml")
    crashes = [said(f) for f in result.findings if f.code == "EML000"]
    assert not crashes, crashes
