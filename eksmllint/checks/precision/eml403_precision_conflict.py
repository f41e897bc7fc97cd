"""EML403 precision-conflict: one training container enables fp16 and bf16 at once (its launch
flags and env, or one DeepSpeed config)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from eksmllint.checks.precision._shared import analyse, report, texts_of, who
from eksmllint.checks.precision._uses import BF16, DS_CONFIG, FP16, Use
from eksmllint.core.finding import Finding
from eksmllint.workload import PodTemplate

if TYPE_CHECKING:
    from eksmllint.core.context import RuleContext


def check(ctx: RuleContext, t: PodTemplate) -> Iterator[Finding]:
    if not t.is_training:
        return
    for c in t.containers:
        p = analyse(ctx.run, c)
        launch = [u for u in p.requested() if u.origin != DS_CONFIG]
        groups = [launch]
        by_config: dict[tuple, list[Use]] = {}
        for u in p.uses:
            if u.origin == DS_CONFIG:
                by_config.setdefault((u.resource.key, u.path), []).append(u)
        groups += list(by_config.values())
        for group in groups:
            fp16, bf16 = p.of(FP16, group), p.of(BF16, group)
            if not fp16 or not bf16:
                continue
            first, second = (fp16, bf16) if group.index(fp16[0]) <= group.index(bf16[0]) else (bf16, fp16)
            yield report(
                ctx,
                second[0],
                f"{who(c, second[0])} enables both fp16 ({texts_of(fp16)}) and bf16 ({texts_of(bf16)}); only one "
                "can take effect (HF Trainer and DeepSpeed reject the combination, other launchers silently pick one)",
                related=first + second[1:],
            )
