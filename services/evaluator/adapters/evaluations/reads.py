"""Reading an evaluation's progress and results: its items, answers, paraphrase sets, how far
each stage is, and what failed."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import sqlalchemy as sa

from steadfast.services.evaluator.adapters.evaluations.base import StoreBase
from steadfast.services.evaluator.adapters.evaluations.rows import (
    ItemRow,
    answer_record_of,
    item_of,
    paraphrase_set_of,
)
from steadfast.services.evaluator.db.models import answers, evaluation_items, paraphrase_sets
from steadfast.services.evaluator.records import AnswerRecord, ParaphraseSet
from steadfast.shared.contracts.evaluator import ItemError


class ResultReads(StoreBase):
    """An evaluation's items, answers, paraphrase sets, progress counts and failures."""

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
            return [item_of(row) for row in (await connection.execute(query)).mappings()]

    async def answers_of(
        self, evaluation_id: str, positions: Sequence[int] | None = None
    ) -> list[AnswerRecord]:
        query = sa.select(answers).where(answers.c.evaluation_id == evaluation_id)
        if positions is not None:
            query = query.where(answers.c.position.in_(list(positions)))
        query = query.order_by(answers.c.position, answers.c.variant, answers.c.model)
        async with self.engine.connect() as connection:
            return [answer_record_of(row) for row in (await connection.execute(query)).mappings()]

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
            return {row["id"]: paraphrase_set_of(row) for row in rows}

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
