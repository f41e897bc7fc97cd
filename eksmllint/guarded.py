"""Regular expressions behind a substring test.

``re`` skips ahead only to a literal prefix. A pattern without one (an alternation, ``\\b(...)``)
tries a match at every position of the text, which on a long command costs several times a few
``in`` tests. A :class:`Guarded` pattern names words of which every match contains at least one,
and searches only texts that hold one of them, so its answers are the pattern's own
(tests/unit/analysis/test_launcher_prefilter.py checks each pattern against its words).
"""

from __future__ import annotations

import re
from collections.abc import Iterator


class Guarded:
    __slots__ = ("pattern", "words")

    def __init__(self, pattern: str, words: tuple[str, ...]) -> None:
        self.pattern = re.compile(pattern)
        self.words = words  # every match of the pattern contains one of them

    # (The word test is written in each method: a shared helper is a call per text on hot paths.)
    def search(self, text: str) -> re.Match[str] | None:
        return self.pattern.search(text) if any(word in text for word in self.words) else None

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        return self.pattern.finditer(text) if any(word in text for word in self.words) else iter(())
