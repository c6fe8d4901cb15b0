"""Prometheus metrics of paraphrase generation (no per-question labels)."""

from __future__ import annotations

from prometheus_client import Counter, Histogram

from steadfast.shared.contracts.perturb import ParaphraseResponse

PARAPHRASE_SETS = Counter(
    "steadfast_paraphrase_sets_total",
    "Paraphrase sets built, by whether k paraphrases were accepted.",
    ["complete"],
)
PARAPHRASE_CANDIDATES = Counter(
    "steadfast_paraphrase_candidates_total",
    "Generated candidates, by outcome: accepted, surplus, or the stage that rejected them.",
    ["outcome"],
)
PARAPHRASE_DURATION = Histogram(
    "steadfast_paraphrase_set_duration_seconds",
    "Time to build one paraphrase set.",
    buckets=(0.1, 0.5, 1, 2.5, 5, 10, 20, 40, 75, 120, 300, 600),
)


def record(response: ParaphraseResponse) -> None:
    PARAPHRASE_SETS.labels(complete=str(response.complete).lower()).inc()
    PARAPHRASE_DURATION.observe(response.elapsed_s)
    PARAPHRASE_CANDIDATES.labels(outcome="accepted").inc(len(response.accepted))
    PARAPHRASE_CANDIDATES.labels(outcome="surplus").inc(len(response.surplus))
    for rejected in response.rejected:
        PARAPHRASE_CANDIDATES.labels(outcome=rejected.stage).inc()
