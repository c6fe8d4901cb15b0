"""Work shared through row leases: a worker claims rows by writing its name and a lease expiry
(``FOR UPDATE SKIP LOCKED`` on PostgreSQL so concurrent workers never claim the same row; on
SQLite, where one process owns the file, an in-process lock serialises claims), renews the
lease while it works, and releases it. Only the lease holder writes a row's result."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import RowMapping

from steadfast.services.evaluator.adapters.evaluations.base import StoreBase
from steadfast.services.evaluator.adapters.evaluations.rows import (
    ACTIVE,
    OPEN_ANSWER,
    AnswerRow,
    ItemRow,
    answer_record_of,
    item_of,
)
from steadfast.services.evaluator.db.models import answers, evaluation_items, evaluations

#: the leased tables by the names ``renew`` knows them by
LEASED_TABLES = {"answers": answers, "items": evaluation_items, "evaluations": evaluations}


class Leases(StoreBase):
    """Claiming, renewing and releasing the leases of evaluations, items and answers."""

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

    async def release_all_leases(self) -> None:
        """At start-up on SQLite (one process owns the file): leases of a killed run are void."""
        async with self.engine.begin() as connection:
            for table in (evaluations, evaluation_items, answers):
                await connection.execute(
                    table.update()
                    .where(table.c.lease_owner.is_not(None))
                    .values(lease_owner=None, lease_until=None)
                )

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
        return [item_of(row) for row in rows]

    async def claim_answers(self, evaluation_id: str, owner: str, n: int) -> list[AnswerRow]:
        rows = await self._claim(
            answers,
            [answers.c.evaluation_id == evaluation_id, OPEN_ANSWER],
            [answers.c.position, answers.c.variant, answers.c.model],
            owner,
            n,
        )
        return [
            AnswerRow(
                row["id"], answer_record_of(row), row["attempts"], row["unreachable_attempts"]
            )
            for row in rows
        ]

    async def renew(self, table_name: str, ids: Iterable[int | str], owner: str) -> None:
        table = LEASED_TABLES[table_name]
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
        """Whether anything of the job is left to claim, now or once a lease or back-off ends."""
        if await self.has_pending_items(evaluation_id):
            return True
        async with self.engine.connect() as connection:
            answers_open = await connection.execute(
                sa.select(answers.c.id)
                .where(answers.c.evaluation_id == evaluation_id, OPEN_ANSWER)
                .limit(1)
            )
            return answers_open.first() is not None
