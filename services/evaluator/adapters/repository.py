"""Evaluations, their items, answers and paraphrase sets in the database.

Work is shared through row leases: a worker claims rows by writing its name and a lease expiry
(``FOR UPDATE SKIP LOCKED`` on PostgreSQL so concurrent workers never claim the same row; on
SQLite, where one process owns the file, an in-process lock serialises claims). A result is
written only by the lease holder, so a variant is never stored twice.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import time
import uuid
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec
import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import RowMapping
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from steadfast.services.evaluator.db.models import (
    OPEN_ANSWER_SQL,
    answers,
    evaluation_items,
    evaluations,
    paraphrase_sets,
)
from steadfast.services.evaluator.domain.pipeline import (
    ParaphraseSet,
    answer_request,
    grade_key,
    item_id,
    request_key,
)
from steadfast.services.evaluator.domain.prompts import DEFAULT_LANGUAGE, item_language
from steadfast.services.evaluator.domain.results import AnswerRecord
from steadfast.shared.contracts.evaluator import EvaluationItem, EvaluationSettings, ItemError
from steadfast.shared.contracts.perturb import Paraphrase, Verification
from steadfast.shared.db import delete_in_chunks
from steadfast.shared.problems import ProblemError

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

Row = TypeVar("Row", bound="DataclassInstance")
T = TypeVar("T")

ACTIVE = ("queued", "running")
#: rows one retention transaction deletes at most
PURGE_CHUNK = 2000
TERMINAL = ("succeeded", "failed", "cancelled")
#: the open answers of ``answers`` (see OPEN_ANSWER_SQL: literal, for the partial index)
OPEN_ANSWER = sa.text(f"evaluator_answers.{OPEN_ANSWER_SQL}")


class IdempotencyConflict(Exception):
    """The Idempotency-Key was used before with a different request."""

    def problem(self, kind: str) -> ProblemError:
        """The 422 naming the header, for the ``kind`` of job the key made first."""
        return ProblemError(
            422,
            "Idempotency-Key reused",
            f"the key was used for {kind} {self} with a different request",
            field="Idempotency-Key",
            source="header",
        )


@dataclass
class EvaluationRow:
    id: str
    name: str | None
    status: str
    task: str
    models: list[str]
    k: int
    dataset_id: str | None
    item_count: int
    settings: EvaluationSettings
    request_hash: str
    created_at: float
    started_at: float | None
    finished_at: float | None
    message: str | None
    results: dict[str, Any] | None


@dataclass
class ItemRow:
    row_id: int
    position: int
    item_id: str
    item: EvaluationItem
    status: str
    paraphrase_set_id: str | None
    error: str | None
    attempts: int
    unreachable_attempts: int
    #: the language its models are asked in; None: a row made before that was chosen (English)
    language: str | None = None

    @property
    def asked_in(self) -> str:
        return self.language or DEFAULT_LANGUAGE


@dataclass
class AnswerRow:
    row_id: int
    record: AnswerRecord
    attempts: int
    unreachable_attempts: int = 0


@dataclass
class StoredAnswer:
    row_id: int
    text: str
    value: str | None
    cached: bool
    #: graded at once when the item has no gold answer (nothing to grade against)
    final: bool


@dataclass
class StoredGrade:
    row_id: int
    #: None for an item without gold answers (nothing to grade against)
    label: str | None
    #: identifies the grading, so an identical one later takes this label (see ``grade_key``)
    grade_key: str | None = None


@dataclass
class Failure:
    row_id: int
    reason: str
    stage: str
    #: None: give up; else retry at this time
    retry_at: float | None
    #: counted as a failure to reach the service (``unreachable_attempts``), not ``attempts``
    unreachable: bool = False


def _counted(failure: Failure, attempts: int, unreachable_attempts: int) -> dict[str, int]:
    """The attempt counts after ``failure``: one more of its kind. An ordinary failure came
    from a service that answered: an outage after it is waited for afresh."""
    if failure.unreachable:
        return {"attempts": attempts, "unreachable_attempts": unreachable_attempts + 1}
    return {"attempts": attempts + 1, "unreachable_attempts": 0}


def _evaluation_columns(results: bool) -> list[sa.Column[Any]]:
    return [column for column in evaluations.c if results or column.key != "results"]


def stored_settings(stored: dict[str, Any]) -> EvaluationSettings:
    """An evaluation's settings as stored; one stored before ``instruction_role`` existed was
    answered with the instruction in the user message (unset now means: resolve it)."""
    return msgspec.convert({"instruction_role": "user", **stored}, EvaluationSettings)


def _from_row(cls: type[Row], row: RowMapping, **converted: Any) -> Row:
    """``cls`` from the row's columns of its fields' names; ``converted`` holds the fields
    whose column is named otherwise or needs converting."""
    names = [field.name for field in dataclasses.fields(cls) if field.name not in converted]
    return cls(**{name: row[name] for name in names}, **converted)


def _evaluation(row: RowMapping) -> EvaluationRow:
    return _from_row(
        EvaluationRow,
        row,
        models=list(row["models"]),
        settings=stored_settings(row["settings"]),
        results=row.get("results"),  # only selected when asked for
    )


def _item(row: RowMapping) -> ItemRow:
    item = msgspec.convert(row["item"], EvaluationItem)
    return _from_row(ItemRow, row, row_id=row["id"], item=item)


def _answer_record(row: RowMapping) -> AnswerRecord:
    return _from_row(AnswerRecord, row)


def _paraphrase_set(row: RowMapping) -> ParaphraseSet:
    paraphrases = msgspec.convert(row["paraphrases"], list[Paraphrase])
    verification = row["verification"]
    return _from_row(
        ParaphraseSet,
        row,
        paraphrases=paraphrases,
        rejected=list(row["rejected"]),
        verification=msgspec.convert(verification, Verification) if verification else None,
    )


#: the grade key of an answer text to the item at a position (None: no gold answer)
GradeKeys = Callable[[int, str], "str | None"]


def _grade_keys(settings: EvaluationSettings, items: dict[int, EvaluationItem]) -> GradeKeys:
    return lambda position, text: grade_key(settings, items[position], text)


def _answer_rows(
    evaluation_id: str,
    position: int,
    models: list[str],
    prompts: list[tuple[int, str]],
    settings: EvaluationSettings,
    item: EvaluationItem,
    language: str,
) -> list[dict[str, Any]]:
    return [
        {
            "evaluation_id": evaluation_id,
            "position": position,
            "model": model,
            "variant": variant,
            "prompt": prompt,
            "request_key": request_key(answer_request(settings, item, model, prompt, language)),
            "status": "pending",
            "text": None,
            "value": None,
            "cached": None,
            "answered_at": None,
            "label": None,
            "grade_key": None,
            "attempts": 0,
            "next_attempt_at": 0.0,
        }
        for variant, prompt in prompts
        for model in models
    ]


def _texts(paraphrases: list[dict[str, Any]] | None) -> list[str]:
    return [paraphrase["text"] for paraphrase in paraphrases or []]


def _set_values(paraphrase_set: ParaphraseSet) -> dict[str, Any]:
    return {
        "id": paraphrase_set.id,
        "question": paraphrase_set.question,
        "generator": paraphrase_set.generator,
        "k": paraphrase_set.k,
        "seed": paraphrase_set.seed,
        "prompt_version": paraphrase_set.prompt_version,
        "semantic_check": paraphrase_set.semantic_check,
        "complete": paraphrase_set.complete,
        "incomplete_reason": paraphrase_set.incomplete_reason,
        "candidates_generated": paraphrase_set.candidates_generated,
        "paraphrases": msgspec.to_builtins(paraphrase_set.paraphrases),
        "rejected": paraphrase_set.rejected,
        "verification": msgspec.to_builtins(paraphrase_set.verification),
        "created_at": time.time(),
        "used_at": time.time(),
    }


class EvaluationStore:
    def __init__(self, engine: AsyncEngine, *, lease_s: float = 30.0) -> None:
        self.engine = engine
        self.lease_s = lease_s
        self.sqlite = engine.dialect.name == "sqlite"
        self._claim_lock = asyncio.Lock()

    # ---- jobs ---------------------------------------------------------------------------

    async def create(
        self,
        *,
        settings: EvaluationSettings,
        items: list[EvaluationItem],
        models: list[str],
        request_hash: str,
        earlier_hashes: Collection[str] = (),
        name: str | None = None,
        dataset_id: str | None = None,
        idempotency_key: str | None = None,
        reuse_sets: dict[str, ParaphraseSet] | None = None,
    ) -> tuple[EvaluationRow, bool]:
        """Create a queued job; returns (job, created). An Idempotency-Key seen before returns
        the earlier job (or raises :class:`IdempotencyConflict` for a different request: one
        whose stored hash is neither ``request_hash`` nor one of ``earlier_hashes``, the same
        request's hash as earlier versions computed it)."""
        accepted = {request_hash, *earlier_hashes}
        if idempotency_key:
            existing = await self.by_idempotency_key(idempotency_key)
            if existing is not None:
                return self._same_request(existing, accepted), False
        evaluation_id = f"ev-{uuid.uuid4().hex[:20]}"
        try:
            async with self.engine.begin() as connection:
                await connection.execute(
                    evaluations.insert().values(
                        id=evaluation_id,
                        name=name,
                        status="queued",
                        task=settings.task,
                        models=models,
                        k=settings.k,
                        dataset_id=dataset_id,
                        item_count=len(items),
                        settings=msgspec.to_builtins(settings),
                        idempotency_key=idempotency_key,
                        request_hash=request_hash,
                        created_at=time.time(),
                    )
                )
                await self._insert_items(
                    connection, evaluation_id, items, models, settings, reuse_sets or {}
                )
        except IntegrityError:
            existing = await self.by_idempotency_key(idempotency_key) if idempotency_key else None
            if existing is None:
                raise
            return self._same_request(existing, accepted), False
        created = await self.get(evaluation_id)
        assert created is not None
        return created, True

    @staticmethod
    def _same_request(existing: EvaluationRow, accepted: set[str]) -> EvaluationRow:
        if existing.request_hash not in accepted:
            raise IdempotencyConflict(existing.id)
        return existing

    async def _insert_items(
        self,
        connection: AsyncConnection,
        evaluation_id: str,
        items: list[EvaluationItem],
        models: list[str],
        settings: EvaluationSettings,
        reuse_sets: dict[str, ParaphraseSet],
    ) -> None:
        reuse_sets = await self._take_sets(connection, reuse_sets)
        item_rows: list[dict[str, Any]] = []
        answer_rows: list[dict[str, Any]] = []
        for position, item in enumerate(items):
            reused = reuse_sets.get(item.question)
            language = item_language(item, settings.language)
            item_rows.append(
                {
                    "evaluation_id": evaluation_id,
                    "position": position,
                    "item_id": item_id(item, position),
                    "item": msgspec.to_builtins(item),
                    "status": "done" if reused else "pending",
                    "paraphrase_set_id": reused.id if reused else None,
                    "language": language,
                    "attempts": 0,
                    "next_attempt_at": 0.0,
                }
            )
            prompts = [(0, item.question)]
            if reused:
                prompts += [(i + 1, p.text) for i, p in enumerate(reused.paraphrases)]
            answer_rows += _answer_rows(
                evaluation_id, position, models, prompts, settings, item, language
            )
        for chunk in _chunks(item_rows, 500):
            await connection.execute(evaluation_items.insert(), chunk)
        grade_keys = _grade_keys(settings, dict(enumerate(items)))
        for chunk in _chunks(answer_rows, 1000):
            await self._insert_answers(connection, evaluation_id, chunk, grade_keys, settings)

    async def by_idempotency_key(self, key: str) -> EvaluationRow | None:
        async with self.engine.connect() as connection:
            row = (
                (
                    await connection.execute(
                        sa.select(evaluations).where(evaluations.c.idempotency_key == key)
                    )
                )
                .mappings()
                .first()
            )
        return _evaluation(row) if row else None

    async def get(self, evaluation_id: str, *, results: bool = False) -> EvaluationRow | None:
        """The job; its results JSON (large for big jobs) only when asked for."""
        query = sa.select(*_evaluation_columns(results)).where(evaluations.c.id == evaluation_id)
        async with self.engine.connect() as connection:
            row = (await connection.execute(query)).mappings().first()
        return _evaluation(row) if row else None

    async def status_of(self, evaluation_id: str) -> str | None:
        async with self.engine.connect() as connection:
            result = await connection.execute(
                sa.select(evaluations.c.status).where(evaluations.c.id == evaluation_id)
            )
            return result.scalar_one_or_none()

    async def list_page(
        self,
        *,
        status: str | None = None,
        task: str | None = None,
        model: str | None = None,
        dataset_id: str | None = None,
        limit: int = 20,
        offset: int = 0,
    ) -> tuple[list[EvaluationRow], int]:
        conditions = []
        if status:
            conditions.append(evaluations.c.status == status)
        if task:
            conditions.append(evaluations.c.task == task)
        if dataset_id:
            conditions.append(evaluations.c.dataset_id == dataset_id)
        if model:
            conditions.append(self._asks(model))
        # a page shows statuses, not results
        query = (
            sa.select(*_evaluation_columns(results=False))
            .where(*conditions)
            # the id breaks ties of jobs created at the same time, so pages neither skip nor
            # repeat one
            .order_by(evaluations.c.created_at.desc(), evaluations.c.id.desc())
        )
        count = sa.select(sa.func.count()).select_from(evaluations).where(*conditions)
        async with self.engine.connect() as connection:
            total = (await connection.execute(count)).scalar_one()
            page = await connection.execute(query.limit(limit).offset(offset))
            return [_evaluation(row) for row in page.mappings()], total

    def _asks(self, model: str) -> sa.ColumnElement[bool]:
        """Whether an evaluation's models (a JSON list) name ``model``, in the database."""
        if self.engine.dialect.name == "postgresql":
            return sa.cast(evaluations.c.models, JSONB).contains([model])
        entries = sa.func.json_each(evaluations.c.models).table_valued("value")
        return sa.exists(sa.select(1).select_from(entries).where(entries.c.value == model))

    async def active(self, limit: int) -> list[str]:
        """Jobs to work on: queued or running, and not being finalised by a worker (whose
        evaluation lease holds; a run would only reload its items to find nothing to do)."""
        query = (
            sa.select(evaluations.c.id)
            .where(
                evaluations.c.status.in_(ACTIVE),
                sa.or_(
                    evaluations.c.lease_until.is_(None), evaluations.c.lease_until < time.time()
                ),
            )
            .order_by(evaluations.c.created_at)
            .limit(limit)
        )
        async with self.engine.connect() as connection:
            return list((await connection.execute(query)).scalars())

    async def mark_running(self, evaluation_id: str) -> None:
        async with self.engine.begin() as connection:
            await connection.execute(
                evaluations.update()
                .where(evaluations.c.id == evaluation_id, evaluations.c.status == "queued")
                .values(status="running", started_at=time.time())
            )

    async def cancel(self, evaluation_id: str) -> bool:
        """Cancel a queued or running job; False when it had already finished."""
        async with self.engine.begin() as connection:
            result = await connection.execute(
                evaluations.update()
                .where(evaluations.c.id == evaluation_id, evaluations.c.status.in_(ACTIVE))
                .values(status="cancelled", finished_at=time.time(), message="cancelled")
            )
        return bool(result.rowcount)

    async def retry_failed(self, evaluation_id: str, finished_as: str) -> int:
        """The failed parts of a job that finished as ``finished_as``, put back to work with
        their attempts counted anew (an answer that failed at grading is graded again, not asked
        again), and the job queued again; how many parts. 0 when none had failed, or the job is
        no longer as read (another retry or a worker came first): then nothing changes."""
        again = {"error": None, "attempts": 0, "unreachable_attempts": 0, "next_attempt_at": 0.0}
        failed_items = sa.and_(
            evaluation_items.c.evaluation_id == evaluation_id,
            evaluation_items.c.status == "failed",
        )
        failed_answers = sa.and_(
            answers.c.evaluation_id == evaluation_id, answers.c.status == "failed"
        )
        async with self.engine.begin() as connection:
            queued = await connection.execute(
                evaluations.update()
                .where(evaluations.c.id == evaluation_id, evaluations.c.status == finished_as)
                .values(
                    status="queued",
                    results=None,
                    message=None,
                    finished_at=None,
                    lease_owner=None,
                    lease_until=None,
                )
            )
            if queued.rowcount != 1:
                return 0
            parts = 0
            for statement in (
                evaluation_items.update().where(failed_items).values(status="pending", **again),
                answers.update()
                .where(failed_answers, answers.c.text.is_not(None))
                .values(status="answered", error_stage=None, **again),
                answers.update()
                .where(failed_answers, answers.c.text.is_(None))
                .values(status="pending", error_stage=None, **again),
            ):
                parts += (await connection.execute(statement)).rowcount
            if parts == 0:  # nothing failed: the job stays as it finished
                await connection.rollback()
        return parts

    async def lease_evaluation(self, evaluation_id: str, owner: str) -> bool:
        """Take the job's own lease (to finalise it, or to fail one that cannot be run, even
        before it started); only one worker holds it at a time."""
        now = time.time()
        async with self.engine.begin() as connection:
            result = await connection.execute(
                evaluations.update()
                .where(
                    evaluations.c.id == evaluation_id,
                    evaluations.c.status.in_(ACTIVE),
                    sa.or_(
                        evaluations.c.lease_until.is_(None),
                        evaluations.c.lease_until < now,
                        evaluations.c.lease_owner == owner,
                    ),
                )
                .values(lease_owner=owner, lease_until=now + self.lease_s)
            )
        return bool(result.rowcount)

    async def release_evaluation(self, evaluation_id: str, owner: str) -> None:
        async with self.engine.begin() as connection:
            await connection.execute(
                evaluations.update()
                .where(evaluations.c.id == evaluation_id, evaluations.c.lease_owner == owner)
                .values(lease_owner=None, lease_until=None)
            )

    async def finish(
        self, evaluation_id: str, owner: str, status: str, results: Any, message: str | None
    ) -> bool:
        async with self.engine.begin() as connection:
            result = await connection.execute(
                evaluations.update()
                .where(
                    evaluations.c.id == evaluation_id,
                    evaluations.c.status.in_(ACTIVE),
                    evaluations.c.lease_owner == owner,
                )
                .values(
                    status=status,
                    results=msgspec.to_builtins(results),
                    message=message,
                    finished_at=time.time(),
                    lease_owner=None,
                    lease_until=None,
                )
            )
        return bool(result.rowcount)

    async def release_all_leases(self) -> None:
        """At start-up on SQLite (one process owns the file): leases of a killed run are void."""
        async with self.engine.begin() as connection:
            for table in (evaluations, evaluation_items, answers):
                await connection.execute(
                    table.update()
                    .where(table.c.lease_owner.is_not(None))
                    .values(lease_owner=None, lease_until=None)
                )

    # ---- retention ----------------------------------------------------------------------

    async def purge_finished_before(
        self, cutoff: float, *, batch: int = 10, chunk: int = PURGE_CHUNK
    ) -> int:
        """Delete the evaluations that finished before ``cutoff`` with their items and answers,
        ``batch`` evaluations at a time, their rows ``chunk`` per transaction (an evaluation
        being deleted may show part of its answers for a moment); returns how many. One pass
        in id order: rows another transaction holds (another replica's sweep) are left to the
        next sweep instead of being asked for again and again."""
        finished = (evaluations.c.status.in_(TERMINAL), evaluations.c.finished_at < cutoff)
        deleted = 0
        last: str | None = None
        while True:
            after = () if last is None else (evaluations.c.id > last,)
            query = (
                sa.select(evaluations.c.id)
                .where(*finished, *after)
                .order_by(evaluations.c.id)
                .limit(batch)
            )
            async with self.engine.connect() as connection:
                ids = list(await connection.scalars(query))
            if not ids:
                return deleted
            last = ids[-1]
            for table in (answers, evaluation_items):
                await delete_in_chunks(
                    self.engine, table.c.id, table.c.evaluation_id.in_(ids), chunk=chunk
                )
            deleted += await delete_in_chunks(
                self.engine, evaluations.c.id, evaluations.c.id.in_(ids), *finished, chunk=batch
            )

    async def purge_unused_sets_before(self, cutoff: float, *, chunk: int = PURGE_CHUNK) -> int:
        """Delete the paraphrase sets no evaluation's item uses that no evaluation took since
        ``cutoff``; returns how many."""
        used = sa.exists().where(evaluation_items.c.paraphrase_set_id == paraphrase_sets.c.id)
        last_taken = sa.func.coalesce(paraphrase_sets.c.used_at, paraphrase_sets.c.created_at)
        return await delete_in_chunks(
            self.engine, paraphrase_sets.c.id, last_taken < cutoff, ~used, chunk=chunk
        )

    # ---- claiming work ------------------------------------------------------------------

    async def _claim(
        self, table: sa.Table, conditions: list[Any], order: Sequence[Any], owner: str, n: int
    ) -> list[RowMapping]:
        now = time.time()
        claimable = [
            *conditions,
            table.c.next_attempt_at <= now,
            sa.or_(table.c.lease_until.is_(None), table.c.lease_until < now),
        ]
        chosen = (
            sa.select(table.c.id)
            .where(*claimable)
            .order_by(*order)
            .limit(n)
            .with_for_update(skip_locked=True)
            .scalar_subquery()
        )
        # one statement: pick and lease (PostgreSQL skips rows another evaluator is leasing)
        claim = (
            table.update()
            .where(table.c.id.in_(chosen))
            .values(lease_owner=owner, lease_until=now + self.lease_s)
            .returning(*table.c)
        )
        async with self._claim_lock, self.engine.begin() as connection:
            rows = list((await connection.execute(claim)).mappings())
        return sorted(rows, key=lambda row: tuple(row[column.key] for column in order))

    async def claim_items(self, evaluation_id: str, owner: str, n: int) -> list[ItemRow]:
        rows = await self._claim(
            evaluation_items,
            [
                evaluation_items.c.evaluation_id == evaluation_id,
                evaluation_items.c.status == "pending",
            ],
            [evaluation_items.c.position],
            owner,
            n,
        )
        return [_item(row) for row in rows]

    async def claim_answers(self, evaluation_id: str, owner: str, n: int) -> list[AnswerRow]:
        rows = await self._claim(
            answers,
            [answers.c.evaluation_id == evaluation_id, OPEN_ANSWER],
            [answers.c.position, answers.c.variant, answers.c.model],
            owner,
            n,
        )
        return [
            AnswerRow(row["id"], _answer_record(row), row["attempts"], row["unreachable_attempts"])
            for row in rows
        ]

    async def renew(self, table_name: str, ids: Iterable[int | str], owner: str) -> None:
        table = {"answers": answers, "items": evaluation_items, "evaluations": evaluations}[
            table_name
        ]
        async with self.engine.begin() as connection:
            await connection.execute(
                table.update()
                .where(table.c.id.in_(list(ids)), table.c.lease_owner == owner)
                .values(lease_until=time.time() + self.lease_s)
            )

    async def has_pending_items(self, evaluation_id: str) -> bool:
        async with self.engine.connect() as connection:
            items_open = await connection.execute(
                sa.select(evaluation_items.c.id)
                .where(
                    evaluation_items.c.evaluation_id == evaluation_id,
                    evaluation_items.c.status == "pending",
                )
                .limit(1)
            )
            return items_open.first() is not None

    async def has_open_work(self, evaluation_id: str) -> bool:
        if await self.has_pending_items(evaluation_id):
            return True
        async with self.engine.connect() as connection:
            answers_open = await connection.execute(
                sa.select(answers.c.id)
                .where(answers.c.evaluation_id == evaluation_id, OPEN_ANSWER)
                .limit(1)
            )
            return answers_open.first() is not None

    # ---- results of work ----------------------------------------------------------------

    async def complete_item(
        self,
        evaluation_id: str,
        item: ItemRow,
        owner: str,
        paraphrase_set: ParaphraseSet,
        models: list[str],
        settings: EvaluationSettings,
        note: str | None,
    ) -> bool:
        """Store the item's paraphrase set and queue its paraphrases for answering."""
        async with self.engine.begin() as connection:
            set_id = await self._save_set(connection, paraphrase_set)
            updated = await connection.execute(
                evaluation_items.update()
                .where(
                    evaluation_items.c.id == item.row_id,
                    evaluation_items.c.lease_owner == owner,
                    evaluation_items.c.status == "pending",
                )
                .values(
                    status="done",
                    paraphrase_set_id=set_id,
                    error=note,
                    lease_owner=None,
                    lease_until=None,
                )
            )
            if not updated.rowcount:
                return False
            prompts = [(i + 1, p.text) for i, p in enumerate(paraphrase_set.paraphrases)]
            rows = _answer_rows(
                evaluation_id, item.position, models, prompts, settings, item.item, item.asked_in
            )
            if rows:
                grade_keys = _grade_keys(settings, {item.position: item.item})
                await self._insert_answers(connection, evaluation_id, rows, grade_keys, settings)
        return True

    async def _insert_answers(
        self,
        connection: AsyncConnection,
        evaluation_id: str,
        rows: list[dict[str, Any]],
        grade_key_of: GradeKeys,
        settings: EvaluationSettings,
    ) -> None:
        """Insert pending answers; those whose exact request was answered before take that
        answer at once (the gateway would serve it from its cache anyway), and its label too
        when the same answer was graded the same way before (or is final: no gold answer) —
        unless the evaluation asks for fresh answers (a monitor's run: a changed model must
        show)."""
        if not settings.fresh_answers:
            await self._reuse_answers(connection, evaluation_id, rows)
        await self._reuse_grades(connection, rows, grade_key_of)
        await connection.execute(answers.insert(), rows)

    async def _reuse_answers(
        self, connection: AsyncConnection, evaluation_id: str, rows: list[dict[str, Any]]
    ) -> None:
        keys = sorted({row["request_key"] for row in rows})
        known = await connection.execute(
            sa.select(answers.c.request_key, answers.c.text, answers.c.value)
            .where(
                answers.c.request_key.in_(keys),
                answers.c.text.is_not(None),
                answers.c.evaluation_id != evaluation_id,
            )
            .order_by(answers.c.id)
        )
        earlier: dict[str, tuple[str, str | None]] = {}
        for key, text, value in known:
            earlier.setdefault(key, (text, value))
        now = time.time()
        for row in rows:
            if row["request_key"] in earlier:
                text, value = earlier[row["request_key"]]
                row.update(text=text, value=value, cached=True, status="answered", answered_at=now)

    @staticmethod
    async def _reuse_grades(
        connection: AsyncConnection, rows: list[dict[str, Any]], grade_key_of: GradeKeys
    ) -> None:
        answered = [row for row in rows if row["status"] == "answered"]
        for row in answered:
            row["grade_key"] = grade_key_of(row["position"], row["text"])
            if row["grade_key"] is None:  # no gold answer: nothing to grade
                row.update(status="graded", label=None)
        keys = sorted({row["grade_key"] for row in answered if row["grade_key"] is not None})
        if not keys:
            return
        known = await connection.execute(
            sa.select(answers.c.grade_key, answers.c.label).where(
                answers.c.grade_key.in_(keys),
                answers.c.status == "graded",
                answers.c.label.is_not(None),
            )
        )
        labels = {key: label for key, label in known}
        for row in answered:
            if row["grade_key"] in labels:
                row.update(status="graded", label=labels[row["grade_key"]])

    async def _take_sets(
        self, connection: AsyncConnection, sets: dict[str, ParaphraseSet]
    ) -> dict[str, ParaphraseSet]:
        """The stored sets an evaluation is about to use (by question), marked as taken now; on
        PostgreSQL the update also holds them against a concurrent retention sweep until the
        transaction ends. A set the sweep deleted meanwhile is left out: its question gets a
        set made anew."""
        ids = sorted({paraphrase_set.id for paraphrase_set in sets.values()})
        kept: set[str] = set()
        for chunk in _chunks(ids, 1000):
            kept |= await self._take(connection, chunk)
        return {question: s for question, s in sets.items() if s.id in kept}

    @staticmethod
    async def _take(connection: AsyncConnection, ids: Sequence[str]) -> set[str]:
        """Mark the sets ``ids`` taken now; returns those stored."""
        chosen = paraphrase_sets.c.id.in_(ids)
        await connection.execute(paraphrase_sets.update().where(chosen).values(used_at=time.time()))
        return set(await connection.scalars(sa.select(paraphrase_sets.c.id).where(chosen)))

    async def _save_set(self, connection: AsyncConnection, paraphrase_set: ParaphraseSet) -> str:
        """Store a set and return the id it is stored under. A set regenerated with the same
        settings (same id) replaces the stored one only when it extends it, paraphrase for
        paraphrase: evaluations answered the stored one by position. Another regeneration (a
        time budget that ended elsewhere) is stored beside it, under an id of its own."""
        values = _set_values(paraphrase_set)
        insert = sqlite_insert if self.sqlite else postgresql_insert
        # taken first: a retention sweep cannot delete the stored set under this transaction
        await self._take(connection, [paraphrase_set.id])
        await connection.execute(insert(paraphrase_sets).values(**values).on_conflict_do_nothing())
        stored = await connection.scalar(
            sa.select(paraphrase_sets.c.paraphrases).where(
                paraphrase_sets.c.id == paraphrase_set.id
            )
        )
        old, new = _texts(stored), _texts(values["paraphrases"])
        if new == old:
            return paraphrase_set.id
        if new[: len(old)] == old:
            await connection.execute(
                paraphrase_sets.update()
                .where(paraphrase_sets.c.id == paraphrase_set.id)
                .values(**{key: value for key, value in values.items() if key != "id"})
            )
            return paraphrase_set.id
        digest = hashlib.sha256(msgspec.json.encode(new)).hexdigest()[:8]
        own_id = f"{paraphrase_set.id}-{digest}"
        await self._take(connection, [own_id])
        await connection.execute(
            insert(paraphrase_sets).values(**{**values, "id": own_id}).on_conflict_do_nothing()
        )
        return own_id

    async def fail_item(self, item: ItemRow, owner: str, failure: Failure) -> None:
        values: dict[str, Any] = {
            "error": failure.reason,
            **_counted(failure, item.attempts, item.unreachable_attempts),
            "lease_owner": None,
            "lease_until": None,
        }
        if failure.retry_at is None:
            values["status"] = "failed"
        else:
            values["next_attempt_at"] = failure.retry_at
        async with self.engine.begin() as connection:
            await connection.execute(
                evaluation_items.update()
                .where(
                    evaluation_items.c.id == item.row_id, evaluation_items.c.lease_owner == owner
                )
                .values(**values)
            )

    async def store_answers(self, owner: str, stored: list[StoredAnswer]) -> None:
        """Persist answers as they arrive; the ones still to be graded stay leased, with a
        fresh count of attempts: the answer stage's failures are not the grade stage's."""
        now = time.time()
        params = [
            {
                "row_id": answer.row_id,
                "owner": owner,
                "text": answer.text,
                "value": answer.value,
                "cached": answer.cached,
                "new_status": "graded" if answer.final else "answered",
                "answered_at": now,
                "new_owner": None if answer.final else owner,
            }
            for answer in stored
        ]
        statement = (
            answers.update()
            .where(
                answers.c.id == sa.bindparam("row_id"),
                answers.c.lease_owner == sa.bindparam("owner"),
                answers.c.status == "pending",
            )
            .values(
                text=sa.bindparam("text"),
                value=sa.bindparam("value"),
                cached=sa.bindparam("cached"),
                status=sa.bindparam("new_status"),
                answered_at=sa.bindparam("answered_at"),
                lease_owner=sa.bindparam("new_owner"),
                error=None,
                attempts=0,
                unreachable_attempts=0,
            )
        )
        await self._executemany(statement, params)

    async def store_grades(self, owner: str, grades: list[StoredGrade]) -> None:
        params = [
            {"row_id": g.row_id, "owner": owner, "label": g.label, "grade_key": g.grade_key}
            for g in grades
        ]
        statement = (
            answers.update()
            .where(
                answers.c.id == sa.bindparam("row_id"),
                answers.c.lease_owner == sa.bindparam("owner"),
                answers.c.status == "answered",
            )
            .values(
                label=sa.bindparam("label"),
                grade_key=sa.bindparam("grade_key"),
                status="graded",
                error=None,
                lease_owner=None,
                lease_until=None,
            )
        )
        await self._executemany(statement, params)

    async def fail_answers(
        self, owner: str, failures: list[Failure], rows: dict[int, AnswerRow]
    ) -> None:
        """Record failed attempts: retried later at ``retry_at``, or given up (``failed``)."""
        params = [
            {
                "row_id": f.row_id,
                "owner": owner,
                "error": f.reason,
                "error_stage": f.stage,
                **_counted(f, rows[f.row_id].attempts, rows[f.row_id].unreachable_attempts),
                "next_attempt_at": f.retry_at or 0.0,
                "claimed_status": rows[f.row_id].record.status,
                "new_status": "failed" if f.retry_at is None else rows[f.row_id].record.status,
            }
            for f in failures
        ]
        statement = (
            answers.update()
            .where(
                answers.c.id == sa.bindparam("row_id"),
                answers.c.lease_owner == sa.bindparam("owner"),
                # a row another lane of this worker has moved on meanwhile keeps its progress
                answers.c.status == sa.bindparam("claimed_status"),
            )
            .values(
                error=sa.bindparam("error"),
                error_stage=sa.bindparam("error_stage"),
                attempts=sa.bindparam("attempts"),
                unreachable_attempts=sa.bindparam("unreachable_attempts"),
                next_attempt_at=sa.bindparam("next_attempt_at"),
                status=sa.bindparam("new_status"),
                lease_owner=None,
                lease_until=None,
            )
        )
        await self._executemany(statement, params)

    async def _executemany(self, statement: Any, params: list[dict[str, Any]]) -> None:
        """One statement per row, in row id order: the order a lease renewal locks them in, so
        two transactions never wait for each other's rows (a deadlock on PostgreSQL)."""
        if params:
            async with self.engine.begin() as connection:
                await connection.execute(statement, sorted(params, key=lambda p: p["row_id"]))

    # ---- reading results ----------------------------------------------------------------

    async def items(
        self, evaluation_id: str, offset: int = 0, limit: int | None = None
    ) -> list[ItemRow]:
        query = (
            sa.select(evaluation_items)
            .where(evaluation_items.c.evaluation_id == evaluation_id)
            .order_by(evaluation_items.c.position)
            .offset(offset)
        )
        if limit is not None:
            query = query.limit(limit)
        async with self.engine.connect() as connection:
            return [_item(row) for row in (await connection.execute(query)).mappings()]

    async def answers_of(
        self, evaluation_id: str, positions: Sequence[int] | None = None
    ) -> list[AnswerRecord]:
        query = sa.select(answers).where(answers.c.evaluation_id == evaluation_id)
        if positions is not None:
            query = query.where(answers.c.position.in_(list(positions)))
        query = query.order_by(answers.c.position, answers.c.variant, answers.c.model)
        async with self.engine.connect() as connection:
            return [_answer_record(row) for row in (await connection.execute(query)).mappings()]

    async def paraphrase_sets(self, ids: Iterable[str]) -> dict[str, ParaphraseSet]:
        wanted = sorted(set(ids))
        if not wanted:
            return {}
        async with self.engine.connect() as connection:
            rows = (
                await connection.execute(
                    sa.select(paraphrase_sets).where(paraphrase_sets.c.id.in_(wanted))
                )
            ).mappings()
            return {row["id"]: _paraphrase_set(row) for row in rows}

    async def sets_by_question(self, evaluation_id: str) -> dict[str, ParaphraseSet]:
        """The paraphrase sets an earlier evaluation generated, keyed by question text."""
        rows = await self.items(evaluation_id)
        sets = await self.paraphrase_sets(r.paraphrase_set_id for r in rows if r.paraphrase_set_id)
        return {
            row.item.question: sets[row.paraphrase_set_id]
            for row in rows
            if row.paraphrase_set_id in sets
        }

    async def progress_counts(self, evaluation_id: str) -> dict[str, dict[str, int]]:
        """``{"items": {status: n}, "answers": {status or failed_<stage>: n}}``."""
        return (await self.progress_counts_of([evaluation_id]))[evaluation_id]

    async def progress_counts_of(self, ids: list[str]) -> dict[str, dict[str, dict[str, int]]]:
        """:meth:`progress_counts` of several evaluations in two queries (a list page)."""
        counts: dict[str, dict[str, dict[str, int]]] = {
            evaluation_id: {"items": {}, "answers": {}} for evaluation_id in ids
        }
        async with self.engine.connect() as connection:
            item_counts = await connection.execute(
                sa.select(
                    evaluation_items.c.evaluation_id, evaluation_items.c.status, sa.func.count()
                )
                .where(evaluation_items.c.evaluation_id.in_(ids))
                .group_by(evaluation_items.c.evaluation_id, evaluation_items.c.status)
            )
            for evaluation_id, status, n in item_counts:
                counts[evaluation_id]["items"][status] = n
            answer_counts = await connection.execute(
                sa.select(
                    answers.c.evaluation_id,
                    answers.c.status,
                    answers.c.error_stage,
                    sa.func.count(),
                )
                .where(answers.c.evaluation_id.in_(ids))
                .group_by(answers.c.evaluation_id, answers.c.status, answers.c.error_stage)
            )
            for evaluation_id, status, stage, n in answer_counts:
                key = f"failed_{stage or 'answer'}" if status == "failed" else status
                by_status = counts[evaluation_id]["answers"]
                by_status[key] = by_status.get(key, 0) + n
        return counts

    async def error_counts(self, ids: list[str]) -> dict[str, int]:
        """Recorded failures (failed paraphrase sets and answers) per evaluation."""
        totals = dict.fromkeys(ids, 0)
        async with self.engine.connect() as connection:
            for query in (
                sa.select(evaluation_items.c.evaluation_id, sa.func.count())
                .where(
                    evaluation_items.c.evaluation_id.in_(ids),
                    evaluation_items.c.error.is_not(None),
                )
                .group_by(evaluation_items.c.evaluation_id),
                sa.select(answers.c.evaluation_id, sa.func.count())
                .where(answers.c.evaluation_id.in_(ids), answers.c.status == "failed")
                .group_by(answers.c.evaluation_id),
            ):
                for evaluation_id, n in await connection.execute(query):
                    totals[evaluation_id] += n
        return totals

    async def errors(self, evaluation_id: str, limit: int) -> tuple[list[ItemError], int]:
        """The first ``limit`` failures (paraphrase stage first, then answers) and their count;
        only those shown are read, so a status poll of a job with many failures stays cheap."""
        item_where = sa.and_(
            evaluation_items.c.evaluation_id == evaluation_id,
            evaluation_items.c.error.is_not(None),
        )
        answer_where = sa.and_(
            answers.c.evaluation_id == evaluation_id, answers.c.status == "failed"
        )
        async with self.engine.connect() as connection:
            item_count = (
                await connection.execute(
                    sa.select(sa.func.count()).select_from(evaluation_items).where(item_where)
                )
            ).scalar_one()
            answer_count = (
                await connection.execute(
                    sa.select(sa.func.count()).select_from(answers).where(answer_where)
                )
            ).scalar_one()
            item_errors = (
                await connection.execute(
                    sa.select(evaluation_items.c.item_id, evaluation_items.c.error)
                    .where(item_where)
                    .order_by(evaluation_items.c.position)
                    .limit(limit)
                )
            ).all()
            answer_errors = (
                await connection.execute(
                    sa.select(
                        evaluation_items.c.item_id,
                        answers.c.model,
                        answers.c.variant,
                        answers.c.error,
                        answers.c.error_stage,
                    )
                    .join(
                        evaluation_items,
                        sa.and_(
                            evaluation_items.c.evaluation_id == answers.c.evaluation_id,
                            evaluation_items.c.position == answers.c.position,
                        ),
                    )
                    .where(answer_where)
                    .order_by(answers.c.position, answers.c.variant)
                    .limit(max(0, limit - len(item_errors)))
                )
            ).all()
        errors = [ItemError(item_id=i, stage="paraphrase", reason=e) for i, e in item_errors]
        errors += [
            ItemError(
                item_id=i,
                stage="grade" if stage == "grade" else "answer",
                reason=error or "failed",
                model=model,
                variant=variant,
            )
            for i, model, variant, error, stage in answer_errors
        ]
        return errors, item_count + answer_count


def _chunks(rows: list[T], size: int) -> Iterable[list[T]]:
    for start in range(0, len(rows), size):
        yield rows[start : start + size]
