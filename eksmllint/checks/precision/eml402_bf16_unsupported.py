"""EML402 bf16-unsupported: a training container selects bf16 (and no fp16) where every accelerator
the pod can land on lacks bf16 (V100, T4); the unsafe fix switches to fp16."""

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
        bf16_capable=False,
        chosen=BF16,
        other=FP16,
        applicability=Applicability.UNSAFE,
        what="{who} requests bf16 ({texts}) on accelerators without bf16 support",
        why="It lands on {acc}, which have no bf16 support: training fails to start or falls back to slow emulation.",
    )
