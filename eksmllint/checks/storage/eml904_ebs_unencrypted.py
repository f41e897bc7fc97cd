"""EML904 ebs-unencrypted: an EC2NodeClass block device mapping does not set ``encrypted: true``
(the fix sets it)."""

from __future__ import annotations

from collections.abc import Iterator

from eksmllint.checks.storage._shared import is_nodeclass
from eksmllint.core.context import RuleContext
from eksmllint.core.finding import Finding, Fix, SetValue
from eksmllint.resource import Resource


def check(ctx: RuleContext, r: Resource) -> Iterator[Finding]:
    """EML904: an EBS block device mapping of an EC2NodeClass without ``encrypted: true``."""
    if not is_nodeclass(r):
        return
    mappings = r.get(("spec", "blockDeviceMappings"))
    if not isinstance(mappings, list):
        return
    for i, bdm in enumerate(mappings):
        ebs = bdm.get("ebs") if isinstance(bdm, dict) else None
        if not isinstance(ebs, dict):
            continue
        enc = ebs.get("encrypted")
        if enc is True or (isinstance(enc, str) and enc.strip().lower() == "true"):
            continue
        device = bdm.get("deviceName") if isinstance(bdm.get("deviceName"), str) else f"#{i}"
        ebs_path = ("spec", "blockDeviceMappings", i, "ebs")
        state = "has encrypted: false" if "encrypted" in ebs else "does not set encrypted: true"
        yield ctx.report(
            r,
            ebs_path + (("encrypted",) if "encrypted" in ebs else ()),
            f"EBS volume {device} {state}",
            detail="The node's disk (container images, logs, emptyDir and local checkpoint data) is stored "
            "unencrypted at rest.",
            fix=Fix(f"Set encrypted: true on block device {device}", (SetValue(ebs_path + ("encrypted",), True),)),
        )
