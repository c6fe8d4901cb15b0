"""Paraphrase sets as an evaluation takes and stores them, inside the caller's transaction:
taking one marks it used (and on PostgreSQL holds it against a retention sweep)."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from typing import Any

import msgspec
import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from steadfast.services.evaluator.adapters.evaluations.base import chunks
from steadfast.services.evaluator.db.models import paraphrase_sets
from steadfast.services.evaluator.records import ParaphraseSet


async def take_sets(connection: AsyncConnection, ids: Sequence[str]) -> set[str]:
    """The stored sets of ``ids`` an evaluation is about to use, marked as taken now; on
    PostgreSQL the update also holds them against a concurrent retention sweep until the
    transaction ends. A set the sweep deleted meanwhile is left out: its question gets a set
    made anew."""
    kept: set[str] = set()
    for chunk in chunks(sorted(set(ids)), 1000):
        kept |= await _take(connection, chunk)
    return kept


async def _take(connection: AsyncConnection, ids: Sequence[str]) -> set[str]:
    """Mark the sets ``ids`` taken now; returns those stored."""
    chosen = paraphrase_sets.c.id.in_(ids)
    await connection.execute(paraphrase_sets.update().where(chosen).values(used_at=time.time()))
    return set(await connection.scalars(sa.select(paraphrase_sets.c.id).where(chosen)))


async def save_set(connection: AsyncConnection, paraphrase_set: ParaphraseSet) -> str:
    """Store a set and return the id it is stored under. A set regenerated with the same
    settings (same id) replaces the stored one only when it extends it, paraphrase for
    paraphrase: evaluations answered the stored one by position. Another regeneration (a
    time budget that ended elsewhere) is stored beside it, under an id of its own."""
    values = _set_values(paraphrase_set)
    insert = sqlite_insert if connection.dialect.name == "sqlite" else postgresql_insert
    # taken first: a retention sweep cannot delete the stored set under this transaction
    await _take(connection, [paraphrase_set.id])
    await connection.execute(insert(paraphrase_sets).values(**values).on_conflict_do_nothing())
    stored = await connection.scalar(
        sa.select(paraphrase_sets.c.paraphrases).where(paraphrase_sets.c.id == paraphrase_set.id)
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
    await _take(connection, [own_id])
    await connection.execute(
        insert(paraphrase_sets).values(**{**values, "id": own_id}).on_conflict_do_nothing()
    )
    return own_id


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
