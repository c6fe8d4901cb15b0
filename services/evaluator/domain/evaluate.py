"""``POST /v1/evaluate``: a few questions evaluated in one request, nothing persisted."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

from steadfast.services.evaluator.domain.audit import (
    AuditedItem,
    AuditOutcome,
    audit_note,
    run_audit,
)
from steadfast.services.evaluator.domain.clustering import (
    ClusteredItem,
    cluster_answers,
    with_clusters,
)
from steadfast.services.evaluator.domain.item_results import assemble_item, per_item_metrics
from steadfast.services.evaluator.domain.job_results import (
    AuditedOut,
    consistency_record,
    semantic_check_of,
    summarise,
    verification_of,
)
from steadfast.services.evaluator.domain.pipeline import (
    Upstream,
    answer_request,
    answer_value,
    consistency_request,
    generate_all,
    gold_of,
    grade_all,
    incomplete_note,
    item_id,
    models_of,
    paraphrase_request,
    to_paraphrase_set,
    unanswered_by_cut,
    with_retries,
)
from steadfast.services.evaluator.domain.prompts import item_language
from steadfast.services.evaluator.errors import UpstreamError
from steadfast.services.evaluator.records import AnswerRecord, ParaphraseSet
from steadfast.shared.backoff import Backoff
from steadfast.shared.contracts.evaluator import EvaluateRequest, EvaluateResponse


def variant_count(request: EvaluateRequest) -> int:
    """Model calls the request needs for answers: items × (1 + k) × models, an item that
    brings its paraphrases counting those."""
    wordings = sum(
        1 + (len(item.paraphrases) if item.paraphrases else request.k) for item in request.items
    )
    return wordings * max(1, len(models_of(request)))


@dataclass
class _Run:
    request: EvaluateRequest
    upstream: Upstream
    retry: Backoff

    async def paraphrase(self, position: int) -> tuple[ParaphraseSet | None, str | None]:
        item = self.request.items[position]
        request = paraphrase_request(self.request, item)
        try:
            response = await with_retries(lambda: self.upstream.paraphrase(request), self.retry)
        except UpstreamError as error:
            return None, error.reason
        paraphrase_set = to_paraphrase_set(request, response)
        return paraphrase_set, incomplete_note(paraphrase_set)

    async def answer(self, records: list[AnswerRecord]) -> None:
        """Fill ``text``/``value`` (or ``error``) of each record; retries failed calls."""
        requests = [
            answer_request(self.request, self.request.items[r.position], r.model, r.prompt)
            for r in records
        ]
        outcomes = await generate_all(self.upstream, requests, self.retry)
        for record, outcome in zip(records, outcomes, strict=True):
            item = self.request.items[record.position]
            if outcome.text is None:
                record.status, record.error_stage = "failed", "answer"
                record.error = outcome.error.reason if outcome.error else "no result"
                continue
            record.text, record.status = outcome.text, "answered"
            if not unanswered_by_cut(self.request, item, outcome):
                record.value = answer_value(self.request, item, outcome.text)
            elif gold_of(self.request.task, item):  # cut before its answer: no value, and
                record.status, record.label = "graded", "invalid"  # invalid without grading

    async def grade(self, records: list[AnswerRecord]) -> None:
        golds = {p: gold_of(self.request.task, item) for p, item in enumerate(self.request.items)}
        gradable = [r for r in records if r.status == "answered" and golds[r.position]]
        for record in records:
            if record.status == "answered" and not golds[record.position]:
                record.status = "graded"
        if not gradable:
            return
        graded = [(self.request.items[r.position], golds[r.position], r.text) for r in gradable]
        try:
            results = await with_retries(
                lambda: grade_all(self.upstream, self.request, graded),  # type: ignore[arg-type]
                self.retry,
            )
        except UpstreamError as error:
            for record in gradable:
                record.status, record.error_stage, record.error = "failed", "grade", error.reason
            return
        for record, result in zip(gradable, results, strict=True):
            record.label, record.status = result.label, "graded"

    async def audit(
        self, records: list[AnswerRecord], sets: list[ParaphraseSet | None]
    ) -> AuditOutcome:
        items = self.request.items
        audited = [
            AuditedItem(
                item_id(items[position], position),
                items[position],
                paraphrase_set,
                [r for r in records if r.position == position],
            )
            for position, paraphrase_set in enumerate(sets)
            if paraphrase_set is not None and paraphrase_set.paraphrases
        ]
        return await run_audit(self.upstream, self.request, audited, self.retry)

    async def metrics(
        self, records: list[AnswerRecord], sets: list[ParaphraseSet | None], removed: AuditedOut
    ) -> tuple[dict[str, Any] | None, str | None]:
        """The metrics, or None and why not (the answers are returned either way)."""
        items = self.request.items
        keys = [item_id(item, position) for position, item in enumerate(items)]
        consistency_records = [
            consistency_record(keys[r.position], r, sets[r.position])
            for r in records
            if r.label is not None and r.variant not in removed.get(keys[r.position], {})
        ]
        if not consistency_records:
            return None, None
        request = consistency_request(self.request, consistency_records)
        try:
            return await with_retries(lambda: self.upstream.consistency(request), self.retry), None
        except UpstreamError as error:
            return None, f"no metrics: {error.reason}"


async def evaluate_now(
    request: EvaluateRequest, upstream: Upstream, retry: Backoff | None = None
) -> EvaluateResponse:
    started = time.monotonic()
    run = _Run(request, upstream, retry or Backoff())
    models = models_of(request)
    positions = range(len(request.items))
    paraphrased = await asyncio.gather(*(run.paraphrase(p) for p in positions))
    records = []
    for position, (paraphrase_set, _) in zip(positions, paraphrased, strict=True):
        texts = [request.items[position].question]
        texts += [p.text for p in (paraphrase_set.paraphrases if paraphrase_set else [])]
        records += [
            AnswerRecord(position=position, model=m, variant=v, prompt=t, status="pending")
            for v, t in enumerate(texts)
            for m in models
        ]
    await run.answer(records)
    await run.grade(records)
    keys = [item_id(item, position) for position, item in enumerate(request.items)]
    clustered = await cluster_answers(
        upstream,
        request,
        [
            ClusteredItem(keys[p], request.items[p], [r for r in records if r.position == p])
            for p in positions
        ],
    )
    records = with_clusters(records, clustered.clusters, dict(enumerate(keys)))
    set_list = [s for s, _ in paraphrased]
    audit = await run.audit(records, set_list)
    metrics, metrics_note = await run.metrics(records, set_list, audit.removed)
    by_item = per_item_metrics(metrics)
    results = []
    for position, (paraphrase_set, note) in zip(positions, paraphrased, strict=True):
        item = request.items[position]
        key = item_id(item, position)
        results.append(
            assemble_item(
                item_key=key,
                item=item,
                models=models,
                paraphrase_set=paraphrase_set,
                answers=[r for r in records if r.position == position],
                item_metrics=by_item.get(key),
                paraphrase_error=note,
                audited_out=audit.removed.get(key),
                asked_in=item_language(item, request.language),
            )
        )
    sets = {s.id: s for s, _ in paraphrased if s is not None}
    return EvaluateResponse(
        task=request.task,
        k=request.k,
        models=summarise(models, results, metrics),
        items=results,
        metric_settings=request.metrics,
        semantic_check=semantic_check_of(sets),
        verification=verification_of(sets),
        audit=audit.summary,
        answer_grouping=clustered.summary,
        elapsed_s=round(time.monotonic() - started, 3),
        notes=[note for note in (metrics_note, audit_note(audit)) if note],
    )
