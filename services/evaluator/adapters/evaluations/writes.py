"""The results of leased work: an item's paraphrase set (and the answers it queues), answers,
grades and failures. Each is written only while its writer holds the row's lease, and only
over the stage it was claimed at, so a result is never stored twice."""

from __future__ import annotations

import time
from typing import Any

import sqlalchemy as sa

from steadfast.services.evaluator.adapters.evaluations.answer_queue import queue_answers
from steadfast.services.evaluator.adapters.evaluations.base import StoreBase
from steadfast.services.evaluator.adapters.evaluations.paraphrase_sets import save_set
from steadfast.services.evaluator.adapters.evaluations.rows import (
    AnswerRow,
    Failure,
    ItemRow,
    NewAnswers,
    StoredAnswer,
    StoredGrade,
    counted,
)
from steadfast.services.evaluator.db.models import answers, evaluation_items
from steadfast.services.evaluator.records import ParaphraseSet

Status = str | sa.BindParameter[Any] | None


def held_row(table: sa.Table, status: Status = None) -> sa.Update:
    """An update of the row ``row_id`` (a bound parameter) only while ``owner`` (another)
    holds its lease and, given a ``status``, it has that status: a row whose lease went to
    another worker, or that another lane moved on meanwhile, keeps what it has."""
    held = [table.c.id == sa.bindparam("row_id"), table.c.lease_owner == sa.bindparam("owner")]
    if status is not None:
        held.append(table.c.status == status)
    return table.update().where(*held)


class ResultWrites(StoreBase):
    """Results of the paraphrase, answer and grade stages, and their failures."""

    async def complete_item(
        self,
        evaluation_id: str,
        item: ItemRow,
        owner: str,
        paraphrase_set: ParaphraseSet,
        queued: NewAnswers,
        note: str | None,
    ) -> bool:
        """Store the item's paraphrase set and queue the answers to its paraphrases."""
        async with self.engine.begin() as connection:
            set_id = await save_set(connection, paraphrase_set)
            updated = await connection.execute(
                held_row(evaluation_items, "pending").values(
                    status="done",
                    paraphrase_set_id=set_id,
                    error=note,
                    lease_owner=None,
                    lease_until=None,
                ),
                {"row_id": item.row_id, "owner": owner},
            )
            if not updated.rowcount:
                return False
            await queue_answers(connection, evaluation_id, queued)
        return True

    async def fail_item(self, item: ItemRow, owner: str, failure: Failure) -> None:
        values: dict[str, Any] = {
            "error": failure.reason,
            **counted(failure, item.attempts, item.unreachable_attempts),
            "lease_owner": None,
            "lease_until": None,
        }
        if failure.retry_at is None:
            values["status"] = "failed"
        else:
            values["next_attempt_at"] = failure.retry_at
        async with self.engine.begin() as connection:
            await connection.execute(
                held_row(evaluation_items).values(**values),
                {"row_id": item.row_id, "owner": owner},
            )

    async def store_answers(self, owner: str, stored: list[StoredAnswer]) -> None:
        """Persist answers as they arrive; the ones still to be graded stay leased, with a
        fresh count of attempts: the answer stage's failures are not the grade stage's."""
        now = time.time()
        params = [
            {
                "row_id": answer.row_id,
                "text": answer.text,
                "value": answer.value,
                "label": answer.label,
                "cached": answer.cached,
                "new_status": "graded" if answer.final else "answered",
                "answered_at": now,
                "new_owner": None if answer.final else owner,
            }
            for answer in stored
        ]
        statement = held_row(answers, "pending").values(
            text=sa.bindparam("text"),
            value=sa.bindparam("value"),
            label=sa.bindparam("label"),
            cached=sa.bindparam("cached"),
            status=sa.bindparam("new_status"),
            answered_at=sa.bindparam("answered_at"),
            lease_owner=sa.bindparam("new_owner"),
            error=None,
            attempts=0,
            unreachable_attempts=0,
        )
        await self._write_held(statement, owner, params)

    async def store_grades(self, owner: str, grades: list[StoredGrade]) -> None:
        params = [
            {"row_id": grade.row_id, "label": grade.label, "grade_key": grade.grade_key}
            for grade in grades
        ]
        statement = held_row(answers, "answered").values(
            label=sa.bindparam("label"),
            grade_key=sa.bindparam("grade_key"),
            status="graded",
            error=None,
            lease_owner=None,
            lease_until=None,
        )
        await self._write_held(statement, owner, params)

    async def fail_answers(
        self, owner: str, failures: list[Failure], rows: dict[int, AnswerRow]
    ) -> None:
        """Record failed attempts: retried later at ``retry_at``, or given up (``failed``)."""
        params = [
            {
                "row_id": f.row_id,
                "error": f.reason,
                "error_stage": f.stage,
                **counted(f, rows[f.row_id].attempts, rows[f.row_id].unreachable_attempts),
                "next_attempt_at": f.retry_at or 0.0,
                "claimed_status": rows[f.row_id].record.status,
                "new_status": "failed" if f.retry_at is None else rows[f.row_id].record.status,
            }
            for f in failures
        ]
        statement = held_row(answers, sa.bindparam("claimed_status")).values(
            error=sa.bindparam("error"),
            error_stage=sa.bindparam("error_stage"),
            attempts=sa.bindparam("attempts"),
            unreachable_attempts=sa.bindparam("unreachable_attempts"),
            next_attempt_at=sa.bindparam("next_attempt_at"),
            status=sa.bindparam("new_status"),
            lease_owner=None,
            lease_until=None,
        )
        await self._write_held(statement, owner, params)

    async def _write_held(
        self, statement: sa.Update, owner: str, params: list[dict[str, Any]]
    ) -> None:
        """``statement`` (a :func:`held_row` update) once per row of ``params`` held by
        ``owner``, in row id order: the order a lease renewal locks them in, so two
        transactions never wait for each other's rows (a deadlock on PostgreSQL)."""
        if params:
            ordered = sorted(params, key=lambda p: p["row_id"])
            async with self.engine.begin() as connection:
                await connection.execute(statement, [{**p, "owner": owner} for p in ordered])
