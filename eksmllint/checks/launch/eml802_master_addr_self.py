"""EML802 master-addr-self: in a multi-pod workload MASTER_ADDR (or --master_addr) is the pod's own
status.podIP, so every pod waits for itself as rendezvous master."""

from __future__ import annotations

import re
from collections.abc import Iterator

from eksmllint.analysis.launch_sites import container_sites
from eksmllint.checks.launch._shared import field_path
from eksmllint.core.context import RuleContext
from eksmllint.core.finding import Finding
from eksmllint.workload import Container, PodTemplate

MASTER_ENV = ("MASTER_ADDR", "PET_MASTER_ADDR")
_SELF_FIELDS = ("status.podIP", "status.podIPs")
_MASTER_ROLES = ("master", "leader", "chief", "head", "launcher", "driver", "rank0", "coordinator")


def _self_ip_vars(c: Container) -> dict[str, int]:
    """Env names whose value is the pod's own IP -> env index."""
    return {str(e.get("name")): i for i, e in enumerate(c.env_list) if field_path(e) in _SELF_FIELDS}


def _is_rank0_template(t: PodTemplate) -> bool:
    """A template whose single pod is the rendezvous host: its own IP is the right address."""
    if t.workload.kind == "LeaderWorkerSet" and t.role == "leader":
        return True  # one leader per group; workers use LWS_LEADER_ADDRESS
    role = t.role.split(":", 1)[-1].lower()
    return t.replicas == 1 and any(k in role for k in _MASTER_ROLES)


def check(ctx: RuleContext, t: PodTemplate) -> Iterator[Finding]:
    w = t.workload
    if w.operator_managed or not w.is_multi_pod or t not in w.collective_templates:
        return
    if _is_rank0_template(t):
        return
    pods = t.replicas if t.replicas is not None else "several"
    for c in t.containers:
        self_vars = _self_ip_vars(c)
        if not self_vars:
            continue
        reported = False
        for name in MASTER_ENV:
            if name in self_vars:
                i = self_vars[name]
                yield ctx.report(
                    t.resource,
                    c.path + ("env", i, "valueFrom", "fieldRef", "fieldPath"),
                    f"{name} of container {c.name!r} is the pod's own status.podIP in a {w.collective_size}-pod "
                    "collective",
                    detail=f"The {t.role!r} template runs {pods} pods of it: each pod waits for itself as "
                    "rendezvous master; point it at the rank-0 pod's DNS name (e.g. <job>-0.<subdomain> of an "
                    "Indexed Job with a headless Service).",
                )
                reported = True
                break
        if reported:
            continue
        for site in container_sites(c):
            for key in ("master_addr", "rdzv_endpoint", "main_process_ip"):
                opt = site.inv.option(key)
                if opt is None or opt.value is None:
                    continue
                hit = next(
                    (
                        v
                        for v in self_vars
                        if f"$({v})" in opt.value or re.search(rf"\$\{{?{re.escape(v)}\b", opt.value)
                    ),
                    None,
                )
                if hit is None:
                    continue
                pos = opt.value_position or opt.position
                yield site.report(
                    ctx,
                    pos,
                    opt.raw,
                    f"{site.inv.launcher} --{key}={opt.value} in container {c.name!r} is the pod's own IP "
                    f"in a {w.collective_size}-pod collective",
                    detail=f"{hit} comes from status.podIP, and the {t.role!r} template runs {pods} pods: each pod "
                    "waits for itself as rendezvous master.",
                )
                reported = True
                break
            if reported:
                break
