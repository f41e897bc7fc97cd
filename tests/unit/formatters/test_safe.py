"""One-line reports: unsafe characters are escaped; the fast path for clean text is sound."""

from __future__ import annotations

import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from eksmllint.formatters.safe import _UNSAFE, _escape, one_line


def test_every_unsafe_character_is_unprintable():
    # one_line returns printable text unchanged without running the regex: sound only while no
    # character the regex escapes is printable.
    unsafe = [chr(c) for c in range(sys.maxunicode + 1) if _UNSAFE.match(chr(c))]
    assert len(unsafe) > 60 and not [c for c in unsafe if c.isprintable()]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(["a", " ", "\t", "\n", "\x1b", "\u2028", "\u202e", "é", "\x85"])))
def test_one_line_is_the_escaping_regex(text):
    assert one_line(text) == _UNSAFE.sub(_escape, text)
    assert "\n" not in one_line(text) and "\x1b" not in one_line(text)
