"""EML503 expire-before-finish: a NodePool's expireAfter (forceful since Karpenter v1) is shorter
than the time a training job is allowed to run on it (activeDeadlineSeconds, Kueue's maximum
execution time)."""

from __future__ import annotations

from collections.abc import Iterator

from eksmllint.checks.disruption._shared import (
    format_seconds,
    hosting_pools,
    human_duration,
    is_training_pod,
    parse_go_duration,
    protection,
    run_bound,
)
from eksmllint.checks.helpers import sentences
from eksmllint.core.context import RuleContext
from eksmllint.core.finding import Finding
from eksmllint.resource import Resource
from eksmllint.workload import Workload

#: CRD default of ``spec.template.spec.expireAfter`` (v1) / ``spec.disruption.expireAfter`` (v1beta1).
DEFAULT_EXPIRE_AFTER = "720h"


def expire_after(pool: Resource) -> tuple[float | None, tuple, bool] | None:
    """(seconds or None for Never, path, defaulted) of the pool's node lifetime; None if unreadable."""
    path = (
        ("spec", "disruption", "expireAfter")
        if pool.api_version.endswith("v1beta1")
        else ("spec", "template", "spec", "expireAfter")
    )
    raw = pool.get(path)
    defaulted = raw is None
    text = DEFAULT_EXPIRE_AFTER if defaulted else raw
    if isinstance(text, str) and text.strip() == "Never":
        return None, path, defaulted
    seconds = parse_go_duration(text)
    return (seconds, path, defaulted) if seconds is not None else None


def check(ctx: RuleContext, w: Workload) -> Iterator[Finding]:
    if not w.is_training:
        return
    reported: set[tuple] = set()
    for t in w.templates:
        bound = run_bound(t)
        if bound is None or not is_training_pod(t):
            continue
        seconds, path = bound
        # do-not-disrupt holds an expired node's drain (until terminationGracePeriod) only while it
        # protects the pod: for the whole run, or the pod is exposed when the node expires late in it
        protected = protection(t, ctx.platform)
        blocks = protected is not None and protected >= seconds
        for pool in hosting_pools(ctx.run, t):
            key = (path, id(pool.resource))
            if key in reported:
                continue
            life = expire_after(pool.resource)
            if life is None:
                continue
            configured, epath, defaulted = life
            if configured is None:
                continue  # expireAfter: Never
            expire = configured
            grace = parse_go_duration(pool.resource.get(("spec", "template", "spec", "terminationGracePeriod")))
            if blocks:
                if grace is None:
                    continue
                expire += grace
            if expire >= seconds:
                continue
            reported.add(key)
            life_text = f"expireAfter {format_seconds(configured)}{', the default' if defaulted else ''}"
            if blocks and grace is not None:
                life_text += f" + terminationGracePeriod {format_seconds(grace)}"
            lifetime = human_duration(expire)
            lifetime = "" if lifetime == format_seconds(expire) and not blocks else f"{lifetime}: "
            yield ctx.report(
                w.resource,
                path,
                f"{path[-1]} {seconds} ({human_duration(seconds)}) outlasts NodePool {pool.name!r}'s node lifetime",
                detail=sentences(
                    f"the NodePool keeps a node {lifetime}{life_text}",
                    "expiry drains the node forcefully, disruption budgets do not apply, and the run is killed",
                ),
                related=(pool.resource.location(epath),),
            )
