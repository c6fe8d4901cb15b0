"""Turn stored answers into per-item results and per-model summaries."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import msgspec

from steadfast.services.evaluator.domain.prompts import DEFAULT_LANGUAGE
from steadfast.services.evaluator.records import AnswerRecord, ParaphraseSet
from steadfast.shared.contracts.evaluator import (
    EvaluationItem,
    ItemError,
    ItemModelResult,
    ItemResult,
    ItemStatus,
    ModelSummary,
    ParaphraseProvenance,
    Variant,
    VariantAnswer,
)
from steadfast.shared.contracts.scoring import METRIC_NAMES, MetricValue
from steadfast.shared.voting import tally

TERMINAL_ANSWER = frozenset({"graded", "failed"})
#: parts of scoring's consistency response that are keyed by model
PER_MODEL_SECTIONS = ("counts", "slot_accuracy", "value_level", "flips_by_kind", "flips_by_tone")


@dataclass
class Majority:
    """A model's majority answer over an item's variants: its value, one answer's text with
    that value, and the share of readable answers that agree with it."""

    value: str | None
    text: str | None
    agreement: float | None


def majority_of(answers: list[AnswerRecord]) -> Majority:
    """The majority answer value over every variant answered with a readable value, the
    original included, as docs/method.md §1.5's vote counts them (ties by §1.4's rule: the
    original's value, else the value seen first), and its share of them. The metrics' majority
    (§1.4) is over the paraphrases alone and may differ. As docs/method.md §1.4 leaves invalid
    answers out of k, an answer no value could be read from counts neither for nor against
    (``unparsed`` counts it); fewer than two readable answers give no agreement (one answer
    agrees with itself), as in the proxy's vote."""
    readable = sorted(
        (a for a in answers if a.text is not None and a.value is not None),
        key=lambda a: a.variant,
    )
    original = next((a.value for a in readable if a.variant == 0), None)
    vote = tally([original, *(a.value for a in readable if a.variant != 0)])
    if vote.winner is None:
        return Majority(None, None, None)
    text = next(a.text for a in readable if a.value == vote.winner)
    return Majority(vote.winner, text, vote.agreement)


def _variants(
    item: EvaluationItem, paraphrase_set: ParaphraseSet | None, audited_out: dict[int, str]
) -> list[Variant]:
    variants = [Variant(index=0, text=item.question, kind="original")]
    for index, paraphrase in enumerate(paraphrase_set.paraphrases if paraphrase_set else []):
        variants.append(
            Variant(
                index=index + 1,
                text=paraphrase.text,
                kind=paraphrase.kind,
                tone=paraphrase.tone,
                hint=paraphrase.hint,
                scores=paraphrase.scores,
                provenance=paraphrase.provenance,
                audited_out=audited_out.get(index + 1),
            )
        )
    return variants


def _model_result(
    model: str,
    answers: list[AnswerRecord],
    metrics: dict[str, Any] | None,
    audited_out: dict[int, str],
) -> ItemModelResult:
    majority = majority_of([a for a in answers if a.variant not in audited_out])
    original = next((a for a in answers if a.variant == 0), None)
    return ItemModelResult(
        model=model,
        original_answer=original.text if original else None,
        original_label=original.label if original else None,  # type: ignore[arg-type]
        majority_answer=majority.text,
        agreement=majority.agreement,
        answered=sum(1 for a in answers if a.text is not None),
        unparsed=sum(1 for a in answers if a.text is not None and a.value is None),
        failed=sum(1 for a in answers if a.status == "failed"),
        metrics=metrics,
    )


def _answer_errors(item_key: str, answers: list[AnswerRecord]) -> list[ItemError]:
    return [
        ItemError(
            item_id=item_key,
            stage="grade" if a.error_stage == "grade" else "answer",
            reason=a.error or "failed",
            model=a.model,
            variant=a.variant,
        )
        for a in answers
        if a.status == "failed"
    ]


def gold_texts(item: EvaluationItem) -> list[str]:
    gold = list(item.answers or [])
    if item.answer and item.answer not in gold:
        gold.append(item.answer)
    if item.correct_option:
        gold.append(item.correct_option)
    return gold


def provenance_of(paraphrase_set: ParaphraseSet) -> ParaphraseProvenance:
    return ParaphraseProvenance(
        set_id=paraphrase_set.id,
        generator=paraphrase_set.generator,
        prompt_version=paraphrase_set.prompt_version,
        seed=paraphrase_set.seed,
        semantic_check=paraphrase_set.semantic_check,
        complete=paraphrase_set.complete,
        incomplete_reason=paraphrase_set.incomplete_reason,
        candidates_generated=paraphrase_set.candidates_generated,
        rejected=len(paraphrase_set.rejected),
        source=paraphrase_set.source,
        verified=paraphrase_set.verified,
    )


