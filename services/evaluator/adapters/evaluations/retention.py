"""Retention: finished evaluations and paraphrase sets nothing uses any more, deleted."""

from __future__ import annotations

import sqlalchemy as sa

from steadfast.services.evaluator.adapters.evaluations.base import StoreBase
from steadfast.services.evaluator.adapters.evaluations.rows import TERMINAL
from steadfast.services.evaluator.db.models import (
    answers,
    evaluation_items,
    evaluations,
    paraphrase_sets,
)
from steadfast.shared.db import delete_in_chunks

#: rows one retention transaction deletes at most
PURGE_CHUNK = 2000


class Retention(StoreBase):
    """Deleting what retention no longer keeps, a bounded chunk per transaction."""

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
