"""Prometheus metrics of model calls (no per-question or per-caller labels)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

MODEL_REQUESTS = Counter(
    "steadfast_model_requests_total",
    "Generate requests that reached a backend, by final outcome (ok or a typed failure).",
    ["route", "backend", "outcome"],
)
MODEL_REQUEST_DURATION = Histogram(
    "steadfast_model_request_duration_seconds",
    "Duration of one upstream attempt.",
    ["route", "backend"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300),
)
GATEWAY_OVERHEAD = Histogram(
    "steadfast_gateway_overhead_seconds",
    "Time a generate request spent in the gateway itself: total minus upstream attempts, "
    "waits for a slot and backoff sleeps.",
    buckets=(0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5),
)
MODEL_RETRIES = Counter(
    "steadfast_model_retries_total",
    "Retries of an upstream call, by the outcome of the attempt that failed.",
    ["route", "reason"],
)
CACHE_REQUESTS = Counter(
    "steadfast_model_cache_requests_total",
    "Response cache lookups (hit or miss).",
    ["result"],
)
CACHE_PURGED = Counter(
    "steadfast_model_cache_purged_total",
    "Cached answers the age sweep deleted (kind: response).",
    ["kind"],
)
SHADOW_PURGED = Counter(
    "steadfast_shadow_disagreements_purged_total",
    "Stored shadow disagreements the age sweep deleted (kind: shadow_disagreement).",
    ["kind"],
)
MODEL_TOKENS = Counter(
    "steadfast_model_tokens_total",
    "Tokens reported by the backends (cache hits excluded).",
    ["route", "direction"],
)
MODEL_INFLIGHT = Gauge(
    "steadfast_model_inflight_requests",
    "Upstream calls in progress.",
    ["route"],
)


class RouteMetrics:
    """A route's metric children, bound once (``labels()`` costs a lock and a lookup)."""

    def __init__(self, route: str, backend: str) -> None:
        self.inflight = MODEL_INFLIGHT.labels(route)
        self.duration = MODEL_REQUEST_DURATION.labels(route, backend)
        self.ok = MODEL_REQUESTS.labels(route, backend, "ok")
        self.input_tokens = MODEL_TOKENS.labels(route, "input")
        self.output_tokens = MODEL_TOKENS.labels(route, "output")
