"""What every part of the evaluation store works with: the engine, and how long a lease lasts."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import TypeVar

from sqlalchemy.ext.asyncio import AsyncEngine

T = TypeVar("T")


class StoreBase:
    """The database an evaluation store part reads and writes, and its lease length."""

    def __init__(self, engine: AsyncEngine, *, lease_s: float = 30.0) -> None:
        self.engine = engine
        self.lease_s = lease_s
        self.sqlite = engine.dialect.name == "sqlite"
        #: serialises claims on SQLite, which has no ``SKIP LOCKED`` (see ``leases``)
        self._claim_lock = asyncio.Lock()


def chunks(rows: list[T], size: int) -> Iterable[list[T]]:
    for start in range(0, len(rows), size):
        yield rows[start : start + size]
