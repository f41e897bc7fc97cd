"""A ``kind: List`` is read one item at a time (issue 22, item 7): its items never exist as one
node tree, so it costs what the same objects cost as separate documents, and its data and
positions are those of libyaml's own composer."""

from __future__ import annotations

import re
import tracemalloc

import pytest

from eksmllint import yamlpos
from eksmllint.loader import load


def _pod(i: int) -> str:
    return f"{{apiVersion: v1, kind: Pod, metadata: {{name: p{i}}}, spec: {{containers: [{{name: c, image: x}}]}}}}"


def _peak_bytes(text: str) -> int:
    tracemalloc.start()
    try:
        docs, err = yamlpos.load_yaml_stream(text)
        assert err is None and docs
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_list_peaks_like_the_same_objects_as_documents():
    # Counted, not timed: bytes allocated at the peak. Composed whole, the List held ~2.5x the
    # memory of the same Pods as documents (its whole node tree next to the data).
    n = 2_000
    as_list = _peak_bytes("apiVersion: v1\nkind: List\nitems:\n" + "".join(f"- {_pod(i)}\n" for i in range(n)))
    as_documents = _peak_bytes("".join(f"---\n{_pod(i)}\n" for i in range(n)))
    assert as_list < 1.2 * as_documents, (as_list, as_documents)


def _plain(value):
    if isinstance(value, dict):
        return ("map", value.start, dict(value.pos), {k: _plain(v) for k, v in value.items()})
    if isinstance(value, list):
        return ("seq", value.start, list(value.pos), [_plain(v) for v in value])
    return (type(value).__name__, value)


def _read(text: str) -> tuple[list, tuple | None]:
    docs, err = yamlpos.load_yaml_stream(text)
    return [(_plain(d.data), d.start_line, d.end_line) for d in docs], (err and (err.message, err.line, err.col))


@pytest.mark.parametrize(
    "text",
    [
        "apiVersion: v1\nitems:\n- kind: Pod\n  metadata: {name: a}\n- {kind: Pod}\nkind: List\nmetadata: {}\n",
        "kind: List\nitems:\n- &a {x: 1}\n- *a\n- <<: *a\n  y: 2\n- !!str 1\n- '2'\n- 0x10\n- !custom {a: 1}\n",
        "kind: List\nitems: &i\n- 1\nother: *i\n",  # an anchored items list is composed whole
        "kind: List\nitems:\n- *nope\n",
        "kind: List\nitems:\n- &a 1\n- &a 2\n",
        "kind: List\nitems:\n- a: 1\n  a: 2\n",
        "kind: List\nitems:\n- " + "[" * 250 + "]" * 250 + "\n",
        "kind: List\nitems:\n- &x [*x]\n",
        "---\nkind: List\nitems: []\n---\n---\nfoo\n---\n- 1\n- &b 2\n- *b\n",
        "kind: List\nitems:\n- [1, 2\n",
        '{"kind": "List", "items": [{"a": 1}, {"b": [1, 2]}]}',
        "kind: List\nitems:\n- [" + "1," * (yamlpos.MAX_NODES + 10) + "1]\n",
    ],
)
def test_items_read_one_at_a_time_are_what_libyaml_composes(text, monkeypatch):
    assert yamlpos._MAY_BE_LIST.search(text)
    streamed = _read(text)
    monkeypatch.setattr(yamlpos, "_MAY_BE_LIST", re.compile("(?!)"))  # libyaml's composer
    assert streamed == _read(text)


def test_items_past_the_budget_are_not_kept_even_when_kind_comes_last(tmp_path, monkeypatch):
    monkeypatch.setattr(yamlpos, "MAX_DOCUMENTS", 3)
    items = "".join(f"- {_pod(i)}\n" for i in range(5))
    text = f"apiVersion: v1\nitems:\n{items}kind: List\n---\n{_pod(9)}\n"
    docs, err = yamlpos.load_yaml_stream(text)
    assert [len(d.data["items"]) for d in docs] == [3]  # the file is not read past the List
    assert (err.message, err.line, err.col) == (yamlpos.objects_over_budget(3), 6, 3)
    path = tmp_path / "pods.yaml"
    path.write_text(text)
    result = load([str(path)])
    assert [r.name for r in result.resources] == ["p0", "p1", "p2"]
    (problem,) = result.problems  # said once, by the parser (the loader does not repeat it)
    assert (problem.message, problem.line) == (yamlpos.objects_over_budget(3), 6)


def test_a_long_items_list_that_is_not_a_list_kind_says_what_was_read(monkeypatch):
    monkeypatch.setattr(yamlpos, "MAX_DOCUMENTS", 2)
    docs, err = yamlpos.load_yaml_stream("kind: List\n---\nkind: Other\nitems: [1, 2, 3]\n")
    assert docs[1].data["items"] == [1] and "top-level items list" in err.message


class _CountingPattern:
    """Stands in for :data:`yamlpos._MAY_BE_LIST`, counting the texts it reads."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern
        self.searches = 0

    def search(self, text: str) -> re.Match[str] | None:
        self.searches += 1
        return self.pattern.search(text)


def test_only_a_text_that_spells_list_is_searched_for_a_list(monkeypatch):
    """Counted: the line-by-line search for ``kind: List`` runs on a text that holds "List" at
    all, never on the others (old: once per text, 40 of 40 here)."""
    counting = _CountingPattern(yamlpos._MAY_BE_LIST)
    monkeypatch.setattr(yamlpos, "_MAY_BE_LIST", counting)
    texts = [_pod(i) for i in range(40)] + [f"kind: List\nitems:\n- {_pod(i)}\n" for i in range(3)]
    for text in texts:
        docs, err = yamlpos.load_yaml_stream(text)
        assert err is None and len(docs) == 1
    assert counting.searches == 3