def assemble_item(
    *,
    item_key: str,
    item: EvaluationItem,
    models: list[str],
    paraphrase_set: ParaphraseSet | None,
    answers: list[AnswerRecord],
    item_metrics: dict[str, dict[str, Any]] | None = None,
    paraphrase_error: str | None = None,
    asked_in: str = DEFAULT_LANGUAGE,
    paraphrase_pending: bool = False,
    audited_out: dict[int, str] | None = None,
) -> ItemResult:
    """One item's result; a paraphrase the audit removed is listed with its answers and its
    reason, and counts in no agreement."""
    audited_out = audited_out or {}
    variants = _variants(item, paraphrase_set, audited_out)
    by_variant = {variant.index: variant for variant in variants}
    by_model: dict[str, list[AnswerRecord]] = defaultdict(list)
    for answer in sorted(answers, key=lambda a: (a.variant, models.index(a.model))):
        by_model[answer.model].append(answer)
        variant = by_variant.get(answer.variant)
        if variant is not None:
            variant.answers.append(
                VariantAnswer(
                    model=answer.model,
                    text=answer.text,
                    label=answer.label,  # type: ignore[arg-type]
                    value=answer.value,
                    error=answer.error if answer.status == "failed" else None,
                )
            )
    errors = _answer_errors(item_key, answers)
    if paraphrase_error:
        errors.insert(0, ItemError(item_id=item_key, stage="paraphrase", reason=paraphrase_error))
    pending = paraphrase_pending or any(a.status not in TERMINAL_ANSWER for a in answers)
    answered = any(a.text is not None for a in answers)
    status: ItemStatus = (
        "pending" if pending else "failed" if not answered else "partial" if errors else "complete"
    )
    return ItemResult(
        id=item_key,
        question=item.question,
        status=status,
        language=asked_in,
        task=item.task,
        gold=gold_texts(item),
        variants=variants,
        models=[
            _model_result(model, by_model[model], (item_metrics or {}).get(model), audited_out)
            for model in models
        ],
        paraphrases=provenance_of(paraphrase_set) if paraphrase_set else None,
        errors=errors,
    )


def _metric_value(raw: Any) -> MetricValue | None:
    if isinstance(raw, dict) and "value" in raw and "n" in raw:
        try:
            return msgspec.convert(raw, MetricValue)
        except msgspec.ValidationError:
            return None
    return None


@dataclass(frozen=True)
class AnswerCounts:
    """How a model's answers to an evaluation's variants ended: answered, unreadable, failed."""

    answered: int = 0
    unparsed: int = 0
    failed: int = 0


def model_summaries(
    models: list[str],
    metrics_response: dict[str, Any] | None,
    counts: dict[str, AnswerCounts],
    agreements: dict[str, list[float]],
) -> list[ModelSummary]:
    """Per model: the docs/method.md §1.4 metrics from scoring, answer counts, mean agreement
    (``agreements[model]``: the per-item agreements)."""
    per_model: dict[str, Any] = (metrics_response or {}).get("models") or {}
    summaries = []
    for model in models:
        raw = per_model.get(model) or {}
        metrics: dict[str, MetricValue] = {}
        extra: dict[str, Any] = {}
        for name, value in raw.items():
            metric = _metric_value(value) if name in METRIC_NAMES else None
            if metric is not None:
                metrics[name] = metric
            else:
                extra[name] = value
        for section in PER_MODEL_SECTIONS:
            part = (metrics_response or {}).get(section)
            if isinstance(part, dict) and part.get(model) is not None:
                extra[section] = part[model]
        values = agreements.get(model) or []
        count = counts.get(model, AnswerCounts())
        summaries.append(
            ModelSummary(
                model=model,
                metrics=metrics,
                extra=extra,
                answered=count.answered,
                unparsed=count.unparsed,
                failed=count.failed,
                mean_agreement=sum(values) / len(values) if values else None,
            )
        )
    return summaries


def per_item_metrics(metrics_response: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    """``{item_id: {model: {metric: value}}}`` from scoring's per-question output."""
    result: dict[str, dict[str, Any]] = defaultdict(dict)
    rows = (metrics_response or {}).get("items") or (metrics_response or {}).get("per_item") or []
    for row in rows if isinstance(rows, list) else []:
        if not isinstance(row, dict) or "item_id" not in row or "model" not in row:
            continue
        values = {key: value for key, value in row.items() if key not in ("item_id", "model")}
        result[str(row["item_id"])][str(row["model"])] = values
    return dict(result)
