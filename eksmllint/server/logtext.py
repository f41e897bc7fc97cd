"""Text from admitted objects and context files made safe for one log line.

Object names, annotation values and file names are chosen by whoever submits them; a newline in
one would forge a log line of its own ("denied Pod ml/x" followed by a fake "allowed ..."). Control
characters (and the Unicode line separators) are written as escapes instead.
"""

from __future__ import annotations

import re

_UNSAFE = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029\\]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\\": "\\\\"}


def escape_log(text: object) -> str:
    return _UNSAFE.sub(lambda m: _NAMED.get(m.group(), f"\\u{ord(m.group()):04x}"), str(text))
