"""An evaluation's life in the database: created (with its items and first answers), found,
listed, run, cancelled, retried, finished."""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections.abc import Collection
from typing import Any

import msgspec
import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from steadfast.services.evaluator.adapters.evaluations.answer_queue import queue_answers
from steadfast.services.evaluator.adapters.evaluations.base import StoreBase, chunks
from steadfast.services.evaluator.adapters.evaluations.paraphrase_sets import take_sets
from steadfast.services.evaluator.adapters.evaluations.rows import (
    ACTIVE,
    EvaluationRow,
    NewAnswers,
    NewItem,
    evaluation_columns,
    evaluation_of,
)
from steadfast.services.evaluator.db.models import answers, evaluation_items, evaluations
from steadfast.services.evaluator.errors import IdempotencyConflict
from steadfast.shared.contracts.evaluator import EvaluationSettings
from steadfast.shared.tenancy import DEFAULT_TENANT, UNRESTRICTED, Tenancy, visible

#: what an Idempotency-Key of this store made, as a conflict names it
KIND = "evaluation"


class EvaluationLifecycle(StoreBase):
    """Evaluations created, found, listed, started, cancelled, retried and finished."""

    async def create(
        self,
        *,
        settings: EvaluationSettings,
        items: list[NewItem],
        answers: NewAnswers,
        models: list[str],
        request_hash: str,
        earlier_hashes: Collection[str] = (),
        name: str | None = None,
        dataset_id: str | None = None,
        idempotency_key: str | None = None,
        tenant: str = DEFAULT_TENANT,
        api_key_id: str | None = None,
    ) -> tuple[EvaluationRow, bool]:
        """Create a queued job with its items and the answers to ask for at once (those to
        the paraphrases of a set an item reuses are left out when the set is gone); returns
        (job, created). An Idempotency-Key seen before returns the earlier job (or raises
        :class:`IdempotencyConflict` for a different request: one whose stored hash is neither
        ``request_hash`` nor one of ``earlier_hashes``, the same request's hash as earlier
        versions computed it). The job is ``tenant``'s, and its key is looked for among that
        tenant's only: another tenant's key of the same text is another key."""
        accepted = {request_hash, *earlier_hashes}
        if idempotency_key:
            existing = await self.by_idempotency_key(idempotency_key, tenant)
            if existing is not None:
                return _same_request(existing, accepted), False
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
                        tenant=tenant,
                        api_key_id=api_key_id,
                    )
                )
                await _insert_items(connection, evaluation_id, items, answers)
        except IntegrityError:
            existing = (
                await self.by_idempotency_key(idempotency_key, tenant) if idempotency_key else None
            )
            if existing is None:
                raise
            return _same_request(existing, accepted), False
        created = await self.get(evaluation_id)
        assert created is not None
        return created, True

    async def by_idempotency_key(
        self, key: str, tenant: str = DEFAULT_TENANT
    ) -> EvaluationRow | None:
        query = sa.select(evaluations).where(
            evaluations.c.idempotency_key == key, evaluations.c.tenant == tenant
        )
        async with self.engine.connect() as connection:
            row = (await connection.execute(query)).mappings().first()
        return evaluation_of(row) if row else None

    async def get(
        self, evaluation_id: str, *, results: bool = False, tenancy: Tenancy = UNRESTRICTED
    ) -> EvaluationRow | None:
        """The job; its results JSON (large for big jobs) only when asked for. None for one
        ``tenancy`` does not see (another tenant's)."""
        query = sa.select(*evaluation_columns(results)).where(
            evaluations.c.id == evaluation_id, visible(evaluations.c.tenant, tenancy)
        )
        async with self.engine.connect() as connection:
            row = (await connection.execute(query)).mappings().first()
        return evaluation_of(row) if row else None

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
        tenancy: Tenancy = UNRESTRICTED,
    ) -> tuple[list[EvaluationRow], int]:
        conditions = [visible(evaluations.c.tenant, tenancy)]
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
            sa.select(*evaluation_columns(results=False))
            .where(*conditions)
            # the id breaks ties of jobs created at the same time, so pages neither skip nor
            # repeat one
            .order_by(evaluations.c.created_at.desc(), evaluations.c.id.desc())
        )
        count = sa.select(sa.func.count()).select_from(evaluations).where(*conditions)
        async with self.engine.connect() as connection:
            total = (await connection.execute(count)).scalar_one()
            page = await connection.execute(query.limit(limit).offset(offset))
            return [evaluation_of(row) for row in page.mappings()], total

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

    async def finish(
        self, evaluation_id: str, owner: str, status: str, results: Any, message: str | None
    ) -> bool:
        """Record the job's outcome, if ``owner`` holds its lease (see ``lease_evaluation``)."""
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


def _same_request(existing: EvaluationRow, accepted: set[str]) -> EvaluationRow:
    if existing.request_hash not in accepted:
        raise IdempotencyConflict(existing.id, KIND)
    return existing


async def _insert_items(
    connection: AsyncConnection, evaluation_id: str, items: list[NewItem], queued: NewAnswers
) -> None:
    """The items and their first answers: the original question's, and those to the
    paraphrases of a set an item reuses, if the set is still stored (see ``take_sets``)."""
    kept = await take_sets(connection, [i.reused_set.id for i in items if i.reused_set])
    reused = {
        position: item.reused_set.id
        for position, item in enumerate(items)
        if item.reused_set and item.reused_set.id in kept
    }
    item_rows = [
        {
            "evaluation_id": evaluation_id,
            "position": position,
            "item_id": item.item_id,
            "item": msgspec.to_builtins(item.item),
            "status": "done" if position in reused else "pending",
            "paraphrase_set_id": reused.get(position),
            "language": item.language,
            "attempts": 0,
            "next_attempt_at": 0.0,
        }
        for position, item in enumerate(items)
    ]
    for chunk in chunks(item_rows, 500):
        await connection.execute(evaluation_items.insert(), chunk)
    pending = [a for a in queued.pending if a.variant == 0 or a.position in reused]
    await queue_answers(connection, evaluation_id, dataclasses.replace(queued, pending=pending))
