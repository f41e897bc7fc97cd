"""EML906 ami-alias-predates-version: an EC2NodeClass pins an AMI alias to a dated release
(``al2023@v20240807``) built before the target Kubernetes version reached EKS: that release has no
AMI for the version, the alias resolves nothing and the pool launches no node."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date, timedelta

from eksmllint.checks.storage._shared import is_nodeclass
from eksmllint.checks.storage.eml903_ami_family_unsupported import AL2_LAST_VERSION
from eksmllint.core.context import RuleContext
from eksmllint.core.finding import Applicability, Finding, Fix, SetValue
from eksmllint.platform import parse_version
from eksmllint.platform.eks_releases import eks_release
from eksmllint.resource import Resource

#: Amazon Linux aliases carry the AMI release date (Karpenter EC2NodeClass docs: "a date tag for
#: AL2/AL2023"); Bottlerocket's semver says nothing about a date and is not judged.
_DATED_ALIAS = re.compile(r"^(?P<family>al2|al2023)@v(?P<date>\d{8})$")


def check(ctx: RuleContext, r: Resource) -> Iterator[Finding]:
    if not is_nodeclass(r):
        return
    try:
        version = parse_version(ctx.run.settings.kubernetes_version)
    except ValueError:
        return
    release = eks_release(version)
    terms = r.get(("spec", "amiSelectorTerms"))
    if release is None or not isinstance(terms, list):
        return  # a version the table does not know: stay silent
    margin = timedelta(days=int(ctx.options.get("margin-days", 14)))
    target = ".".join(map(str, version))
    for i, term in enumerate(terms):
        raw = term.get("alias") if isinstance(term, dict) else None
        alias = raw.strip() if isinstance(raw, str) else ""
        m = _DATED_ALIAS.match(alias.lower())
        built = _date(m.group("date")) if m else None
        if m is None or built is None or built + margin >= release.eks_release:
            continue
        if m.group("family") == "al2" and version > AL2_LAST_VERSION:
            continue  # no AL2 AMI at all for this version: EML903's finding
        latest = f"{m.group('family')}@latest"
        path = ("spec", "amiSelectorTerms", i, "alias")
        yield ctx.report(
            r,
            path,
            f"alias {alias} predates Kubernetes {target} on EKS ({release.eks_release}): no AMI, no nodes",
            fix=Fix(
                f"Use {latest} (then pin a release dated after {release.eks_release})",
                (SetValue(path, latest),),
                Applicability.UNSAFE,
            ),
        )


def _date(text: str) -> date | None:
    try:
        return date(int(text[:4]), int(text[4:6]), int(text[6:]))
    except ValueError:
        return None
