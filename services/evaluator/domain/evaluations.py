"""Use cases of ``/v1/evaluations``: submit, status, list, cancel, items, report."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import msgspec

from steadfast.services.evaluator.adapters.datasets import DatasetStore
from steadfast.services.evaluator.adapters.evaluations.rows import EvaluationRow
from steadfast.services.evaluator.adapters.evaluations.store import EvaluationStore
from steadfast.services.evaluator.domain.fan_out import new_evaluation
from steadfast.services.evaluator.domain.pipeline import (
    Upstream,
    instruction_role_of,
    paraphrase_request,
    paraphrase_set_id,
    require_distinct_ids,
    require_gradable_items,
    require_known_routes,
    require_models,
    task_of,
)
from steadfast.services.evaluator.domain.prompts import PROMPT_VERSION as ANSWER_PROMPT_VERSION
from steadfast.services.evaluator.domain.report import (
    StoredResults,
    grouped_by_meaning,
    item_results,
    refreshed_summaries,
)
from steadfast.services.evaluator.errors import IdempotencyConflict
from steadfast.services.evaluator.records import ParaphraseSet
from steadfast.services.evaluator.timestamps import iso
from steadfast.shared.contracts.evaluator import (
    DEFAULT_PARAPHRASES,
    EvaluationCreate,
    EvaluationItem,
    EvaluationPage,
    EvaluationProgress,
    EvaluationReport,
    EvaluationSettings,
    EvaluationStatus,
    EvaluationTimings,
    ItemError,
    ItemPage,
    ItemResult,
    StageProgress,
)
from steadfast.shared.contracts.scoring import (
    MAX_JUDGES,
    AuditedVariant,
    ConsistencyResponse,
    Report,
    ReportAnswer,
    ReportFailure,
    ReportItem,
    ReportTrust,
    ReportVariant,
)
from steadfast.shared.errors import Conflict, InvalidRequest, NotFound, Unprocessable, not_found
from steadfast.shared.fingerprint import explicit, fingerprint

STATUS_ERRORS = 20


def request_hash(data: EvaluationCreate) -> str:
    """What an ``Idempotency-Key`` retry must repeat: the fields the request set."""
    return fingerprint(data)


def legacy_request_hash(data: EvaluationCreate) -> str:
    """The hash versions before 2026-12-01 stored (every field, defaults included): a retry
    sent across the upgrade still finds its evaluation."""
    return hashlib.sha256(msgspec.json.encode(data)).hexdigest()


#: ``k``'s default before 2026-12-02 (METHOD's 10 since)
EARLIER_DEFAULT_K = 5


def same_k(stored: int, asked: int) -> bool:
    """Whether an evaluation stored with ``stored`` paraphrases per question answers a request
    for ``asked``: the same number, or a request without ``k`` (now 10) sent to an earlier
    version, where it meant 5. An earlier version's hash cannot tell 5 from 10 (one of them was
    a default, left out), the stored ``k`` can."""
    return stored == asked or (stored, asked) == (EARLIER_DEFAULT_K, DEFAULT_PARAPHRASES)


def earlier_request_hashes(data: EvaluationCreate) -> list[str]:
    """Every hash an earlier version may have stored for this request, so that a retry sent
    across an upgrade still finds its evaluation: the legacy hash, and those of the versions
    whose ``k`` defaulted to 5 (a fingerprint leaves a default out, so ``"k": 5`` was left
    out and ``"k": 10`` kept; a body without ``k`` ran with 5)."""
    body = explicit(data)
    if data.k == EARLIER_DEFAULT_K:
        body.pop("k", None)
    else:
        body["k"] = data.k
    hashes = [
        legacy_request_hash(data),
        hashlib.sha256(msgspec.json.encode(body, order="sorted")).hexdigest(),
    ]
    if data.k == DEFAULT_PARAPHRASES:
        hashes.append(legacy_request_hash(msgspec.structs.replace(data, k=EARLIER_DEFAULT_K)))
    return hashes


def settings_of(data: EvaluationCreate) -> EvaluationSettings:
    """The settings part of a create request (without items, dataset and name), with the
    answer layout it resolves to: the report then says which one the answers had."""
    fields = {f: getattr(data, f) for f in EvaluationSettings.__struct_fields__}
    settings = EvaluationSettings(**fields)
    return msgspec.structs.replace(settings, instruction_role=instruction_role_of(settings))


def require_runnable(settings: EvaluationSettings) -> list[str]:
    """The models to evaluate; a 400 naming the field when the settings cannot run."""
    models = require_models(settings)
    if settings.plain_per_round + settings.toned_per_round == 0:
        detail = "a generation round must ask for at least one candidate (plain or toned)"
        raise InvalidRequest(detail, field="plain_per_round")
    _require_judges(settings)
    return models


def judge_routes(settings: EvaluationSettings, items: Sequence[EvaluationItem] | None) -> list[str]:
    """The routes named to judge the answers, when they will be asked: the llm grader judges
    factual answers only (a dataset's items: by the evaluation's task)."""
    if settings.grader != "llm" or not settings.judge_models:
        return []  # none named: the scoring service's default judge
    tasks = {task_of(settings, item) for item in items} if items is not None else {settings.task}
    return list(settings.judge_models) if "factual" in tasks else []


def _require_judges(settings: EvaluationSettings) -> None:
    # the scoring service refuses these too, but only when the first answer is graded
    if len(settings.judge_models or []) > MAX_JUDGES:
        detail = f"at most {MAX_JUDGES} judges"
        raise InvalidRequest(detail, field="judge_models")
    judges = settings.judge_models or [] if settings.grader == "llm" else []
    for index, judge in enumerate(judges):
        if judge in judges[:index]:
            detail = f"{judge!r} is named twice: each judge grades every answer once"
            raise InvalidRequest(detail, field=f"judge_models[{index}]")


@dataclass
class Evaluations:
    store: EvaluationStore
    datasets: DatasetStore

    async def submit(
        self, data: EvaluationCreate, idempotency_key: str | None
    ) -> tuple[EvaluationRow, bool]:
        settings = settings_of(data)
        models = require_runnable(settings)
        items = await self.items_of(data)
        require_distinct_ids(items, "items" if data.items is not None else None)
        # a dataset's items are not refused here: one odd gold in a benchmark (SQuAD-it has an
        # answer ".") would refuse the whole run
        if data.items is not None:
            require_gradable_items(settings, items)
        reuse = await self._stored_sets(settings, items)
        earlier = await self._reusable_sets(data.reuse_paraphrases_from, settings.k)
        # an item that brings its paraphrases is asked them, not an earlier set
        brought = {item.question for item in items if item.paraphrases}
        reuse.update({q: s for q, s in earlier.items() if q not in brought})
        new_items, answers = new_evaluation(settings, items, models, reuse)
        job, created = await self.store.create(
            settings=settings,
            items=new_items,
            answers=answers,
            models=models,
            request_hash=request_hash(data),
            earlier_hashes=earlier_request_hashes(data),
            name=data.name,
            dataset_id=data.dataset_id,
            idempotency_key=idempotency_key,
        )
        if not created and not same_k(job.k, data.k):
            raise IdempotencyConflict(job.id, "evaluation")
        return job, created

    async def check(
        self, data: EvaluationCreate, upstream: Upstream
    ) -> tuple[list[str], list[EvaluationItem]]:
        """Whatever would refuse ``data`` later (a 4xx naming the field), before any job is
        made: its models and items, an unknown dataset or earlier evaluation, items that
        cannot be graded, routes the gateway does not know. Its models and items."""
        models = require_runnable(data)
        items = await self.items_of(data)
        require_distinct_ids(items, "items" if data.items is not None else None)
        if data.items is not None:
            require_gradable_items(data, items)
        await self._reusable_sets(data.reuse_paraphrases_from, settings_of(data).k)
        await require_known_routes(upstream, data, judges=judge_routes(data, data.items))
        return models, items

    async def items_of(self, data: EvaluationCreate) -> list[EvaluationItem]:
        """The items to evaluate: inline, or a stored dataset's (a 4xx naming the field)."""
        if (data.items is None) == (data.dataset_id is None):
            raise InvalidRequest(
                "give exactly one of `items` and `dataset_id`",
                field="items",
            )
        if data.items is not None:
            if not data.items:
                raise InvalidRequest("`items` is empty", field="items")
            return data.items[: data.limit] if data.limit else data.items
        dataset = await self.datasets.get(data.dataset_id or "")
        if dataset is None:
            raise NotFound(f"no dataset {data.dataset_id!r}", field="dataset_id")
        data.dataset_id = dataset.id
        return await self.datasets.items(dataset.id, limit=data.limit)

    async def _stored_sets(
        self, settings: EvaluationSettings, items: list[EvaluationItem]
    ) -> dict[str, ParaphraseSet]:
        """Complete sets generated earlier with exactly these settings (same seed): a re-run
        would get the same set from the gateway's cache, so it is taken from the database."""
        ids = {paraphrase_set_id(paraphrase_request(settings, item)) for item in items}
        stored = await self.store.paraphrase_sets(ids)
        return {s.question: s for s in stored.values() if s.complete}

    async def _reusable_sets(self, evaluation_id: str | None, k: int) -> dict[str, ParaphraseSet]:
        """The sets of an earlier evaluation with the same k: its sets are answered whole, so a
        different k would answer more (or fewer) paraphrases than this evaluation says."""
        if evaluation_id is None:
            return {}
        earlier = await self.store.get(evaluation_id)
        if earlier is None:
            raise NotFound(
                f"no evaluation {evaluation_id!r}",
                field="reuse_paraphrases_from",
            )
        if earlier.settings.k != k:
            raise Unprocessable(
                f"evaluation {evaluation_id!r} has sets of k={earlier.settings.k}, this one asks "
                f"for k={k}",
                field="reuse_paraphrases_from",
                title="Paraphrase sets of another k",
            )
        return await self.store.sets_by_question(evaluation_id)

    async def retry(self, evaluation_id: str) -> EvaluationRow:
        """Run a finished job's failed parts again (its other answers stay as they are)."""
        evaluation = await self.require(evaluation_id)
        if evaluation.status not in ("succeeded", "failed"):
            detail = (
                f"evaluation {evaluation.id} is {evaluation.status}: only a finished one is retried"
            )
            raise Conflict(detail, field="evaluation_id", source="path")
        if not await self.store.retry_failed(evaluation.id, evaluation.status):
            detail = f"evaluation {evaluation.id} has no failed part to run again"
            raise Conflict(detail, field="evaluation_id", source="path", title="Nothing to retry")
        return await self.require(evaluation.id)

    async def require(self, evaluation_id: str, *, results: bool = False) -> EvaluationRow:
        """The job or a 404; ``results`` for the item pages and reports, which show them."""
        evaluation = await self.store.get(evaluation_id, results=results)
        if evaluation is None:
            raise not_found("evaluation", evaluation_id, "evaluation_id")
        return evaluation

    async def status(
        self,
        evaluation: EvaluationRow,
        counts: dict[str, dict[str, int]] | None = None,
        error_count: int | None = None,
    ) -> EvaluationStatus:
        """The job's status; ``counts`` and ``error_count`` when a list page read them already
        (a job without failures then needs no query of its own)."""
        if error_count == 0:
            errors: list[ItemError] = []
        else:
            errors, error_count = await self.store.errors(evaluation.id, STATUS_ERRORS)
        if counts is None:
            counts = await self.store.progress_counts(evaluation.id)
        return EvaluationStatus(
            id=evaluation.id,
            status=evaluation.status,  # type: ignore[arg-type]
            name=evaluation.name,
            task=evaluation.task,  # type: ignore[arg-type]
            models=evaluation.models,
            k=evaluation.k,
            dataset_id=evaluation.dataset_id,
            item_count=evaluation.item_count,
            progress=progress(evaluation, counts),
            timings=timings(evaluation),
            errors=errors,
            error_count=error_count,
            message=evaluation.message,
        )

    async def page(
        self,
        *,
        status: str | None,
        task: str | None,
        model: str | None,
        dataset_id: str | None,
        limit: int,
        offset: int,
    ) -> EvaluationPage:
        if dataset_id is not None:  # a sample by its name ("gsm8k") is stored by its id
            dataset = await self.datasets.get(dataset_id)
            dataset_id = dataset.id if dataset is not None else dataset_id
        rows, total = await self.store.list_page(
            status=status, task=task, model=model, dataset_id=dataset_id, limit=limit, offset=offset
        )
        ids = [row.id for row in rows]
        counts = await self.store.progress_counts_of(ids)
        error_counts = await self.store.error_counts(ids)
        return EvaluationPage(
            evaluations=[
                await self.status(row, counts[row.id], error_counts[row.id]) for row in rows
            ],
            total=total,
            limit=limit,
            offset=offset,
        )

    async def cancel(self, evaluation_id: str) -> EvaluationStatus:
        evaluation = await self.require(evaluation_id)
        if not await self.store.cancel(evaluation_id):
            raise Conflict(
                f"evaluation {evaluation_id} already {evaluation.status}",
                field="evaluation_id",
                source="path",
            )
        return await self.status(await self.require(evaluation_id))

    async def item_results(
        self, evaluation: EvaluationRow, offset: int = 0, limit: int | None = None
    ) -> list[ItemResult]:
        rows = await self.store.items(evaluation.id, offset, limit)
        answers = await self.store.answers_of(evaluation.id, [row.position for row in rows])
        sets = await self.store.paraphrase_sets(
            row.paraphrase_set_id for row in rows if row.paraphrase_set_id
        )
        stored = stored_results(evaluation)
        metrics = stored.item_metrics if stored else None
        removed = stored.removed() if stored else None
        if stored is not None:
            answers = grouped_by_meaning(rows, answers, stored.answer_clusters)
        return item_results(evaluation.models, rows, sets, answers, metrics, removed)

    async def items_page(self, evaluation: EvaluationRow, offset: int, limit: int) -> ItemPage:
        return ItemPage(
            items=await self.item_results(evaluation, offset, limit),
            total=evaluation.item_count,
            limit=limit,
            offset=offset,
        )

    async def report(self, evaluation: EvaluationRow) -> EvaluationReport:
        stored = stored_results(evaluation)
        errors, _ = await self.store.errors(evaluation.id, 10**9)
        items = await self.item_results(evaluation)
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

    async def report_document(self, evaluation: EvaluationRow) -> Report:
        """The document the scoring service renders as HTML or CSV."""
        report = await self.report(evaluation)
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
            task=report.task,
            dataset=evaluation.dataset_id,
            settings={**report_settings(evaluation), "language": languages_of(report.items)},
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
    return described_languages(Counter(item.language for item in items))


def described_languages(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{language} ({n} item{'s' * (n != 1)})" for language, n in counts.items())


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


def progress(evaluation: EvaluationRow, counts: dict[str, dict[str, int]]) -> EvaluationProgress:
    """Per stage: done, failed and total, from the status counts of items and answers."""
    items, answers = counts["items"], counts["answers"]
    pending_items = items.get("pending", 0)
    with_text = answers.get("answered", 0) + answers.get("graded", 0)
    with_text += answers.get("failed_grade", 0)
    failed = answers.get("failed_answer", 0)
    total = sum(answers.values()) + pending_items * evaluation.k * len(evaluation.models)
    return EvaluationProgress(
        paraphrase=StageProgress(
            done=items.get("done", 0),
            failed=items.get("failed", 0),
            total=evaluation.item_count,
        ),
        answer=StageProgress(done=with_text, failed=failed, total=total),
        grade=StageProgress(
            done=answers.get("graded", 0),
            failed=answers.get("failed_grade", 0),
            total=with_text,
        ),
        fraction=round((with_text + failed) / total, 4) if total else 0.0,
    )
