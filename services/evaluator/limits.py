"""The limits of a key on the evaluator's API: its concurrent jobs (queued or running
evaluations and position-bias jobs it made); requests per minute are the guard's
(``auth.require_api_key``, with ``shared.key_limits.KeyLimiter``)."""

from __future__ import annotations

import asyncio
import collections
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from litestar.connection import ASGIConnection
from sqlalchemy.ext.asyncio import AsyncEngine

from steadfast.services.evaluator.adapters.evaluations.rows import ACTIVE
from steadfast.services.evaluator.db.models import evaluations, position_jobs
from steadfast.shared.api_keys import KeyGrant
from steadfast.shared.key_limits import refused

#: the wait a refused job create is told (jobs take minutes; the caller need not poll faster)
JOBS_RETRY_AFTER_S = 30.0
JOB_TABLES = (evaluations, position_jobs)


def grant_of(connection: ASGIConnection[Any, Any, Any, Any]) -> KeyGrant | None:
    """The key the request came with; None in open local mode (no limits then)."""
    grant: KeyGrant | None = connection.state.get("api_key")
    return grant


@dataclass(frozen=True)
class KeyJobs:
    """The jobs each key has queued or running (both kinds), for its concurrent-jobs limit."""

    engine: AsyncEngine
    _locks: collections.defaultdict[str, asyncio.Lock] = field(
        default_factory=lambda: collections.defaultdict(asyncio.Lock)
    )

    async def active(self, key_id: str) -> int:
        counts = [
            sa.select(sa.func.count())
            .select_from(table)
            .where(table.c.api_key_id == key_id, table.c.status.in_(ACTIVE))
            .scalar_subquery()
            for table in JOB_TABLES
        ]
        async with self.engine.connect() as connection:
            return int(await connection.scalar(sa.select(counts[0] + counts[1])) or 0)

    async def made_with(self, key_id: str, idempotency_key: str) -> bool:
        """Whether this key made a job with this Idempotency-Key already (its retry is no new
        job); another key's, another tenant's above all, is no retry of this one's."""
        async with self.engine.connect() as connection:
            for table in JOB_TABLES:
                query = sa.select(table.c.id).where(
                    table.c.api_key_id == key_id, table.c.idempotency_key == idempotency_key
                )
                if await connection.scalar(query) is not None:
                    return True
        return False

    @contextlib.asynccontextmanager
    async def admitted(
        self, grant: KeyGrant | None, idempotency_key: str | None
    ) -> AsyncIterator[str | None]:
        """Make a job inside this block: it yields the key id to store with the job, after
        :class:`OverLimit` when the key has its ``max_concurrent_jobs`` queued or running (a
        retry of a job it made already passes). The key's creates in this process wait for one
        another from the count to the insert, so simultaneous ones cannot all pass a count
        that each alone would; replicas count on their own (docs/operations.md)."""
        if grant is None:
            yield None
            return
        limit = grant.limits.max_concurrent_jobs
        if limit is None:
            yield grant.key_id
            return
        async with self._locks[grant.key_id]:
            if not (idempotency_key and await self.made_with(grant.key_id, idempotency_key)):
                await self._refuse_over(grant.key_id, limit)
            yield grant.key_id

    async def _refuse_over(self, key_id: str, limit: int) -> None:
        active = await self.active(key_id)
        if active >= limit:
            raise refused(
                "concurrent_jobs",
                f"the API key has {active} jobs queued or running, its limit is {limit}: "
                "submit again once one has finished or is cancelled",
                JOBS_RETRY_AFTER_S,
            )
