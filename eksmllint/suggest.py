"""The one "did you mean" search: the name closest to a word, at a bounded cost.

``difflib.get_close_matches`` compares the word with every candidate (one ``SequenceMatcher``
each). Over the names of a kind, once per dangling reference, that is quadratic in the size of
the repository (EML703 doubled a 5,000-document run). :class:`Names` compares at most
:data:`MAX_COMPARED` candidates per word: every name when there are no more than that (then the
answer is difflib's own), else the names next to the word in sorted order and in the sorted order
of the reversed names, i.e. those sharing its longest prefix or suffix, which a typo usually leaves
intact. Answers are kept per word, so a name referenced a thousand times is searched once.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable

#: Most candidates compared with one word (each comparison is a ``SequenceMatcher`` ratio).
MAX_COMPARED = 64


class Names:
    """A fixed set of names to suggest from, with the cutoff (0-1) of difflib's similarity ratio."""

    def __init__(self, names: Iterable[str], cutoff: float) -> None:
        self._names = sorted(set(names))
        self._cutoff = cutoff
        self._reversed: list[tuple[str, str]] | None = None  # (reversed name, name), built when needed
        self._answers: dict[str, str | None] = {}

    def closest(self, word: str) -> str | None:
        """The most similar name at or above the cutoff (difflib's choice among the candidates)."""
        try:
            return self._answers[word]
        except KeyError:
            pass
        import difflib  # only for a message

        found = difflib.get_close_matches(word, self.candidates(word), n=1, cutoff=self._cutoff)
        answer = self._answers[word] = found[0] if found else None
        return answer

    def candidates(self, word: str) -> list[str]:
        """The names compared with ``word``: all of them, or at most :data:`MAX_COMPARED`."""
        names = self._names
        if len(names) <= MAX_COMPARED:
            return names
        side = MAX_COMPARED // 4
        at = bisect.bisect_left(names, word)
        picked = dict.fromkeys(names[max(0, at - side) : at + side])
        if self._reversed is None:
            self._reversed = sorted((n[::-1], n) for n in names)
        rev = self._reversed
        at = bisect.bisect_left(rev, (word[::-1], ""))
        picked.update(dict.fromkeys(n for _, n in rev[max(0, at - side) : at + side]))
        return list(picked)


def closest(word: str, names: Iterable[str], cutoff: float) -> str | None:
    """The name of ``names`` most similar to ``word`` (see :class:`Names`), or None."""
    return Names(names, cutoff).closest(word)
