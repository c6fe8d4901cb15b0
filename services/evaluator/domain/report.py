"""An evaluation's report: the JSON report of a job, and the document the scoring service
renders from it (HTML page, CSV), with its settings, notes and the evidence of trust."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from datetime import UTC, datetime

import msgspec

from steadfast.services.evaluator.adapters.evaluations.rows import EvaluationRow
from steadfast.services.evaluator.domain.job_results import StoredResults, refreshed_summaries
from steadfast.services.evaluator.domain.prompts import PROMPT_VERSION as ANSWER_PROMPT_VERSION
from steadfast.services.evaluator.timestamps import iso
from steadfast.shared.contracts.evaluator import (
    EvaluationReport,
    EvaluationTimings,
    ItemError,
    ItemResult,
)
from steadfast.shared.contracts.scoring import (
    AuditedVariant,
    ConsistencyResponse,
    Report,
    ReportAnswer,
    ReportFailure,
    ReportItem,
    ReportTrust,
    ReportVariant,
)
from steadfast.shared.trust_text import calibration_caveat


def evaluation_report(
    evaluation: EvaluationRow, items: list[ItemResult], errors: list[ItemError]
) -> EvaluationReport:
    """The job's report: its settings, every item's results, the summaries per model (made
    anew from the items, which the audit and answer grouping may have changed), failures."""
    stored = stored_results(evaluation)
    models = refreshed_summaries(stored.models, evaluation.models, items) if stored else []
    return EvaluationReport(
        id=evaluation.id,
        name=evaluation.name,
        status=evaluation.status,  # type: ignore[arg-type]
        task=evaluation.task,  # type: ignore[arg-type]
        k=evaluation.k,
        settings=evaluation.settings,
        models=models,
        items=items,
        errors=errors,
        timings=timings(evaluation),
        semantic_check=stored.semantic_check if stored else None,
        verification=stored.verification if stored else None,
        audit=stored.audit if stored else None,
        answer_grouping=stored.answer_grouping if stored else None,
        message=evaluation.message,
    )


def rendered_document(evaluation: EvaluationRow, report: EvaluationReport) -> Report:
    """The document the scoring service renders as HTML or CSV."""
    stored = stored_results(evaluation)
    consistency = None
    if stored and stored.consistency:
        try:
            consistency = msgspec.convert(stored.consistency, ConsistencyResponse)
        except msgspec.ValidationError:  # written by an older scoring service
            consistency = None
    return Report(
        title=f"Steadfast evaluation {evaluation.name or evaluation.id}",
        generated_at=datetime.now(UTC).isoformat(),
        # a sample of several tasks has none of its own: the settings list them
        task=report.task if len(tasks := tasks_of(report.items, report.task)) <= 1 else None,
        dataset=evaluation.dataset_id,
        settings={
            **report_settings(evaluation),
            "language": languages_of(report.items),
            "tasks": described_counts(tasks),
        },
        consistency=consistency,
        items=[report_item(item) for item in report.items],
        failures=[
            ReportFailure(
                item_id=e.item_id,
                stage=e.stage,
                reason=e.reason,
                model=e.model,
                variant=e.variant,
            )
            for e in report.errors
        ],
        notes=report_notes(evaluation, report),
        trust=report_trust(report),
    )


def stored_results(evaluation: EvaluationRow) -> StoredResults | None:
    if not evaluation.results:
        return None
    return msgspec.convert(evaluation.results, StoredResults)


def timings(evaluation: EvaluationRow) -> EvaluationTimings:
    end = evaluation.finished_at
    elapsed = end - evaluation.started_at if end and evaluation.started_at else None
    return EvaluationTimings(
        created_at=iso(evaluation.created_at) or "",
        started_at=iso(evaluation.started_at),
        finished_at=iso(evaluation.finished_at),
        elapsed_s=round(elapsed, 3) if elapsed is not None else None,
    )


def languages_of(items: list[ItemResult]) -> str:
    """The languages the models were asked in, with their items: ``"it (8 items)"``."""
    return described_counts(Counter(item.language for item in items))


def tasks_of(items: list[ItemResult], default: str) -> Counter[str]:
    """How many items were answered as each task (``default`` for those without their own):
    ``{"factual": 6, "math": 2}``."""
    return Counter(item.task or default for item in items)


def described_counts(counts: Mapping[str, int]) -> str:
    """``"factual (6 items), math (2 items)"``."""
    return ", ".join(f"{name} ({n} item{'s' * (n != 1)})" for name, n in counts.items())


def report_settings(evaluation: EvaluationRow) -> dict[str, str | int | float | bool | None]:
    settings = evaluation.settings
    return {
        "models": ", ".join(evaluation.models),
        "k": settings.k,
        "generator": settings.generator,
        "seed": settings.seed,
        "grader": settings.grader,
        "instruction_role": settings.instruction_role,
        "answer_prompt": ANSWER_PROMPT_VERSION,
        "system_prompt": settings.system_prompt,
        "drop_majority_ties": settings.metrics.drop_majority_ties,
        "strict_threshold": settings.metrics.strict_threshold,
        "bootstrap": settings.metrics.bootstrap,
        "semantic_check": settings.verify.stages.semantic,
        "items": evaluation.item_count,
    }


def report_item(item: ItemResult) -> ReportItem:
    return ReportItem(
        item_id=item.id,
        question=item.question,
        gold=item.gold,
        variants=[
            ReportVariant(
                index=v.index,
                text=v.text,
                kind=v.kind,
                tone=v.tone,
                audited_out=v.audited_out,
                provenance=v.provenance,
            )
            for v in item.variants
        ],
        answers=[
            ReportAnswer(
                model=a.model,
                variant=v.index,
                text=a.text,
                label=a.label,
                value=a.value,
                error=a.error,
            )
            for v in item.variants
            for a in v.answers
        ],
    )


def report_trust(report: EvaluationReport) -> ReportTrust | None:
    """How the paraphrases were verified and what the audit removed, for the rendered report."""
    verification, audit = report.verification, report.audit
    if verification is None and audit is None:
        return None
    trust = ReportTrust(
        audited_out=[
            AuditedVariant(item_id=item.id, variant=v.index, text=v.text, reason=v.audited_out)
            for item in report.items
            for v in item.variants
            if v.audited_out
        ]
    )
    if verification is not None:
        trust.stages = verification.stages
        trust.semantic_check = verification.semantic_check
        trust.judge_model = verification.judge_model
        trust.judge_prompt_version = verification.judge_prompt_version
        trust.judge_thresholds = verification.judge_thresholds
        trust.given_sets = verification.given_sets
        trust.unverified_sets = verification.unverified_sets
        caveat = calibration_caveat(report)
        trust.caveats = [caveat] if caveat else []
    if audit is not None:
        trust.audit_mode = audit.mode
        trust.audit_judge_model = audit.audit_judge_model or audit.judge_model
        trust.audit_threshold = audit.audit_threshold
        trust.audit_checked, trust.audit_removed = audit.checked, audit.removed
        trust.audit_unchecked = audit.unchecked
        trust.audit_calls, trust.audit_cached_calls = (
            audit.model_calls.calls,
            audit.model_calls.cached_calls,
        )
    return trust


def report_notes(evaluation: EvaluationRow, report: EvaluationReport) -> list[str]:
    notes = [f"status: {evaluation.status}"]
    if evaluation.message:
        notes.append(evaluation.message)
    if report.semantic_check:
        notes.append(f"semantic check of paraphrases: {report.semantic_check}")
    grouping = report.answer_grouping
    if grouping is not None and grouping.clustering == "semantic":
        notes.append(
            f"factual answers grouped by meaning before agreement was counted: {grouping.merged} "
            f"answers counted with another's value, {grouping.judge_calls} calls to the answer "
            f"judge {grouping.judge_model} (threshold {grouping.threshold})"
        )
    return notes
