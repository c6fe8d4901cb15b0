"""Prometheus metrics of the scoring service (no per-question or per-model labels)."""

from __future__ import annotations

from prometheus_client import Counter

from steadfast.shared.contracts.scoring import GradeRequest, GradeResponse

ANSWERS_GRADED = Counter(
    "steadfast_scoring_answers_graded_total",
    "Answers this process graded, by task, grader and label.",
    ["task", "grader", "label"],
)
METRIC_RECORDS = Counter(
    "steadfast_scoring_metric_records_total",
    "Records this process computed metrics over, by metric family.",
    ["family"],
)
REPORTS_RENDERED = Counter(
    "steadfast_scoring_reports_rendered_total",
    "Reports this process rendered, by format.",
    ["format"],
)


def count_grades(request: GradeRequest, response: GradeResponse) -> None:
    for result in response.results:
        ANSWERS_GRADED.labels(request.task, response.grader, result.label).inc()
