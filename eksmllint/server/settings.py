"""How the webhook answers: the deny threshold, failure mode, time budget, body cap, cache and
concurrency limits, the ratchet and audit modes (``eksmllint serve`` options build one)."""

from __future__ import annotations

from dataclasses import dataclass

from eksmllint.core.finding import Severity

#: The API server refuses request bodies over 3 MiB, so one object is at most that; an UPDATE
#: review carries object and oldObject, plus the envelope.
DEFAULT_MAX_BODY = 7 * 1024 * 1024
DEFAULT_TIME_BUDGET = 3.0  # seconds; the manifests' webhook timeoutSeconds is 5
#: Real training objects are a few KiB; 256 KiB is far above them and far below 1.5 MiB (etcd).
DEFAULT_LARGE_BODY = 256 * 1024
#: In-cluster, a 7 MiB body arrives in milliseconds; 2 s leaves room for a congested node while
#: keeping a stalled body's hold on memory short.
DEFAULT_BODY_TIMEOUT = 2.0


@dataclass(frozen=True)
class ServerSettings:
    deny_on: Severity = Severity.ERROR
    failure_mode: str = "open"  # open: admit on a rule crash (with a warning); closed: deny
    #: An object whose judgement did not finish (time budget, full queue): deny (an admission
    #: controller must not admit what it did not judge) or admit with a warning saying so.
    on_timeout: str = "deny"
    time_budget: float = DEFAULT_TIME_BUDGET
    #: Bodies of at least this many bytes are decoded off the event loop and judged on a lane of
    #: their own (one thread, at most max_large_in_flight queued), so they cannot starve the rest.
    large_body: int = DEFAULT_LARGE_BODY
    max_large_in_flight: int = 8
    max_body: int = DEFAULT_MAX_BODY
    cache_size: int = 1024
    lint_threads: int = 2
    ratchet: bool = True  # UPDATE: findings the stored object already had warn instead of deny
    judge_owned: bool = False  # also judge objects a controller made from a judged owner
    #: Usernames whose objects with a judged controller owner pass unjudged (None: the default
    #: installs' controllers in server/owners.yaml).
    owner_controllers: frozenset[str] | None = None
    #: Admission requests answered at once, counted from the moment their body has arrived (a
    #: stalled body must not hold a slot); more are refused with 503 + Retry-After, which the API
    #: server treats per failurePolicy.
    max_in_flight: int = 64
    #: Seconds a request body may take to arrive once the headers are in (the API server sends
    #: the whole review at once); then 408.
    body_timeout: float = DEFAULT_BODY_TIMEOUT
    #: Bodies being received at once (each may grow to max_body bytes); a new one over the cap
    #: evicts the one that has been arriving the longest (408), so stalled bodies cannot starve
    #: prompt ones.
    max_body_readers: int = 64
    #: Audit (warn-only): never deny and never patch; what would have been refused is returned as
    #: warnings and counted (result "would_deny"), to roll the webhook out before enforcing it.
    audit: bool = False
    #: Honour the eksmllint.io/exempt annotation (an operator may take that escape hatch away).
    exempt_annotation: bool = True

    @property
    def fail_closed(self) -> bool:
        """Deny on an internal error (failure-mode closed, not in audit mode)."""
        return self.failure_mode == "closed" and not self.audit
