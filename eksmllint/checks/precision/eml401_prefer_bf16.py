"""EML401 prefer-bf16: a training container selects fp16 (and no bf16) on accelerators that all
support bf16; the fix switches every fp16 selection to bf16."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from eksmllint.checks.precision._shared import unsupported_everywhere
from eksmllint.checks.precision._uses import BF16, FP16
from eksmllint.core.finding import Applicability, Finding

if TYPE_CHECKING:
    from eksmllint.core.context import LintRun, RuleContext


def check(ctx: RuleContext, run: LintRun) -> Iterator[Finding]:
    yield from unsupported_everywhere(
        ctx,
        run,
        bf16_capable=True,
        chosen=FP16,
        other=BF16,
        applicability=Applicability.SAFE,
        what="{who} trains in fp16 ({texts}) on accelerators that support bf16",
        why="The accelerators ({acc}) support bf16: it keeps fp32's exponent range, so it needs no loss scaling "
        "and does not overflow to inf/NaN.",
    )
