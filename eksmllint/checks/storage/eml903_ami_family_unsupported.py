"""EML903 ami-family-unsupported: an EC2NodeClass selects Amazon Linux 2 (amiFamily AL2 or an
``al2@`` alias) for a target Kubernetes version EKS publishes no AL2 AMI for (1.33 and later)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from eksmllint.checks.storage._shared import is_nodeclass
from eksmllint.core.context import RuleContext
from eksmllint.core.finding import Applicability, DocPath, Finding, Fix, SetValue
from eksmllint.quantity import DIGITS
from eksmllint.resource import Resource

AL2_LAST_VERSION = (1, 32)


def _version(text: str) -> tuple[int, int] | None:
    m = re.fullmatch(rf"\s*v?({DIGITS})\.({DIGITS})(?:\.\d+)?\s*", str(text))
    return (int(m.group(1)), int(m.group(2))) if m else None


AL2023_ALIAS = "al2023@latest"


def check(ctx: RuleContext, r: Resource) -> Iterator[Finding]:
    """EML903: AL2 (amiFamily or ``al2@`` alias) with a target Kubernetes version of 1.33 or later."""
    version = _version(ctx.run.settings.kubernetes_version)
    if not is_nodeclass(r) or version is None or version <= AL2_LAST_VERSION:
        return
    ops: list[SetValue] = []
    first: DocPath | None = None
    family = r.get(("spec", "amiFamily"))
    if isinstance(family, str) and family.strip().upper() == "AL2":
        first = ("spec", "amiFamily")
        ops.append(SetValue(first, "AL2023"))
    terms = r.get(("spec", "amiSelectorTerms"))
    aliases = []
    if isinstance(terms, list):
        for i, term in enumerate(terms):
            alias = term.get("alias") if isinstance(term, dict) else None
            if isinstance(alias, str) and alias.strip().lower().startswith("al2@"):
                path = ("spec", "amiSelectorTerms", i, "alias")
                aliases.append(alias.strip())
                first = first or path
                # al2023@latest, not the AL2 pin: a release tag from before the target Kubernetes
                # version reached EKS has no AL2023 AMI for it, and Karpenter would resolve nothing
                ops.append(SetValue(path, AL2023_ALIAS))
    if first is None:
        return
    what = " and ".join(
        filter(
            None,
            [
                "amiFamily AL2" if first == ("spec", "amiFamily") else "",
                f"alias {', '.join(aliases)}" if aliases else "",
            ],
        )
    )
    target = ".".join(str(v) for v in version)
    yield ctx.report(
        r,
        first,
        f"{what} selects Amazon Linux 2, but EKS publishes no AL2 AMIs for Kubernetes {target}",
        detail="1.32 was the last; AL2 support ended 2025-11-26. Nodes cannot be launched.",
        fix=Fix(
            "Switch to AL2023 (alias al2023@latest: pin a release that exists for your Kubernetes "
            "version afterwards; review userData: AL2023 bootstraps with nodeadm, not bootstrap.sh)",
            tuple(ops),
            Applicability.UNSAFE,
        ),
    )
