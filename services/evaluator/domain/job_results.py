"""The results of an evaluation: metric records for scoring, per-item results, summaries."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from steadfast.services.evaluator.domain.audit import AuditedItem, AuditOutcome
from steadfast.services.evaluator.domain.clustering import (
    Clustered,
    ClusteredItem,
    ClusterMap,
    with_clusters,
)
from steadfast.services.evaluator.domain.item_results import (
    AnswerCounts,
    assemble_item,
    model_summaries,
    per_item_metrics,
)
from steadfast.services.evaluator.records import AnswerRecord, ParaphraseSet
from steadfast.shared.contracts.evaluator import (
    AnswerGroupingSummary,
    AuditSummary,
    EvaluationSettings,
    ItemResult,
    ModelSummary,
    VerificationSummary,
)
from steadfast.shared.contracts.scoring import ConsistencyRecord

if TYPE_CHECKING:
    from steadfast.services.evaluator.adapters.evaluations.rows import ItemRow


#: item key → paraphrase variant → why the audit removed it
AuditedOut = dict[str, dict[int, str]]


class StoredResults(msgspec.Struct, kw_only=True):
    """What a finished job keeps beside its answers (the ``results`` column)."""

    models: list[ModelSummary]
    item_metrics: dict[str, dict[str, dict[str, Any]]]
    semantic_check: str | None = None
    #: the scoring service's whole consistency response, for the report
    consistency: dict[str, Any] | None = None
    verification: VerificationSummary | None = None
    audit: AuditSummary | None = None
    #: item key → paraphrase variant (as text: a JSON object's key) → why the audit removed it
    audited_out: dict[str, dict[str, str]] = msgspec.field(default_factory=dict)
    answer_grouping: AnswerGroupingSummary | None = None
    #: item key → model → an answer's stored value → the value of the answer it says the same as
    answer_clusters: ClusterMap = msgspec.field(default_factory=dict)

    def removed(self) -> AuditedOut:
        return {
            key: {int(variant): reason for variant, reason in by_variant.items()}
            for key, by_variant in self.audited_out.items()
        }


def consistency_records(
    items: Sequence[ItemRow],
    answers: Sequence[AnswerRecord],
    sets: dict[str, ParaphraseSet],
    audited_out: AuditedOut | None = None,
) -> list[ConsistencyRecord]:
    """One record per graded answer with a label (docs/method.md §1.4's unit: question × model),
    none for a paraphrase the audit removed."""
    by_position = {row.position: row for row in items}
    records = []
    for answer in answers:
        if answer.label is None or answer.status != "graded":
            continue
        row = by_position[answer.position]
        if answer.variant in (audited_out or {}).get(row.item_id, {}):
            continue
        paraphrase_set = sets.get(row.paraphrase_set_id or "")
        records.append(consistency_record(row.item_id, answer, paraphrase_set))
    return records


def consistency_record(
    item_key: str, answer: AnswerRecord, paraphrase_set: ParaphraseSet | None
) -> ConsistencyRecord:
    """A graded answer as scoring reads it, with its paraphrase's kind and tone."""
    kind = tone = None
    if answer.variant > 0 and paraphrase_set is not None:
        paraphrase = paraphrase_set.paraphrases[answer.variant - 1]
        kind, tone = paraphrase.kind, paraphrase.tone
    return ConsistencyRecord(
        item_id=item_key,
        model=answer.model,
        variant=answer.variant,
        label=answer.label,  # type: ignore[arg-type]
        value=answer.value,
        kind=kind or ("original" if answer.variant == 0 else None),
        tone=tone,
    )


def item_results(
    models: list[str],
    items: Sequence[ItemRow],
    sets: dict[str, ParaphraseSet],
    answers: Sequence[AnswerRecord],
    item_metrics: dict[str, dict[str, dict[str, Any]]] | None = None,
    audited_out: AuditedOut | None = None,
) -> list[ItemResult]:
    by_position: dict[int, list[AnswerRecord]] = defaultdict(list)
    for answer in answers:
        by_position[answer.position].append(answer)
    return [
        assemble_item(
            item_key=row.item_id,
            item=row.item,
            models=models,
            paraphrase_set=sets.get(row.paraphrase_set_id or ""),
            answers=by_position[row.position],
            item_metrics=(item_metrics or {}).get(row.item_id),
            paraphrase_error=row.error,
            paraphrase_pending=row.status == "pending",
            audited_out=(audited_out or {}).get(row.item_id),
            asked_in=row.asked_in,
        )
        for row in items
    ]


def summarise(
    models: list[str], results: list[ItemResult], metrics: dict[str, Any] | None
) -> list[ModelSummary]:
    counts: dict[str, AnswerCounts] = {}
    agreements: dict[str, list[float]] = {}
    for model in models:
        entries = [entry for result in results for entry in result.models if entry.model == model]
        counts[model] = AnswerCounts(
            answered=sum(entry.answered for entry in entries),
            unparsed=sum(entry.unparsed for entry in entries),
            failed=sum(entry.failed for entry in entries),
        )
        agreements[model] = [e.agreement for e in entries if e.agreement is not None]
    return model_summaries(models, metrics, counts, agreements)


def refreshed_summaries(
    stored: list[ModelSummary], models: list[str], items: list[ItemResult]
) -> list[ModelSummary]:
    """The stored summaries with their answer counts and mean agreement read again from the
    items, which are assembled from the answers on every read: a summary an earlier version
    stored (other agreement rule, no ``unparsed``) then agrees with the items beside it."""
    fresh = {summary.model: summary for summary in summarise(models, items, None)}
    return [
        msgspec.structs.replace(
            summary,
            answered=fresh[summary.model].answered,
            unparsed=fresh[summary.model].unparsed,
            failed=fresh[summary.model].failed,
            mean_agreement=fresh[summary.model].mean_agreement,
        )
        if summary.model in fresh
        else summary
        for summary in stored
    ]


def semantic_check_of(sets: dict[str, ParaphraseSet]) -> str | None:
    checks = sorted({s.semantic_check for s in sets.values() if s.semantic_check})
    return ", ".join(checks) or None


def verification_of(sets: dict[str, ParaphraseSet]) -> VerificationSummary | None:
    """How the sets were verified: every stage any of them ran, the judge, and each distinct
    threshold it was held to."""
    made = [s.verification for s in sets.values() if s.verification is not None]
    if not made:
        return None
    given = [s for s in sets.values() if s.source == "given"]
    stages = sorted({str(stage) for v in made for stage in v.stages}, key=_STAGE_ORDER.index)
    thresholds = []
    for verification in made:
        threshold = verification.judge_threshold
        if threshold is not None and threshold not in thresholds:
            thresholds.append(threshold)
    judged = next((v for v in made if v.judge_model), made[0])
    return VerificationSummary(
        stages=stages,
        semantic_check=semantic_check_of(sets),
        judge_model=judged.judge_model,
        judge_prompt_version=judged.judge_prompt_version,
        judge_thresholds=thresholds,
        given_sets=len(given),
        unverified_sets=sum(1 for s in given if not s.verified),
    )


_STAGE_ORDER = ["form", "direction", "lexical", "numbers", "semantic", "judge", "audit", "answer"]


def build_results(
    settings: EvaluationSettings,
    models: list[str],
    items: Sequence[ItemRow],
    sets: dict[str, ParaphraseSet],
    answers: Sequence[AnswerRecord],
    metrics: dict[str, Any] | None,
    audit: AuditOutcome | None = None,
    clustered: Clustered | None = None,
) -> StoredResults:
    removed = audit.removed if audit else {}
    results = item_results(models, items, sets, answers, audited_out=removed)
    return StoredResults(
        models=summarise(models, results, metrics),
        item_metrics=per_item_metrics(metrics),
        semantic_check=semantic_check_of(sets),
        consistency=metrics,
        verification=verification_of(sets),
        audit=audit.summary if audit else None,
        audited_out={
            key: {str(variant): reason for variant, reason in by_variant.items()}
            for key, by_variant in removed.items()
        },
        answer_grouping=clustered.summary if clustered else None,
        answer_clusters=clustered.clusters if clustered else {},
    )


def clustered_items(
    items: Sequence[ItemRow], answers: Sequence[AnswerRecord]
) -> list[ClusteredItem]:
    by_position: dict[int, list[AnswerRecord]] = defaultdict(list)
    for answer in answers:
        by_position[answer.position].append(answer)
    return [ClusteredItem(row.item_id, row.item, by_position[row.position]) for row in items]


def grouped_by_meaning(
    items: Sequence[ItemRow], answers: Sequence[AnswerRecord], clusters: ClusterMap
) -> list[AnswerRecord]:
    """The answers with the values their meaning clusters give them."""
    return with_clusters(answers, clusters, {row.position: row.item_id for row in items})


def audited_items(
    items: Sequence[ItemRow], sets: dict[str, ParaphraseSet], answers: Sequence[AnswerRecord]
) -> list[AuditedItem]:
    """Every item with a paraphrase set, with its answers, for the audit."""
    by_position: dict[int, list[AnswerRecord]] = defaultdict(list)
    for answer in answers:
        by_position[answer.position].append(answer)
    audited = []
    for row in items:
        paraphrase_set = sets.get(row.paraphrase_set_id or "")
        if paraphrase_set is not None and paraphrase_set.paraphrases:
            audited.append(
                AuditedItem(row.item_id, row.item, paraphrase_set, by_position[row.position])
            )
    return audited
