"""Queueing the answers an evaluation asks for, inside the caller's transaction: an answer
whose exact request was answered before takes that answer at once, and its label when the same
answer was graded the same way before."""

from __future__ import annotations

import time
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from steadfast.services.evaluator.adapters.evaluations.base import chunks
from steadfast.services.evaluator.adapters.evaluations.rows import (
    GradeKeys,
    NewAnswers,
    PendingAnswer,
)
from steadfast.services.evaluator.db.models import answers

#: answer rows one insert statement writes at most
INSERT_CHUNK = 1000


async def queue_answers(
    connection: AsyncConnection, evaluation_id: str, queued: NewAnswers
) -> None:
    """Insert pending answers; those whose exact request was answered before take that
    answer at once (the gateway would serve it from its cache anyway), and its label too
    when the same answer was graded the same way before (or is final: no gold answer) —
    unless they are to be asked ``fresh``."""
    for chunk in chunks(queued.pending, INSERT_CHUNK):
        rows = [_pending_row(evaluation_id, answer) for answer in chunk]
        if not queued.fresh:
            await _reuse_answers(connection, evaluation_id, rows)
        await _reuse_grades(connection, rows, queued.grade_keys)
        await connection.execute(answers.insert(), rows)


def _pending_row(evaluation_id: str, answer: PendingAnswer) -> dict[str, Any]:
    return {
        "evaluation_id": evaluation_id,
        "position": answer.position,
        "model": answer.model,
        "variant": answer.variant,
        "prompt": answer.prompt,
        "request_key": answer.request_key,
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


async def _reuse_answers(
    connection: AsyncConnection, evaluation_id: str, rows: list[dict[str, Any]]
) -> None:
    keys = sorted({row["request_key"] for row in rows})
    known = await connection.execute(
        sa.select(answers.c.request_key, answers.c.text, answers.c.value)
        .where(
            answers.c.request_key.in_(keys),
            answers.c.text.is_not(None),
            answers.c.evaluation_id != evaluation_id,
            # a reply labelled invalid without grading was cut before its answer (docs/method.md
            # D25), which its text alone does not tell: asked again, the gateway's cache
            # answers with the finish reason
            sa.not_(sa.and_(answers.c.label == "invalid", answers.c.grade_key.is_(None))),
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
