"""Datasets and their items in the database; the built-in samples are loaded at start-up."""

from __future__ import annotations

import logging
import time
import uuid
from typing import Any

import msgspec
import sqlalchemy as sa
from sqlalchemy.engine import RowMapping
from sqlalchemy.ext.asyncio import AsyncEngine

from steadfast.services.evaluator.db.models import dataset_items, datasets
from steadfast.services.evaluator.samples import SAMPLES, sample_items
from steadfast.services.evaluator.timestamps import iso
from steadfast.shared.contracts.base import Task
from steadfast.shared.contracts.evaluator import DatasetInfo, EvaluationItem
from steadfast.shared.tenancy import DEFAULT_TENANT, UNRESTRICTED, Tenancy, visible

logger = logging.getLogger(__name__)


def sample_id(name: str) -> str:
    return f"sample-{name}"


def _info(row: RowMapping) -> DatasetInfo:
    return DatasetInfo(
        id=row["id"],
        name=row["name"],
        task=row["task"],
        item_count=row["item_count"],
        builtin=row["builtin"],
        source=row["source"],
        license=row["license"],
        created_at=iso(row["created_at"]),
    )


def _seen_by(tenancy: Tenancy) -> sa.ColumnElement[bool]:
    """The datasets ``tenancy`` sees: its tenant's, and the built-in samples (everyone's)."""
    return sa.or_(datasets.c.builtin.is_(True), visible(datasets.c.tenant, tenancy))


class DatasetStore:
    """Uploaded datasets and their items in the database, with the built-in samples."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def ensure_samples(self) -> None:
        async with self.engine.connect() as connection:
            present = set(
                (
                    await connection.execute(
                        sa.select(datasets.c.id).where(datasets.c.builtin.is_(True))
                    )
                ).scalars()
            )
        for name, sample in SAMPLES.items():
            if sample_id(name) in present:
                continue
            try:
                await self._insert(
                    sample_id(name),
                    name,
                    sample.task,
                    sample_items(name),
                    builtin=True,
                    source=sample.source,
                    license=sample.license,
                )
            except sa.exc.IntegrityError:
                logger.info("sample %s was stored by another replica meanwhile", name)

    async def create(
        self,
        name: str,
        task: Task,
        items: list[EvaluationItem],
        source: str | None,
        tenant: str = DEFAULT_TENANT,
    ) -> DatasetInfo:
        dataset_id = f"ds-{uuid.uuid4().hex[:20]}"
        await self._insert(
            dataset_id,
            name,
            task,
            items,
            builtin=False,
            source=source,
            license=None,
            tenant=tenant,
        )
        info = await self.get(dataset_id)
        assert info is not None
        return info

    async def _insert(
        self,
        dataset_id: str,
        name: str,
        task: Task,
        items: list[EvaluationItem],
        *,
        builtin: bool,
        source: str | None,
        license: str | None,
        tenant: str = DEFAULT_TENANT,
    ) -> None:
        rows: list[dict[str, Any]] = [
            {"dataset_id": dataset_id, "position": i, "item": msgspec.to_builtins(item)}
            for i, item in enumerate(items)
        ]
        async with self.engine.begin() as connection:
            await connection.execute(
                datasets.insert().values(
                    id=dataset_id,
                    name=name,
                    task=task,
                    item_count=len(items),
                    builtin=builtin,
                    source=source,
                    license=license,
                    created_at=time.time(),
                    tenant=tenant,
                )
            )
            for start in range(0, len(rows), 1000):
                await connection.execute(dataset_items.insert(), rows[start : start + 1000])

    async def page(
        self, offset: int, limit: int, tenancy: Tenancy = UNRESTRICTED
    ) -> tuple[list[DatasetInfo], int]:
        """The built-in samples first, then the uploads ``tenancy`` sees, newest first; and how
        many there are."""
        order = (datasets.c.builtin.desc(), datasets.c.created_at.desc(), datasets.c.id)
        seen = _seen_by(tenancy)
        query = sa.select(datasets).where(seen).order_by(*order).offset(offset).limit(limit)
        count = sa.select(sa.func.count()).select_from(datasets).where(seen)
        async with self.engine.connect() as connection:
            rows = [_info(row) for row in (await connection.execute(query)).mappings()]
            total = await connection.scalar(count)
        return rows, int(total or 0)

    async def get(self, dataset_id: str, tenancy: Tenancy = UNRESTRICTED) -> DatasetInfo | None:
        """By id, or a built-in sample by its name (``gsm8k``); None for one ``tenancy`` does
        not see (another tenant's)."""
        ids = [dataset_id, sample_id(dataset_id)]
        query = sa.select(datasets).where(datasets.c.id.in_(ids), _seen_by(tenancy))
        async with self.engine.connect() as connection:
            rows = await connection.execute(query)
            found = {row["id"]: row for row in rows.mappings()}
        row = found.get(dataset_id) or found.get(sample_id(dataset_id))
        return _info(row) if row else None

    async def delete(self, dataset_id: str) -> None:
        """Delete an uploaded dataset and its items (evaluations keep their own copies)."""
        async with self.engine.begin() as connection:
            await connection.execute(
                dataset_items.delete().where(dataset_items.c.dataset_id == dataset_id)
            )
            await connection.execute(
                datasets.delete().where(datasets.c.id == dataset_id, datasets.c.builtin.is_(False))
            )

    async def items(
        self, dataset_id: str, offset: int = 0, limit: int | None = None
    ) -> list[EvaluationItem]:
        query = (
            sa.select(dataset_items.c.item)
            .where(dataset_items.c.dataset_id == dataset_id)
            .order_by(dataset_items.c.position)
            .offset(offset)
        )
        if limit is not None:
            query = query.limit(limit)
        async with self.engine.connect() as connection:
            rows = (await connection.execute(query)).scalars()
            return [msgspec.convert(row, EvaluationItem) for row in rows]
