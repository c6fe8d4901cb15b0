"""Use cases of ``/v1/evaluations``: submit, status, list, cancel, items, report."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import msgspec

from steadfast.services.evaluator.adapters.datasets import DatasetStore
from steadfast.services.evaluator.adapters.evaluations.rows import EvaluationRow
from steadfast.services.evaluator.adapters.evaluations.store import EvaluationStore
from steadfast.services.evaluator.domain.fan_out import new_evaluation
from steadfast.services.evaluator.domain.job_results import (
    grouped_by_meaning,
    item_results,
)
from steadfast.services.evaluator.domain.pipeline import (
    Upstream,
    instruction_role_of,
    paraphrase_request,
    paraphrase_set_id,
)
from steadfast.services.evaluator.domain.report import (
    evaluation_report,
    rendered_document,
    stored_results,
    timings,
)
from steadfast.services.evaluator.domain.validation import check_evaluation, require_runnable
from steadfast.services.evaluator.errors import IdempotencyConflict
from steadfast.services.evaluator.records import ParaphraseSet
from steadfast.shared.contracts.evaluator import (
    DEFAULT_PARAPHRASES,
    EvaluationCreate,
    EvaluationItem,
    EvaluationPage,
    EvaluationProgress,
    EvaluationReport,
    EvaluationSettings,
    EvaluationStatus,
    ItemError,
    ItemPage,
    ItemResult,
    StageProgress,
)
from steadfast.shared.contracts.scoring import (
    Report,
)
from steadfast.shared.errors import Conflict, InvalidRequest, NotFound, Unprocessable, not_found
from steadfast.shared.fingerprint import explicit, fingerprint
from steadfast.shared.tenancy import UNRESTRICTED, Tenancy

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


@dataclass(frozen=True)
class CheckedEvaluation:
    """A create request that can run: its settings, models and items, and the paraphrase sets
    of the earlier evaluation it reuses (by question)."""

    settings: EvaluationSettings
    models: list[str]
    items: list[EvaluationItem]
    earlier_sets: dict[str, ParaphraseSet]


@dataclass
class Evaluations:
    """The evaluation jobs' use cases: submit (after one check), status, pages, cancel, retry,
    item results and reports."""

    store: EvaluationStore
    datasets: DatasetStore
    upstream: Upstream

    async def submit(
        self,
        data: EvaluationCreate,
        idempotency_key: str | None,
        tenancy: Tenancy = UNRESTRICTED,
        api_key_id: str | None = None,
    ) -> tuple[EvaluationRow, bool]:
        """The job, made ``tenancy``'s tenant's (its Idempotency-Key that tenant's own)."""
        checked = await self.check(data, tenancy)
        settings, items = checked.settings, checked.items
        reuse = await self._stored_sets(settings, items)
        # an item that brings its paraphrases is asked them, not an earlier set
        brought = {item.question for item in items if item.paraphrases}
        reuse.update({q: s for q, s in checked.earlier_sets.items() if q not in brought})
        new_items, answers = new_evaluation(settings, items, checked.models, reuse)
        job, created = await self.store.create(
            settings=settings,
            items=new_items,
            answers=answers,
            models=checked.models,
            request_hash=request_hash(data),
            earlier_hashes=earlier_request_hashes(data),
            name=data.name,
            dataset_id=data.dataset_id,
            idempotency_key=idempotency_key,
            tenant=tenancy.tenant,
            api_key_id=api_key_id,
        )
        if not created and not same_k(job.k, data.k):
            raise IdempotencyConflict(job.id, "evaluation")
        return job, created

    async def check(
        self, data: EvaluationCreate, tenancy: Tenancy = UNRESTRICTED
    ) -> CheckedEvaluation:
        """Whatever would refuse ``data`` later (naming the field), before any job is made: its
        settings and items (``validation.check_evaluation``), an unknown dataset, an earlier
        evaluation of another k to reuse (a dataset or evaluation ``tenancy`` does not see is
        unknown)."""
        settings = settings_of(data)
        require_runnable(settings)  # the caller's own mistakes before any lookup
        items = await self.items_of(data, tenancy)
        earlier = await self._reusable_sets(data.reuse_paraphrases_from, settings.k, tenancy)
        inline = data.items is not None
        models = await check_evaluation(settings, items, self.upstream, inline=inline)
        return CheckedEvaluation(settings, models, items, earlier)

    async def items_of(
        self, data: EvaluationCreate, tenancy: Tenancy = UNRESTRICTED
    ) -> list[EvaluationItem]:
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
        dataset = await self.datasets.get(data.dataset_id or "", tenancy)
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

    async def _reusable_sets(
        self, evaluation_id: str | None, k: int, tenancy: Tenancy
    ) -> dict[str, ParaphraseSet]:
        """The sets of an earlier evaluation with the same k: its sets are answered whole, so a
        different k would answer more (or fewer) paraphrases than this evaluation says."""
        if evaluation_id is None:
            return {}
        earlier = await self.store.get(evaluation_id, tenancy=tenancy)
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

    async def retry(self, evaluation_id: str, tenancy: Tenancy = UNRESTRICTED) -> EvaluationRow:
        """Run a finished job's failed parts again (its other answers stay as they are)."""
        evaluation = await self.require(evaluation_id, tenancy)
        if evaluation.status not in ("succeeded", "failed"):
            detail = (
                f"evaluation {evaluation.id} is {evaluation.status}: only a finished one is retried"
            )
            raise Conflict(detail, field="evaluation_id", source="path")
        if not await self.store.retry_failed(evaluation.id, evaluation.status):
            detail = f"evaluation {evaluation.id} has no failed part to run again"
            raise Conflict(detail, field="evaluation_id", source="path", title="Nothing to retry")
        return await self.require(evaluation.id)

    async def require(
        self, evaluation_id: str, tenancy: Tenancy = UNRESTRICTED, *, results: bool = False
    ) -> EvaluationRow:
        """The job or a 404 (another tenant's too, answered alike); ``results`` for the item
        pages and reports, which show them."""
        evaluation = await self.store.get(evaluation_id, results=results, tenancy=tenancy)
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
        tenancy: Tenancy = UNRESTRICTED,
    ) -> EvaluationPage:
        """The evaluations ``tenancy`` sees."""
        if dataset_id is not None:  # a sample by its name ("gsm8k") is stored by its id
            dataset = await self.datasets.get(dataset_id, tenancy)
            dataset_id = dataset.id if dataset is not None else dataset_id
        rows, total = await self.store.list_page(
            status=status,
            task=task,
            model=model,
            dataset_id=dataset_id,
            limit=limit,
            offset=offset,
            tenancy=tenancy,
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

    async def cancel(self, evaluation_id: str, tenancy: Tenancy = UNRESTRICTED) -> EvaluationStatus:
        evaluation = await self.require(evaluation_id, tenancy)
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
        errors, _ = await self.store.errors(evaluation.id, 10**9)
        return evaluation_report(evaluation, await self.item_results(evaluation), errors)

    async def report_document(self, evaluation: EvaluationRow) -> Report:
        """The document the scoring service renders as HTML or CSV."""
        return rendered_document(evaluation, await self.report(evaluation))


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
