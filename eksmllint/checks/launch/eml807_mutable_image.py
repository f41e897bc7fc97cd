"""EML807 mutable-image: a training image referenced by a mutable tag (latest, or none), so pods of
one job and every restart can run different builds."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from eksmllint.core.context import LintRun, RuleContext
from eksmllint.core.finding import Finding

#: A templated reference or a placeholder (``${TAG}``, ``{{ .Values.image }}``, ``<image>``), or text.
_NOT_LITERAL = re.compile(r"[$<>{}\s]")


@lru_cache(maxsize=4096)  # one parse per distinct image: thousands of pods share a handful of images
def image_mutability(image: str) -> str | None:
    """Why an image reference is mutable (``"uses the tag latest"``, ``"has no tag"``), or None
    when it is pinned (a non-latest tag or a digest) or not a literal reference."""
    ref = image.strip()
    if not ref or _NOT_LITERAL.search(ref):
        return None  # templated or a placeholder
    repo = ref.split("/", 1)[1] if "/" in ref and _is_registry(ref.split("/", 1)[0]) else ref
    if repo.split("@")[0].rsplit(":", 1)[0] != repo.split("@")[0].rsplit(":", 1)[0].lower():
        return None  # repository names are lowercase: IMG_PLACEHOLDER is no image reference
    if "@" in ref:
        return None  # digest-pinned (a tag beside a digest is ignored by the runtime)
    last = ref.rsplit("/", 1)[-1]
    if ":" in last:
        tag = last.rsplit(":", 1)[1]
        return "uses the mutable tag latest" if tag == "latest" else None
    return "has no tag (the runtime pulls :latest)"


def _is_registry(first: str) -> bool:
    return "." in first or ":" in first or first == "localhost"


def check(ctx: RuleContext, run: LintRun) -> Iterator[Finding]:
    reported = set()  # a TrainJob's image, judged in the JobSet its runtime makes, is not judged twice
    for t in run.templates:
        if not t.is_training or not ctx.judges(t):
            continue  # idle, burn-in, serving and benchmark pods are not training images
        for c in t.init_containers + t.containers:
            image = c.image
            why = image_mutability(image) if image is not None else None
            if why is None:
                continue
            kind = "init container" if c.init else "container"
            reported.add(t.resource.location(c.path + ("image",)))
            yield ctx.report(
                t.resource,
                c.path + ("image",),
                f"image of {kind} {c.name!r} ({t.role} pods) {why}",
                detail=f"Image {image!r}: pods of one job and every restart can run a different build; pin a "
                "version tag, or better a digest.",
            )
    for r in run.of_kind("TrainJob"):
        image = r.get(("spec", "trainer", "image"))
        why = image_mutability(image) if isinstance(image, str) else None
        if why is not None and r.location(("spec", "trainer", "image")) not in reported:
            yield ctx.report(
                r,
                ("spec", "trainer", "image"),
                f"trainer image {why}",
                detail=f"Image {image!r}: nodes of one job and every restart can run a different build; pin a "
                "version tag, or better a digest.",
            )
