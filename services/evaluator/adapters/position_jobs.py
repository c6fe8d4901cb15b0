"""Position-bias jobs in the database: the request and, when finished, the result, as JSON.

A worker claims a queued job (or one whose lease expired: its worker stopped) by leasing it,
renews the lease while it runs, and is the only one that may finish it."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from typing import TypeVar

import msgspec
import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from steadfast.services.evaluator.db.models import position_jobs
from steadfast.services.evaluator.errors import IdempotencyConflict
from steadfast.shared.contracts.position import (
    PositionBiasEvaluate,
    PositionBiasEvaluation,
    PositionJobStatus,
)
from steadfast.shared.db import delete_in_chunks
from steadfast.shared.tenancy import DEFAULT_TENANT, UNRESTRICTED, Tenancy, visible

T = TypeVar("T")

#: what an Idempotency-Key of this store made, as a conflict names it
KIND = "position-bias job"


@dataclass(frozen=True)
class PositionJobRow:
    """A stored position-bias job: its request, status, how often it was claimed and, once
    finished, its result or error."""

    id: str
    status: PositionJobStatus
    #: None when the stored JSON no longer decodes (``unreadable`` says why)
    request: PositionBiasEvaluate | None
    order_count: int
    result: PositionBiasEvaluation | None
    error: str | None
    attempts: int
    created_at: float
    started_at: float | None
    finished_at: float | None
    unreadable: str | None = None


class PositionJobStore:
    """Position-bias jobs in the database: created (idempotently), claimed and renewed under a
    lease, finished, cancelled and purged."""

    def __init__(self, engine: AsyncEngine, *, lease_s: float = 30.0) -> None:
        self.engine = engine
        self.lease_s = lease_s

    async def create(
        self,
        request: PositionBiasEvaluate,
        order_count: int,
        *,
        idempotency_key: str | None = None,
        request_hash: str | None = None,
        tenant: str = DEFAULT_TENANT,
        api_key_id: str | None = None,
    ) -> PositionJobRow:
        """A queued job of ``tenant``. An ``idempotency_key`` that tenant sent before returns
        the job it created, if ``request_hash`` (the fingerprint of the request as sent) is the
        one stored with it; else :class:`IdempotencyConflict`."""
        if idempotency_key and (earlier := await self._by_key(idempotency_key, tenant)):
            return await self._same_request(earlier, request_hash)
        job_id = f"pb-{uuid.uuid4().hex[:20]}"
        values = {
            "id": job_id,
            "status": "queued",
            "request": msgspec.json.encode(request).decode(),
            "order_count": order_count,
            "attempts": 0,
            "created_at": time.time(),
            "idempotency_key": idempotency_key,
            "request_hash": request_hash,
            "tenant": tenant,
            "api_key_id": api_key_id,
        }
        try:
            async with self.engine.begin() as connection:
                await connection.execute(position_jobs.insert().values(**values))
        except IntegrityError:  # the same key, sent twice at once: the first one made the job
            earlier = await self._by_key(idempotency_key, tenant) if idempotency_key else None
            if earlier is None:
                raise
            return await self._same_request(earlier, request_hash)
        job = await self.get(job_id)
        assert job is not None
        return job

    async def _by_key(self, idempotency_key: str, tenant: str) -> tuple[str, str | None] | None:
        """The id and request hash of the job ``tenant`` created with this key."""
        query = sa.select(position_jobs.c.id, position_jobs.c.request_hash).where(
            position_jobs.c.idempotency_key == idempotency_key, position_jobs.c.tenant == tenant
        )
        async with self.engine.connect() as connection:
            row = (await connection.execute(query)).first()
        return (row[0], row[1]) if row is not None else None

    async def _same_request(
        self, earlier: tuple[str, str | None], request_hash: str | None
    ) -> PositionJobRow:
        job_id, stored_hash = earlier
        if stored_hash != request_hash:
            raise IdempotencyConflict(job_id, KIND)
        job = await self.get(job_id)
        assert job is not None
        return job

    async def get(self, job_id: str, tenancy: Tenancy = UNRESTRICTED) -> PositionJobRow | None:
        """The job; None for one ``tenancy`` does not see (another tenant's)."""
        query = sa.select(position_jobs).where(
            position_jobs.c.id == job_id, visible(position_jobs.c.tenant, tenancy)
        )
        async with self.engine.connect() as connection:
            row = (await connection.execute(query)).mappings().first()
        return _job(row) if row is not None else None

    async def claim(self, owner: str) -> PositionJobRow | None:
        """Lease the oldest job that is queued or whose worker's lease ran out."""
        now = time.time()
        claimable = sa.or_(
            position_jobs.c.status == "queued",
            sa.and_(position_jobs.c.status == "running", position_jobs.c.lease_until < now),
        )
        oldest = sa.select(position_jobs.c.id).where(claimable).order_by(position_jobs.c.created_at)
        async with self.engine.connect() as connection:  # an idle poll only reads
            if (await connection.execute(oldest.limit(1))).first() is None:
                return None
        pick = oldest.limit(1).with_for_update(skip_locked=True).scalar_subquery()
        # one statement: pick and lease (PostgreSQL skips a row another evaluator is leasing)
        statement = (
            position_jobs.update()
            .where(position_jobs.c.id == pick, claimable)
            .values(
                status="running",
                lease_owner=owner,
                lease_until=now + self.lease_s,
                attempts=position_jobs.c.attempts + 1,
                started_at=sa.func.coalesce(position_jobs.c.started_at, now),
            )
            .returning(position_jobs.c.id)
        )
        async with self.engine.begin() as connection:
            claimed = (await connection.execute(statement)).scalar_one_or_none()
        return await self.get(claimed) if claimed is not None else None

    async def renew(self, job_id: str, owner: str) -> bool:
        """Extend the lease; False when the job is no longer this worker's."""
        statement = (
            position_jobs.update()
            .where(position_jobs.c.id == job_id, position_jobs.c.lease_owner == owner)
            .values(lease_until=time.time() + self.lease_s)
        )
        async with self.engine.begin() as connection:
            return bool((await connection.execute(statement)).rowcount)

    async def release(self, job_id: str, owner: str) -> None:
        """A stopping worker's job, free for the next claim at once, its attempt given back: a
        graceful stop is not a worker that died (each of those counts towards giving up)."""
        statement = (
            position_jobs.update()
            .where(
                position_jobs.c.id == job_id,
                position_jobs.c.lease_owner == owner,
                position_jobs.c.status == "running",
            )
            .values(
                lease_until=0.0,
                attempts=sa.case(
                    (position_jobs.c.attempts > 0, position_jobs.c.attempts - 1), else_=0
                ),
            )
        )
        async with self.engine.begin() as connection:
            await connection.execute(statement)

    async def finish(
        self,
        job_id: str,
        owner: str,
        *,
        result: PositionBiasEvaluation | None = None,
        error: str | None = None,
    ) -> bool:
        """Store the outcome, if the job is still this worker's."""
        statement = (
            position_jobs.update()
            .where(position_jobs.c.id == job_id, position_jobs.c.lease_owner == owner)
            .values(
                status="failed" if result is None else "succeeded",
                result=msgspec.json.encode(result).decode() if result is not None else None,
                error=error,
                finished_at=time.time(),
                lease_owner=None,
                lease_until=None,
            )
        )
        async with self.engine.begin() as connection:
            return bool((await connection.execute(statement)).rowcount)

    async def cancel(self, job_id: str) -> bool:
        """Cancel a queued or running job; False when it had finished. Its worker's lease is
        gone with it, so the worker stops at its next renewal and stores nothing."""
        statement = (
            position_jobs.update()
            .where(position_jobs.c.id == job_id, position_jobs.c.status.in_(("queued", "running")))
            .values(
                status="cancelled",
                error="cancelled",
                finished_at=time.time(),
                lease_owner=None,
                lease_until=None,
            )
        )
        async with self.engine.begin() as connection:
            return bool((await connection.execute(statement)).rowcount)

    async def purge_finished_before(self, cutoff: float) -> int:
        """Delete the jobs that finished before ``cutoff``; returns how many."""
        finished = position_jobs.c.status.not_in(("queued", "running"))
        old = position_jobs.c.finished_at < cutoff
        return await delete_in_chunks(self.engine, position_jobs.c.id, finished, old, chunk=500)

    async def release_all_leases(self) -> None:
        """At start-up on SQLite (one process owns the file): a killed run's jobs are free."""
        statement = (
            position_jobs.update()
            .where(position_jobs.c.status == "running")
            .values(lease_until=0.0)
        )
        async with self.engine.begin() as connection:
            await connection.execute(statement)


def _job(row: sa.RowMapping) -> PositionJobRow:
    """The row as a job; JSON that no longer decodes (a contract changed since it was stored)
    makes a job that fails with the reason instead of an error on every read."""
    request, unreadable = _decoded(row["request"], PositionBiasEvaluate)
    result, result_unreadable = _decoded(row["result"], PositionBiasEvaluation)
    status, error = row["status"], row["error"]
    if result_unreadable:
        status, error = "failed", f"the stored result is unreadable: {result_unreadable}"
    return PositionJobRow(
        id=row["id"],
        status=status,
        request=request,
        order_count=row["order_count"],
        result=result,
        error=error,
        attempts=row["attempts"],
        created_at=row["created_at"],
        started_at=row["started_at"],
        finished_at=row["finished_at"],
        unreadable=unreadable,
    )


def _decoded(text: str | None, kind: type[T]) -> tuple[T | None, str | None]:
    if not text:
        return None, None
    try:
        return msgspec.json.decode(text, type=kind), None
    except (msgspec.DecodeError, msgspec.ValidationError) as error:
        return None, str(error)
