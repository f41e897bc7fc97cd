"""Every finding's message is one line that says what is wrong (issue 25): at most
``LIMIT`` characters on the fixtures and examples, nearly all within ``TARGET``; why and how are
the finding's ``detail`` (docs/writing-rules.md)."""

from __future__ import annotations

import importlib.util
import statistics

from repository import ROOT

_spec = importlib.util.spec_from_file_location("message_lengths", ROOT / "scripts" / "message_lengths.py")
assert _spec is not None and _spec.loader is not None
lengths = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(lengths)


def test_messages_are_one_short_line():
    found = lengths.messages()
    assert len({code for code, _ in found}) >= 50  # the fixtures cover nearly every rule
    too_long = [(code, len(m), m) for code, m in found if len(m) > lengths.LIMIT or "\n" in m]
    assert too_long == [], "move the why and the how into detail=..."
    sizes = [len(m) for _, m in found]
    assert statistics.median(sizes) <= 100
    assert sum(n > lengths.TARGET for n in sizes) <= len(sizes) // 20  # at most 5 % over the target
