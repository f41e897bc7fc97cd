"""Untrusted text (file names, object names, annotation values, messages quoting them) made safe
for one-line reports: a newline in a file name must not start a forged finding line, a log line or
a GitHub workflow command, and an escape sequence must not repaint the terminal."""

from __future__ import annotations

import re

#: C0 and C1 controls, DEL, Unicode line/paragraph separators and bidirectional overrides
#: ("Trojan Source"), the two characters XML 1.0 forbids outright (U+FFFE, U+FFFF), and lone
#: surrogates (the bytes of a non-UTF-8 file name: no encoder writes them); tab is left alone.
_UNSAFE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufffe\uffff\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r"}


def _escape(m: re.Match) -> str:
    c = m.group()
    code = ord(c)
    if 0xDC80 <= code <= 0xDCFF:  # a byte of a non-UTF-8 file name (os.fsdecode's surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    return _NAMED.get(c) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def one_line(text: str) -> str:
    """``text`` with every unsafe character written as a visible escape (``\\n``, ``\\x1b``)."""
    if text.isprintable():  # the common case, one C pass: every unsafe character is unprintable
        return text
    return _UNSAFE.sub(_escape, text)


_SURROGATES = re.compile("[\ud800-\udfff]")


def without_surrogates(text: str) -> str:
    """``text`` with the bytes of non-UTF-8 file names written as ``\\xff`` escapes and nothing
    else changed: for whole reports whose every field cannot be escaped one by one (HTML, SVG)."""
    return _SURROGATES.sub(_escape, text)
