"""EML000 internal-error: a rule raised; the run goes on and the crash is a finding."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from eksmllint.core.finding import Finding

if TYPE_CHECKING:
    from eksmllint.core.context import LintRun, RuleContext


def check(ctx: RuleContext, run: LintRun) -> Iterator[Finding]:
    """Nothing to judge here: the engine (eksmllint.core.engine) reports a check that raises, and the
    loader a file it failed to read.
    The rule file exists so that the code is documented, selectable and explainable."""
    return iter(())
