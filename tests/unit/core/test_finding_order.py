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
    assert in_order(findings) == sorted(findings, key=finding_order)
    assert [finding_order(f) for f in in_order(findings)] == sorted(finding_order(f) for f in findings)
