"""Prometheus metrics of the webhook, on a registry of its own (one per app: tests can run several)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

# Admission latency budgets are a few ms to a few s: buckets from 0.5 ms to the webhook timeout.
LATENCY_BUCKETS = (
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.0075,
    0.01,
    0.015,
    0.02,
    0.03,
    0.05,
    0.075,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
)


class Metrics:
    content_type = CONTENT_TYPE_LATEST

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.requests = Counter(
            "eksmllint_webhook_requests",
            "Admission requests by endpoint and result "
            "(allowed, denied, patched, exempt, skipped, error, bad_request, timeout, overloaded; "
            "with --audit: would_deny, would_patch).",
            ["endpoint", "result"],
            registry=r,
        )
        self.latency = Histogram(
            "eksmllint_webhook_request_duration_seconds",
            "Time to answer an admission request, from its body's arrival; lane: small, or large "
            "(bodies of 256 KiB or more, judged on a lane of their own).",
            ["endpoint", "lane"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.findings = Counter(
            "eksmllint_webhook_findings",
            "Findings reported in admission responses, by rule (dry-run requests excluded).",
            ["code", "slug", "severity"],
            registry=r,
        )
        self.internal_errors = Counter(
            "eksmllint_webhook_internal_errors",
            "Rules that crashed or requests that failed inside eksmllint, answered per --failure-mode.",
            ["rule"],
            registry=r,
        )
        self.cache = Counter("eksmllint_webhook_cache", "Decision cache lookups.", ["result"], registry=r)
        self.context_resources = Gauge(
            "eksmllint_webhook_context_resources", "Context objects loaded, by kind.", ["kind"], registry=r
        )
        self.context_generation = Gauge(
            "eksmllint_webhook_context_generation", "Context reloads since start.", registry=r
        )
        self.context_problems = Gauge(
            "eksmllint_webhook_context_problems",
            "Context files (or documents in them) that could not "
            "be loaded at the last reload (logged; the rest of the context is used).",
            registry=r,
        )
        self.tls_reloads = Counter(
            "eksmllint_webhook_tls_reloads", "Serving certificate reloads, by result.", ["result"], registry=r
        )
        self.in_flight = Gauge("eksmllint_webhook_in_flight_requests", "Requests being answered.", registry=r)

    def set_context(self, counts: dict[str, int], generation: int, problems: int = 0) -> None:
        self.context_problems.set(problems)
        self.context_resources.clear()
        for kind, n in counts.items():
            self.context_resources.labels(kind or "<none>").set(n)
        self.context_generation.set(generation)

    def render(self) -> bytes:
        return generate_latest(self.registry)
