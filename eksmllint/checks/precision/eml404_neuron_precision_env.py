"""EML404 neuron-precision-env: XLA_USE_BF16 / XLA_DOWNCAST_BF16 on Trainium are dead from Neuron
SDK 2.25, and on older SDKs override the precision the script asks for."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from eksmllint.checks.helpers import sentences
from eksmllint.checks.precision._shared import analyse, report, texts_of, uses_neuron, who
from eksmllint.checks.precision._uses import BF16, FP16, FP32, XLA_ENV
from eksmllint.core.finding import Finding
from eksmllint.quantity import DIGITS
from eksmllint.workload import PodTemplate

if TYPE_CHECKING:
    from eksmllint.core.context import RuleContext


#: Neuron SDK release from which torch-xla ignores XLA_USE_BF16 / XLA_DOWNCAST_BF16 (Neuron 2.24 was
#: the last to support them: announce-eos-bf16-vars; Torch-XLA 2.8 removed them).
XLA_BF16_ENV_IGNORED_FROM = (2, 25)
_NEURON_SDK_TAG = re.compile(rf"[-_.]sdk({DIGITS})\.({DIGITS})(?:\.\d+)?(?:[-_.]|$)")


def neuron_sdk_of_image(image: str | None) -> tuple[int, int] | None:
    """Neuron SDK (major, minor) a Neuron DLC tag names (``...-neuronx-py310-sdk2.20.0-ubuntu20.04``)."""
    tag = image.rsplit("/", 1)[-1].partition(":")[2] if isinstance(image, str) else ""
    m = _NEURON_SDK_TAG.search(tag)
    return (int(m.group(1)), int(m.group(2))) if m else None


def _sdk(ctx: RuleContext, image: str | None) -> tuple[tuple[int, int], str]:
    """The Neuron SDK the container runs and how it is known: the image tag's, else the platform's."""
    sdk = neuron_sdk_of_image(image)
    if sdk is not None:
        return sdk, f"the image names Neuron SDK {sdk[0]}.{sdk[1]}"
    return ctx.platform.version("neuron-sdk"), (
        f"the image tag names no Neuron SDK version: {ctx.platform.describe('neuron-sdk')}"
    )


def check(ctx: RuleContext, t: PodTemplate) -> Iterator[Finding]:
    """The Neuron SDK is the one the image tag names, else the platform's (config ``platform.neuron-sdk``)."""
    if not t.is_training or not uses_neuron(t):
        return
    for c in t.containers:
        p = analyse(ctx.run, c)
        xla = [u for u in p.uses if u.origin == XLA_ENV and u.precision == BF16]
        if not xla:
            continue
        sdk, basis = _sdk(ctx, c.image)
        if sdk >= XLA_BF16_ENV_IGNORED_FROM:
            yield report(
                ctx,
                xla[0],
                f"{who(c, xla[0])} sets {texts_of(xla)}, which Neuron SDK 2.25 and later ignore",
                detail=sentences(
                    basis,
                    "torch-xla no longer casts to bf16, so the run uses whatever precision autocast, "
                    "model.to(torch.bfloat16) or its flags select; remove the variable and choose bf16 there",
                ),
                related=xla[1:],
            )
            continue
        req = p.requested()
        if p.of(BF16, req):
            continue
        other = [u for u in req if u.precision in (FP16, FP32)]
        if not other:
            continue
        u = other[0]
        if u.precision == FP16:
            asked, consequence = "fp16", "the model trains in bf16 while the code and its fp16 loss scaling assume fp16"
        else:
            asked, consequence = "full fp32 precision", "the model trains in bf16 although fp32 was asked for"
        yield report(
            ctx,
            u,
            f"{who(c, u)} asks for {asked} ({u.text}) but {texts_of(xla)} casts to bf16",
            detail=sentences(f"torch-xla casts fp32 tensors to bf16 on the Neuron devices ({basis}), so {consequence}"),
            related=other[1:] + xla,
        )
