"""The CLI's progress line and summary table."""

from __future__ import annotations

import io

from steadfast.evaluation_output import print_outcome, progress_line, summary_table
from steadfast.services.evaluator.domain.report import report_trust
from steadfast.shared.contracts.calibration import JudgeThreshold
from steadfast.shared.contracts.evaluator import (
    AnswerGroupingSummary,
    AuditSummary,
    EvaluationProgress,
    EvaluationReport,
    EvaluationSettings,
    EvaluationStatus,
    EvaluationTimings,
    ItemError,
    ItemResult,
    ModelSummary,
    StageProgress,
    VerificationSummary,
)
from steadfast.shared.contracts.gateway import ModelCalls
from steadfast.shared.contracts.scoring import MetricValue
from steadfast.shared.trust_text import trust_lines
from tests.unit.calibration_sample import calibrated_threshold

TIMINGS = EvaluationTimings(created_at="2026-11-30T00:00:00+00:00")


def report() -> EvaluationReport:
    metrics = {
        "A_orig": MetricValue(value=0.5, n=20),
        "A_any": MetricValue(value=0.75, n=20),
        "A_strict": MetricValue(value=0.25, n=20),
        "flip_rate": MetricValue(value=None, n=0),
    }
    return EvaluationReport(
        id="ev-1",
        name=None,
        status="succeeded",
        task="factual",
        k=5,
        settings=EvaluationSettings(model="local"),
        models=[
            ModelSummary(
                model="local",
                metrics=metrics,
                answered=119,
                unparsed=4,
                failed=1,
                mean_agreement=0.9,
            )
        ],
        items=[],
        errors=[
            ItemError(
                item_id="q3", stage="answer", reason="gateway: timeout", model="local", variant=2
            )
        ],
        timings=TIMINGS,
        message="finished with 1 recorded failures",
    )


def test_summary_table_shows_values_counts_and_gaps() -> None:
    table = summary_table(report())
    header, rule, row = table.splitlines()
    assert header.split()[:6] == [
        "model",
        "A_orig",
        "A_expected",
        "A_majority",
        "A_any",
        "A_strict",
    ]
    assert set(rule) <= {"-", " "}
    assert "50.0% (n=20)" in row and "75.0% (n=20)" in row and "25.0% (n=20)" in row
    assert "- (n=0)" in row and row.split()[-4:] == ["90.0%", "119", "4", "1"]

    out = io.StringIO()
    print_outcome(report(), out)
    text = out.getvalue()
    assert "a gap of 50.0 points" in text
    assert "failed: q3 local variant 2 (answer): gateway: timeout" in text


def test_the_outcome_says_how_far_to_trust_the_numbers() -> None:
    threshold = JudgeThreshold(
        value=0.6, source="calibrated", origin="bundled with the local model"
    )
    audited = report()
    audited.verification = VerificationSummary(
        stages=["form", "lexical", "numbers", "semantic", "judge"],
        semantic_check="embedding",
        judge_model="local",
        judge_prompt_version="judge-v3",
        judge_thresholds=[threshold],
    )
    audited.audit = AuditSummary(
        mode="disagreements", checked=4, removed=1, model_calls=ModelCalls(calls=12, cached_calls=2)
    )
    audited.answer_grouping = AnswerGroupingSummary(clustering="semantic", merged=3, judge_calls=5)
    verification, audit, grouping = trust_lines(audited)
    assert verification == (
        "paraphrases verified with: form, lexical, numbers, semantic (embedding), judge; judge "
        "local (judge-v3) at 0.60 (calibrated: bundled with the local model)"
    )
    assert audit == (
        "audit (disagreements): 4 paraphrase(s) checked again, 1 removed from their sets, 0 "
        "could not be checked; 12 judge call(s), 2 from the cache"
    )
    assert grouping.startswith("answers grouped by meaning (semantic): 3 answer(s)")

    audited.audit = AuditSummary(mode="off")
    audited.verification.stages = ["lexical", "semantic"]
    verification, audit, _ = trust_lines(audited)
    assert verification == "paraphrases verified with: lexical, semantic (embedding)"
    assert audit.startswith("audit: off")
    # a report from before verification summaries: the semantic check alone, as before
    assert trust_lines(report()) == []


def test_progress_line() -> None:
    status = EvaluationStatus(
        id="ev-1",
        status="running",
        task="factual",
        models=["local"],
        k=3,
        item_count=8,
        progress=EvaluationProgress(
            paraphrase=StageProgress(done=4, total=8),
            answer=StageProgress(done=10, failed=2, total=32),
            grade=StageProgress(done=10, total=10),
        ),
        timings=TIMINGS,
    )
    line = progress_line(status)
    assert "paraphrase [#####.....] 4/8" in line
    assert "answer [######..........] 12/32 (2 failed)" in line
    assert "grade [##########] 10/10" in line


def test_items_in_a_language_the_judge_was_not_calibrated_in_are_named() -> None:
    italian = report()
    italian.verification = VerificationSummary(
        stages=["form", "lexical", "numbers", "semantic", "judge"],
        judge_model="local",
        judge_thresholds=[calibrated_threshold(["en"])],
    )
    italian.items = [
        ItemResult(
            id=f"q{number}",
            question=question,
            status="complete",
            language="it",
            variants=[],
            models=[],
        )
        for number, question in enumerate(
            ["Quando è iniziata la crisi petrolifera del 1973?", "Who wrote Hamlet?"]
        )
    ]
    lines = trust_lines(italian)
    assert lines[-1].startswith(
        "the judge's threshold was calibrated on questions in en; 1 of 2 items are in it,"
    )
    trust = report_trust(italian)  # the rendered report says it too
    assert trust is not None and trust.caveats == [lines[-1]]
    italian.items = italian.items[1:]
    assert not any("calibrated on questions" in line for line in trust_lines(italian))
