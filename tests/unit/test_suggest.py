"""The "did you mean" search is bounded (issue 23): comparisons are counted, never timed.

A comparison is one candidate measured by a ``SequenceMatcher`` (its first, cheapest bound
``real_quick_ratio``), which ``difflib.get_close_matches`` does once per candidate."""

from __future__ import annotations

import difflib
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eksmllint.config import Config, with_overrides
from eksmllint.core.engine import lint_text
from eksmllint.suggest import MAX_COMPARED, Names, closest


def _counted(monkeypatch: pytest.MonkeyPatch, method: str) -> list[int]:
    """Calls of ``SequenceMatcher.<method>`` from now on, in a one-item list."""
    count = [0]
    original = getattr(difflib.SequenceMatcher, method)

    def counted(self: difflib.SequenceMatcher) -> float:
        count[0] += 1
        return original(self)

    monkeypatch.setattr(difflib.SequenceMatcher, method, counted)
    return count


@pytest.fixture
def comparisons(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    return _counted(monkeypatch, "real_quick_ratio")


WORD = st.text(alphabet="abcde-0123", min_size=1, max_size=12)


@settings(max_examples=200, deadline=None)
@given(WORD, st.lists(WORD, max_size=MAX_COMPARED))
def test_small_sets_give_difflibs_answer(word: str, names: list[str]) -> None:
    expected = difflib.get_close_matches(word, names, n=1, cutoff=0.6)
    assert closest(word, names, cutoff=0.6) == (expected[0] if expected else None)


def test_comparisons_per_word_are_capped(comparisons: list[int]) -> None:
    names = Names((f"train-config-{i:05d}" for i in range(5000)), cutoff=0.75)
    words = [f"train-confg-{i:05d}" for i in range(0, 5000, 50)]  # 100 typos
    for word in words + words:  # the second round is answered from memory
        names.closest(word)
    assert 0 < comparisons[0] <= len(words)  # one each (a full scan: 100 x 5,000)


def test_large_sets_do_not_guess_between_siblings() -> None:
    names = Names((f"run-{i:04d}" for i in range(0, 100, 2)), cutoff=0.75)
    assert names.closest("run-0041") is None  # run-0040 and run-0042 are as close
    assert names.closest("rnu-0042") == "run-0042"


@pytest.mark.parametrize(
    "word, meant",
    [
        ("train-confg-02345", "train-config-02345"),  # typo in the middle: the prefix is kept
        ("rain-config-02345", "train-config-02345"),  # typo at the start: the suffix is kept
        ("train-config-2345", "train-config-02345"),
    ],
)
def test_large_sets_still_find_the_typo(word: str, meant: str) -> None:
    names = Names((f"train-config-{i:05d}" for i in range(5000)), cutoff=0.75)
    assert names.closest(word) == meant


def _dangling(refs: int, names: int) -> str:
    maps = [
        f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: train-config-{i:05d}, namespace: ml}}\ndata: {{a: b}}\n"
        for i in range(names)
    ]
    pods = [
        f"""apiVersion: v1
kind: Pod
metadata: {{name: p-{i}, namespace: ml}}
spec:
  containers:
    - name: c
      image: busybox:1.36
      envFrom: [{{configMapRef: {{name: team-settings-{i % (refs // 2):05d}}}}}]
"""
        for i in range(refs)
    ]
    return "---\n".join(maps + pods)


def test_eml703_comparisons_bounded_per_dangling_name(comparisons: list[int]) -> None:
    """N references (N/2 distinct missing names) over M ConfigMaps: at most one comparison per
    distinct name (none here: no name is a typo of another), where one search per reference over
    every name made N x M."""
    refs, names = 200, 2000
    result = lint_text(_dangling(refs, names), with_overrides(Config(), select=("EML703",)))
    found = [f for f in result.findings if f.code == "EML703"]
    assert len(found) == refs
    assert comparisons[0] <= refs // 2


def test_eml703_still_suggests_in_a_large_run() -> None:
    text = _dangling(2, 500) + "---\n" + _dangling(2, 0).replace("team-settings-00000", "train-confg-00123")
    result = lint_text(text, with_overrides(Config(), select=("EML703",)))
    assert any("did you mean 'train-config-00123'?" in f.message for f in result.findings)


def test_schema_unknown_fields_bounded(comparisons: list[int]) -> None:
    """A ConfigMap with 500 unknown fields: only the reported ones (at most MAX_ISSUES, per bundled
    Kubernetes version EML002 asks) are searched, each against a ConfigMap's 6 known fields."""
    from eksmllint.schema.core import MAX_ISSUES, supported_versions

    rnd = random.Random(7)
    keys = "".join(f"  field{rnd.randrange(10**6)}x{i}: 1\n" for i in range(500))
    text = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n{keys}"
    result = lint_text(text, with_overrides(Config(), select=("EML002",)))
    assert sum(f.code == "EML002" for f in result.findings) >= 1
    assert 0 < comparisons[0] <= len(supported_versions()) * (MAX_ISSUES + 1) * 6  # 21st: 'more were cut'


def test_unknown_kinds_bounded(comparisons: list[int]) -> None:
    """EML002's and EML004's kind suggestions: one search per document, over a fixed table."""
    docs = 40
    core = "".join(f"---\napiVersion: apps/v1\nkind: Deploymnet{i}\nmetadata: {{name: d{i}}}\n" for i in range(docs))
    crd = "".join(
        f"---\napiVersion: karpenter.sh/v1\nkind: NodePol{i}\nmetadata: {{name: n{i}}}\nspec: {{}}\n"
        for i in range(docs)
    )
    result = lint_text(core + crd, with_overrides(Config(), select=("EML002", "EML004")))
    assert {f.code for f in result.findings} >= {"EML002", "EML004"}
    assert 0 < comparisons[0] <= 2 * docs * MAX_COMPARED  # each table has fewer kinds


def test_full_ratio_only_for_candidates_that_can_still_win(monkeypatch: pytest.MonkeyPatch) -> None:
    """Numbered siblings all pass the cheap bounds; the full ratio (most of a comparison's cost:
    EML703 on a 1k-document run of dangling references spent half its time there) is computed best
    bound first, until no bound can beat the best."""
    full = _counted(monkeypatch, "ratio")
    names = [f"train-config-{i:02d}" for i in range(MAX_COMPARED)]
    assert closest("train-config-07x", names, cutoff=0.75) == "train-config-07"
    assert full[0] <= 2  # the siblings pass the cheap bounds: 8 full ratios before
