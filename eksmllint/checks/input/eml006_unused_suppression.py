"""EML006 unused-suppression: a suppression that matched no finding or names an unknown rule."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from eksmllint.core.finding import Finding

if TYPE_CHECKING:
    from eksmllint.core.context import LintRun, RuleContext


def check(ctx: RuleContext, run: LintRun) -> Iterator[Finding]:
    """Nothing to judge here: the suppression pass (eksmllint.core.suppression) reports suppressions
    that suppressed nothing, after every rule has run.
    The rule file exists so that the code is documented, selectable and explainable."""
    return iter(())
