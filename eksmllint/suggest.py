"""The one "did you mean" search: the name closest to a word, at a bounded cost.

``difflib.get_close_matches`` compares the word with every candidate (one ``SequenceMatcher``
each, ~10 µs). Over the names of a kind, once per dangling reference, that is quadratic in the size of the
repository (EML703 doubled a 5,000-document run). :class:`Names` searches sets of up to
:data:`MAX_COMPARED` names whole (then the answer is difflib's own). In larger sets it compares
only a name within edit distance two of the word (a typo), found through an index of the names'
one-character deletions (names up to :data:`MAX_INDEXED_LENGTH` characters), and only when there is
exactly one: where several names are that close (``run-0041`` for ``run-0042``, with ``run-0043``
also there) a suggestion would be a guess between siblings. So a word costs a few dictionary
lookups and at most one comparison. Answers are kept per word. Fixed small sets (the fields of a
schema object) use :func:`closest`, difflib's answer. The full ratio is computed best bound
first, and not for a candidate whose cheap upper bounds cannot beat the best so far.
"""

from __future__ import annotations

from collections.abc import Iterable

#: Sets of up to this many names are searched whole (one ``SequenceMatcher`` each, ~10 µs).
MAX_COMPARED = 16
#: Longest name indexed by its deletions in larger sets (an index of n names of length L holds
#: n x (L + 1) strings; Kubernetes names are usually far shorter than their 253-character limit).
MAX_INDEXED_LENGTH = 64


class Names:
    """A fixed set of names to suggest from, with the cutoff (0-1) of difflib's similarity ratio."""

    def __init__(self, names: Iterable[str], cutoff: float) -> None:
        self._names = sorted(set(names))
        self._cutoff = cutoff
        self._deletions: dict[str, list[str]] | None = None  # variant -> names, built when needed
        self._answers: dict[str, str | None] = {}

    def closest(self, word: str) -> str | None:
        """The most similar name at or above the cutoff (difflib's choice among the candidates)."""
        try:
            return self._answers[word]
        except KeyError:
            pass
        found = self.candidates(word)  # mostly none: no matcher is built for a word without candidates
        answer = self._answers[word] = best_match(word, found, self._cutoff) if found else None
        return answer

    def candidates(self, word: str) -> list[str]:
        """The names compared with ``word``: all of them, or the one name within edit distance two
        (one deletion away from a deletion of ``word``) if there is exactly one."""
        names = self._names
        if len(names) <= MAX_COMPARED:
            return names
        if self._deletions is None:
            self._deletions = {}
            for name in names:
                if len(name) > MAX_INDEXED_LENGTH:
                    continue
                for variant in _deletions(name):
                    self._deletions.setdefault(variant, []).append(name)
        if len(word) > MAX_INDEXED_LENGTH + 1:
            return []
        found: set[str] = set()
        for variant in _deletions(word):
            found.update(self._deletions.get(variant, ()))
        return list(found) if len(found) == 1 else []  # several as close: a guess, not a typo


def _deletions(word: str) -> set[str]:
    """``word`` and every string one character shorter that it contains."""
    return {word, *(word[:i] + word[i + 1 :] for i in range(len(word)))}


def best_match(word: str, candidates: Iterable[str], cutoff: float) -> str | None:
    """``difflib.get_close_matches(word, candidates, n=1, cutoff)``: the largest (ratio, name) at or
    above the cutoff. The full ratio (the costly part) is computed in the order of its cheap upper
    bound, best first, and only until no remaining bound can beat the best so far."""
    import difflib  # only for a message

    matcher = difflib.SequenceMatcher()
    matcher.set_seq2(word)
    bounded: list[tuple[float, str]] = []
    for name in candidates:
        matcher.set_seq1(name)
        if matcher.real_quick_ratio() >= cutoff and (bound := matcher.quick_ratio()) >= cutoff:
            bounded.append((bound, name))
    best: tuple[float, str] | None = None
    for bound, name in sorted(bounded, reverse=True):
        if best is not None and (bound, name) < best:
            break  # every later candidate's ratio is below its bound, below this one
        matcher.set_seq1(name)
        score = matcher.ratio()
        if score >= cutoff and (best is None or (score, name) > best):
            best = (score, name)
    return best[1] if best else None


def closest(word: str, names: Iterable[str], cutoff: float) -> str | None:
    """The name of ``names`` most similar to ``word``, or None: difflib's answer, for the small
    fixed sets of a table (the fields of one schema object, the kinds of one API group); names
    from the run go through :class:`Names`."""
    return best_match(word, names, cutoff)
