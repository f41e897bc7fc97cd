"""Untrusted text (file names, object names, annotation values, messages quoting them) made safe
for one-line reports: a newline in a file name must not start a forged finding line, a log line or
a GitHub workflow command, and an escape sequence must not repaint the terminal."""

from __future__ import annotations

import re

#: C0 and C1 controls, DEL, Unicode line/paragraph separators and bidirectional overrides
#: ("Trojan Source"), and the two characters XML 1.0 forbids outright (U+FFFE, U+FFFF); tab is
#: left alone (it breaks no line).
_UNSAFE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufffe\uffff]")
_NAMED = {"\n": "\\n", "\r": "\\r"}


def _escape(m: re.Match) -> str:
    c = m.group()
    return _NAMED.get(c) or (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")


def one_line(text: str) -> str:
    """``text`` with every unsafe character written as a visible escape (``\\n``, ``\\x1b``)."""
    if text.isprintable():  # the common case, one C pass: every unsafe character is unprintable
        return text
    return _UNSAFE.sub(_escape, text)
