"""Lengths of every finding's one-line message on the rule fixtures and the examples (each folder
linted as its own run): the median, the longest and how many exceed the target, per rule with
``--per-rule``. The convention (docs/writing-rules.md): a message says what is wrong in one line;
why it matters and what to do go in the finding's ``detail``.

    python scripts/message_lengths.py [--per-rule]
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = 120  # characters: a message longer than this is a paragraph, not a line
LIMIT = 160  # no message may exceed this (names and values the rule quotes make up the rest)


def messages(root: Path = ROOT) -> list[tuple[str, str]]:
    """(code, message) of every finding on ``fixtures/rules/*`` and ``fixtures/examples``."""
    from eksmllint.config import resolve_config
    from eksmllint.core.engine import lint_paths

    cfg = resolve_config(None, cwd=root)
    folders = sorted((root / "fixtures" / "rules").iterdir()) + [root / "fixtures" / "examples"]
    return [(f.code, f.message) for d in folders for f in lint_paths([str(d)], cfg).findings]


def main(argv: list[str]) -> int:
    found = messages()
    lengths = [len(m) for _, m in found]
    print(
        f"{len(found)} findings: median {statistics.median(lengths):.0f}, max {max(lengths)} characters; "
        f"{sum(n > TARGET for n in lengths)} over {TARGET}, {sum(n > LIMIT for n in lengths)} over {LIMIT}"
    )
    if "--per-rule" in argv:
        longest: dict[str, str] = {}
        for code, message in found:
            if len(message) > len(longest.get(code, "")):
                longest[code] = message
        for code, message in sorted(longest.items()):
            print(f"{code} {len(message):4d} {message}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
