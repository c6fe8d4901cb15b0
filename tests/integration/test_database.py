"""Migrations and the engine on both databases (each test runs on SQLite and PostgreSQL)."""

from __future__ import annotations

import asyncio
import importlib
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import MetaData, inspect
from sqlalchemy.ext.asyncio import AsyncConnection

from steadfast.services.evaluator.adapters.datasets import DatasetStore
from steadfast.services.evaluator.db.models import (
    answers,
    datasets,
    evaluation_items,
    evaluations,
    paraphrase_sets,
)
from steadfast.services.evaluator.samples import SAMPLES
from steadfast.shared.db import Database, downgrade, migrate, resolve_database_url, version_table


def evaluation_row(evaluation_id: str, status: str) -> sa.Insert:
    """An evaluation of one model and one item, as the evaluator stores one."""
    return evaluations.insert().values(
        id=evaluation_id,
        status=status,
        task="factual",
        models=["m"],
        k=1,
        item_count=1,
        settings={},
        request_hash="h",
        created_at=1.0,
    )


async def test_migrations_run_and_are_idempotent(database_url: str) -> None:
    for service in ("gateway", "evaluator"):
        database = Database(service, database_url)
        try:
            await database.migrate()
            await database.migrate()
            await database.ping()
            async with database.engine.connect() as connection:
                tables = await connection.run_sync(lambda sync: inspect(sync).get_table_names())
            assert version_table(service) in tables
        finally:
            await database.dispose()


async def test_migrations_build_exactly_the_tables_the_code_defines(database_url: str) -> None:
    for service in ("gateway", "evaluator"):
        metadata: MetaData = importlib.import_module(
            f"steadfast.services.{service}.db.models"
        ).metadata

        def own(name: str | None, kind: str, _: object, service: str = service) -> bool:
            # the services share one database here; the version tables are alembic's
            return kind != "table" or bool(name and name.startswith(f"{service}_"))

        database = Database(service, database_url)
        try:
            await database.migrate()
            async with database.engine.connect() as connection:
                drift = await connection.run_sync(
                    lambda sync, metadata=metadata, own=own: compare_metadata(
                        MigrationContext.configure(sync, opts={"include_name": own}), metadata
                    )
                )
        finally:
            await database.dispose()
        assert drift == [], f"{service}: migrations and models differ: {drift}"


def test_default_url_is_sqlite_file_in_data_dir(tmp_path: Path) -> None:
    url = resolve_database_url("", "gateway", tmp_path / "d")
    assert url == f"sqlite+aiosqlite:///{tmp_path / 'd' / 'gateway.sqlite3'}"
    assert (tmp_path / "d").is_dir()


def test_postgres_urls_select_asyncpg(tmp_path: Path) -> None:
    assert resolve_database_url("postgresql://u:p@h:5/db", "x", tmp_path).startswith(
        "postgresql+asyncpg://u:p@h:5/db"
    )
    assert resolve_database_url("postgres://u@h/db", "x", tmp_path).startswith(
        "postgresql+asyncpg://"
    )


async def test_the_latest_migrations_go_down_and_up_again_with_rows_in_place(
    database_url: str,
) -> None:
    for service, previous in (("gateway", "0001"), ("evaluator", "0006")):
        database = Database(service, database_url)
        try:
            await database.migrate()
            if service == "evaluator":  # an item using a set: the set's table is referred to
                async with database.engine.begin() as connection:
                    await connection.execute(
                        paraphrase_sets.insert().values(
                            id="ps-1",
                            question="q",
                            generator="g",
                            k=1,
                            prompt_version="v",
                            semantic_check="",
                            complete=True,
                            candidates_generated=1,
                            paraphrases=[],
                            rejected=[],
                            created_at=1.0,
                        )
                    )
                    await connection.execute(evaluation_row("ev-1", "succeeded"))
                    await connection.execute(
                        evaluation_items.insert().values(
                            evaluation_id="ev-1",
                            position=0,
                            item_id="q",
                            item={},
                            status="done",
                            paraphrase_set_id="ps-1",
                            attempts=0,
                            next_attempt_at=0.0,
                        )
                    )
            await downgrade(database.engine, service, previous)
            await migrate(database.engine, service)
            if service == "evaluator":
                async with database.engine.connect() as connection:
                    used = sa.select(evaluation_items.c.paraphrase_set_id)
                    assert list(await connection.scalars(used)) == ["ps-1"]
        finally:
            await database.dispose()


async def test_item_and_answer_ids_go_past_32_bits(database_url: str) -> None:
    beyond_int32 = 2**31
    rows = {
        evaluation_items: {"position": 0, "item_id": "q", "item": {}, "status": "pending"},
        answers: {"position": 0, "model": "m", "variant": 0, "prompt": "q", "status": "pending"},
    }
    database = Database("evaluator", database_url)
    try:
        await database.migrate()
        async with database.engine.begin() as connection:
            await connection.execute(evaluation_row("ev-1", "running"))
            for table, fields in rows.items():
                row = {"evaluation_id": "ev-1", "attempts": 0, "next_attempt_at": 0.0, **fields}
                await _next_id_at_least(connection, table, row, beyond_int32)
                inserted = await connection.execute(table.insert().values(**row))
                (row_id,) = inserted.inserted_primary_key or (None,)
                assert row_id is not None and row_id >= beyond_int32, table.name
                stored = await connection.scalar(sa.select(table.c.id).where(table.c.id == row_id))
                assert stored == row_id
        if database.engine.dialect.name == "postgresql":
            with pytest.raises(RuntimeError, match="cannot downgrade: evaluator_evaluation_items"):
                await downgrade(database.engine, "evaluator", "0009")
    finally:
        await database.dispose()


async def _next_id_at_least(
    connection: AsyncConnection, table: sa.Table, row: dict[str, Any], start: int
) -> None:
    if connection.dialect.name == "postgresql":
        sequence = sa.text(f"SELECT setval(pg_get_serial_sequence('{table.name}', 'id'), :at)")
        await connection.execute(sequence, {"at": start - 1})
    else:  # SQLite gives a new row the largest id plus one
        await connection.execute(table.insert().values(row | {"id": start - 1, "position": 1}))


async def test_replicas_starting_together_migrate_and_store_the_samples_once(
    postgres_url: str,
) -> None:
    # two replicas on one empty database: one CREATE TABLE of the version table lost the race
    # on a unique index, and both inserted the built-in samples
    replicas = [Database("evaluator", postgres_url) for _ in range(3)]
    try:
        await asyncio.gather(*(replica.migrate() for replica in replicas))
        stores = [DatasetStore(replica.engine) for replica in replicas]
        await asyncio.gather(*(store.ensure_samples() for store in stores))
        async with replicas[0].engine.connect() as connection:
            samples = await connection.scalar(
                sa.select(sa.func.count()).select_from(datasets).where(datasets.c.builtin)
            )
        assert samples == len(SAMPLES)
    finally:
        for replica in replicas:
            await replica.dispose()
