"""EML108 socket-ifname-unmatched: ``NCCL_SOCKET_IFNAME`` (or Gloo's / TensorPipe's variable) names
only interfaces a pod on the cluster network cannot have (host NIC names such as ``ens5``): the
pod has ``lo`` and ``eth0``, so bootstrap finds no interface and process-group init fails."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from eksmllint.core.finding import Finding
from eksmllint.workload import PodTemplate

if TYPE_CHECKING:
    from eksmllint.core.context import RuleContext

#: The interfaces of a pod that is not on the host network and has no extra networks: the CNI's
#: eth0 (VPC CNI and the others) and loopback.
POD_INTERFACES = ("eth0", "lo")
#: Annotations through which Multus adds (or replaces) interfaces the manifest does not name.
MULTUS_PREFIXES = ("k8s.v1.cni.cncf.io/", "v1.multus-cni.io/")
#: NCCL reads a comma list of prefixes (``^`` excludes, ``=`` exact); Gloo and TensorPipe read names.
NCCL_SYNTAX = "NCCL_SOCKET_IFNAME"
NAME_LISTS = ("GLOO_SOCKET_IFNAME", "TP_SOCKET_IFNAME")


def check(ctx: RuleContext, t: PodTemplate) -> Iterator[Finding]:
    if t.spec.get("hostNetwork") is True:
        return  # the pod sees the node's NICs (ens5, enp...): host names are right there
    if any(str(k).startswith(MULTUS_PREFIXES) for k in t.annotations):
        return  # Multus adds interfaces this rule cannot see
    for c in t.containers:
        for i, e in enumerate(c.env_list):
            name, value = e.get("name"), e.get("value")
            if name not in (NCCL_SYNTAX, *NAME_LISTS) or "valueFrom" in e or not isinstance(value, str):
                continue
            if "$" in value or not value.strip():
                continue  # substituted at run time
            chosen = nccl_interfaces(value) if name == NCCL_SYNTAX else named_interfaces(value)
            if chosen is None or chosen:
                continue
            yield ctx.report(
                t.resource,
                c.path + ("env", i, "value"),
                f"{name}={value.strip()} matches no pod interface (the pod has {', '.join(POD_INTERFACES)})",
            )


def nccl_interfaces(value: str, interfaces: tuple[str, ...] = POD_INTERFACES) -> list[str] | None:
    """The interfaces NCCL would pick from ``interfaces`` for ``value`` (NCCL env docs: a comma list
    of prefixes, ``=`` for an exact name, a leading ``^`` for a list to exclude; loopback only when
    named explicitly); None when the value cannot be read."""
    text = value.strip()
    exclude = text.startswith("^")
    text = text[1:] if exclude else text
    exact = text.startswith("=")
    text = text[1:] if exact else text
    items = [p.strip() for p in text.split(",")]
    if not items or any(not p for p in items):
        return None

    def matches(iface: str) -> bool:
        return any(iface == p if exact else iface.startswith(p) for p in items)

    if exclude:
        return [i for i in interfaces if i != "lo" and not matches(i)]
    return [i for i in interfaces if matches(i) and (i != "lo" or "lo" in items)]


def named_interfaces(value: str, interfaces: tuple[str, ...] = POD_INTERFACES) -> list[str] | None:
    """Gloo / TensorPipe: interface names, comma separated."""
    names = [p.strip() for p in value.split(",")]
    if any(not n for n in names):
        return None
    return [n for n in names if n in interfaces]
