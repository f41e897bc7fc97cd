"""EML007 template-source: a Helm chart or another template source, linted once rendered."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from eksmllint.core.finding import Finding

if TYPE_CHECKING:
    from eksmllint.core.context import LintRun, RuleContext


def check(ctx: RuleContext, run: LintRun) -> Iterator[Finding]:
    """Nothing to judge here: the loader (eksmllint.loader.templates) reports template sources instead of
    EML001.
    The rule file exists so that the code is documented, selectable and explainable."""
    return iter(())
