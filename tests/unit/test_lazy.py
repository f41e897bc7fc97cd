"""Per-view caches: computed once per object, never shared between objects."""

from __future__ import annotations

from eksmllint.lazy import kept_on


class View:
    def __init__(self, n: int) -> None:
        self.n = n


def test_kept_on_computes_once_per_object_and_keeps_none_answers():
    calls = []

    @kept_on
    def answer(view: View) -> int | None:
        calls.append(view.n)
        return None if view.n == 0 else view.n * 2

    a, b, zero = View(1), View(2), View(0)
    assert [answer(a), answer(b), answer(a), answer(zero), answer(zero)] == [2, 4, 2, None, None]
    assert calls == [1, 2, 0]
    assert answer.__name__ == "answer"
