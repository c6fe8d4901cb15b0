"""Prometheus metrics of verification (no per-question labels)."""

from __future__ import annotations

from prometheus_client import Counter

from steadfast.shared.contracts.verify import VerifyResponse

VERIFIED_CANDIDATES = Counter(
    "steadfast_verify_candidates_total",
    "Candidates verified, by the stage that rejected them ('accepted' when none did).",
    ["decision"],
)
STAGE_ERRORS = Counter(
    "steadfast_verify_stage_errors_total",
    "Candidates a stage could not check (e.g. a failed judge call), by stage.",
    ["stage"],
)


def record(response: VerifyResponse) -> None:
    for result in response.results:
        VERIFIED_CANDIDATES.labels(decision=result.deciding_stage or "accepted").inc()
        if result.error and result.deciding_stage:
            STAGE_ERRORS.labels(stage=result.deciding_stage).inc()
