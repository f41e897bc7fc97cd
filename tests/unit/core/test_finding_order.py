"""Findings come out in one total order, however they were produced (``core.finding.in_order``)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from eksmllint.core.finding import Finding, Location, Severity, finding_order, in_order

# Few distinct values, so that findings tie on file, line, column, code and message and the
# tie-breakers (path, slug, severity, suppression) decide.
_paths = st.lists(st.sampled_from(["spec", "template", "a.b", 0, 1]), max_size=3).map(tuple)
_findings = st.builds(
    lambda file, line, code, message, path, slug, sev, sup: Finding(
        code, slug, sev, message, Location(file, line, 1, path=path), suppressed_by=sup
    ),
    st.sampled_from(["a.yaml", "b.yaml"]),
    st.integers(1, 2),
    st.sampled_from(["EML101", "EML301"]),
    st.sampled_from(["m", "n"]),
    _paths,
    st.sampled_from(["x", "y"]),
    st.sampled_from(list(Severity)),
    st.sampled_from([None, "noqa"]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_findings, max_size=30))
def test_in_order_is_the_full_finding_order(findings):
    assert in_order(findings) == sorted(set(findings), key=finding_order)
    assert [finding_order(f) for f in in_order(findings)] == sorted(finding_order(f) for f in set(findings))


def test_only_tied_findings_are_hashed(monkeypatch):
    """Duplicates are looked for among findings that tie on their sort key (equal ones do): a run
    of distinct findings hashes none of them (a set of all of them did: one hash a finding)."""
    from repository import ROOT

    from eksmllint.core.engine import lint_text

    bad = (ROOT / "fixtures" / "rules" / "EML301-shm-missing" / "bad.yaml").read_text()
    text = "---\n".join(bad.replace("llama-pretrain", f"job-{i}") for i in range(20))
    hashed = []
    hash_of = Finding.__hash__

    def counted(f: Finding) -> int:
        hashed.append(f)
        return hash_of(f)

    monkeypatch.setattr(Finding, "__hash__", counted)
    findings = lint_text(text, name="jobs.yaml").findings
    assert len(findings) >= 20
    assert len({f.sort_key() for f in findings}) == len(findings)  # no ties
    assert hashed == []
