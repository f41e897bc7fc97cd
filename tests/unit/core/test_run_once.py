"""LintRun.once: the one per-run cache API rules use."""

from __future__ import annotations

import pytest

from eksmllint.core.context import LintRun


@pytest.mark.parametrize("answer", [None, 0, (), "x"])
def test_each_answer_is_computed_once_per_object_even_when_falsy(answer):
    # A None answer used to be recomputed on every call: EML103 asked 1.7 million times for the
    # EC2NodeClass EFA of 1,115 pools (21 s of a 10,000-document run instead of 0.1 s).
    calls: list[object] = []

    def compute(run, obj):
        calls.append(obj)
        return answer

    run = LintRun([])
    a, b = object(), object()
    for _ in range(3):
        assert run.once("probe", a, compute) == answer
        assert run.once("probe", b, compute) == answer
    assert calls == [a, b]
