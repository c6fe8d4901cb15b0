"""What ``steadfast evaluate`` asks the evaluator for, from its command line."""

from __future__ import annotations

from datetime import datetime

import pytest

from steadfast.cli import build_parser
from steadfast.evaluate import evaluation_request
from steadfast.evaluation_output import eta_s, gate_failures, progress_line, thresholds
from steadfast.shared.contracts.evaluator import (
    EvaluationProgress,
    EvaluationReport,
    EvaluationSettings,
    EvaluationStatus,
    EvaluationTimings,
    ModelSummary,
    StageProgress,
)
from steadfast.shared.contracts.scoring import MetricValue


def test_the_semantic_check_defaults_to_the_verify_services_choice() -> None:
    # auto: the NLI model when verify has one (STEADFAST_VERIFY_NLI_URL), else the embeddings
    args = build_parser().parse_args(["evaluate", "questions.jsonl", "--model", "local"])
    assert evaluation_request(args, "ds-1").verify.stages.semantic == "auto"


@pytest.mark.parametrize("check", ["embedding", "nli", "off"])
def test_a_semantic_check_named_on_the_command_line_is_asked_for(check: str) -> None:
    args = build_parser().parse_args(
        ["evaluate", "q.jsonl", "--model", "local", "--semantic", check]
    )
    assert evaluation_request(args, "ds-1").verify.stages.semantic == check


def _report(**metrics: float | None) -> EvaluationReport:
    summary = ModelSummary(
        model="gpt",
        metrics={name: MetricValue(value=value, n=10) for name, value in metrics.items()},
    )
    return EvaluationReport(
        id="ev-1",
        name=None,
        status="succeeded",
        task="factual",
        k=3,
        settings=EvaluationSettings(model="gpt"),
        models=[summary],
        items=[],
        errors=[],
        timings=EvaluationTimings(created_at="2026-12-04T10:00:00+00:00"),
    )


def test_a_ci_job_gates_on_metrics_below_or_above_its_thresholds() -> None:
    report = _report(A_strict=0.75, flip_rate=0.2, A_orig=None)
    assert gate_failures(report, {"A_strict": 0.7}, {"flip_rate": 0.25}) == []
    assert gate_failures(report, {"A_strict": 0.8}, {"flip_rate": 0.1}) == [
        "gpt: A_strict 0.750 is below 0.8",
        "gpt: flip_rate 0.200 is above 0.1",
    ]
    assert gate_failures(report, {"A_orig": 0.5}, {}) == ["gpt: A_orig was not measured"]


def test_thresholds_read_any_case_and_refuse_a_mistake_before_anything_runs() -> None:
    args = build_parser().parse_args(
        ["evaluate", "q.jsonl", "--model", "m", "--fail-under", "a_strict=0.8",
         "--fail-over", "FLIP_RATE=0.1", "--seed", "7"]
    )  # fmt: skip
    assert thresholds(args.fail_under, "--fail-under") == {"A_strict": 0.8}
    assert thresholds(args.fail_over, "--fail-over") == {"flip_rate": 0.1}
    assert evaluation_request(args, "ds-1").seed == 7
    with pytest.raises(SystemExit, match="metric one of A_orig"):
        thresholds(["accuracy=0.8"], "--fail-under")
    with pytest.raises(SystemExit, match="expected METRIC=NUMBER"):
        thresholds(["A_strict=high"], "--fail-under")


def _status(fraction: float, started: str | None, state: str = "running") -> EvaluationStatus:
    stage = StageProgress(done=1, total=2)
    return EvaluationStatus(
        id="ev-1",
        status=state,  # type: ignore[arg-type]
        task="factual",
        models=["m"],
        k=1,
        item_count=1,
        progress=EvaluationProgress(paraphrase=stage, answer=stage, grade=stage, fraction=fraction),
        timings=EvaluationTimings(created_at="2026-12-04T10:00:00+00:00", started_at=started),
    )


def test_the_progress_line_says_how_long_is_left_at_the_pace_so_far() -> None:
    started = "2026-12-04T10:00:00+00:00"
    now = datetime.fromisoformat(started).timestamp() + 60  # a quarter done in a minute
    assert eta_s(_status(0.25, started), now) == pytest.approx(180)
    assert progress_line(_status(0.25, started), now).endswith("ETA 3m00s")
    assert eta_s(_status(0.0, started), now) is None  # no pace yet
    assert eta_s(_status(1.0, started, "succeeded"), now) is None
    assert "ETA" not in progress_line(_status(0.5, None), now)
