"""Prometheus metrics of the reliability proxy (no per-question or per-caller labels)."""

from __future__ import annotations

from prometheus_client import Counter, Histogram

PROXY_REQUESTS = Counter(
    "steadfast_proxy_requests_total",
    "Self-paraphrase and proxied chat requests, by strategy and outcome "
    "(ok, degraded: answered with failed variants or fewer paraphrases, refused: a passed "
    "through answer the model's filter blocked, failed: by the model or a service behind it, "
    "rejected: the request's fault, with a 4xx; strategy unknown: its body could not be read).",
    ["strategy", "outcome"],
)
#: the strategy of a request whose body could not be read (undecodable, invalid, too large)
UNKNOWN_STRATEGY = "unknown"
PROXY_AGREEMENT = Histogram(
    "steadfast_proxy_agreement_ratio",
    "Share of the voting variants that gave the majority answer.",
    buckets=[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.99, 1.0],
)
PROXY_UPSTREAM_CALLS = Histogram(
    "steadfast_proxy_upstream_calls_per_request",
    "Model calls one proxied request sent upstream, the perturb and verify services' for it "
    "included (response-cache hits excluded).",
    buckets=[1, 2, 3, 4, 5, 6, 8, 11, 16, 21, 32, 64],
)


SHADOW_CHECKS = Counter(
    "steadfast_shadow_checks_total",
    "Shadow checks of live plain completions, by route and outcome (agree: every paraphrase "
    "answered as the caller was; disagree; no_paraphrase: none kept the question's numbers; "
    "dropped: the queue was full; failed: a model call or the comparison failed).",
    ["route", "outcome"],
)
SHADOW_AGREEMENT = Histogram(
    "steadfast_shadow_agreement_ratio",
    "Share of a shadow check's answered paraphrases whose answer is grouped with the caller's.",
    ["route"],
    buckets=[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.99, 1.0],
)


def record(strategy: str, outcome: str, calls: int, agreement: float | None = None) -> None:
    """A request that reached a strategy (or passed through); see :func:`record_rejected`."""
    PROXY_REQUESTS.labels(strategy=strategy, outcome=outcome).inc()
    PROXY_UPSTREAM_CALLS.observe(calls)
    if agreement is not None:
        PROXY_AGREEMENT.observe(agreement)


def record_rejected(strategy: str) -> None:
    """A request refused as the caller's error: counted, but not among the calls per request."""
    PROXY_REQUESTS.labels(strategy=strategy, outcome="rejected").inc()
