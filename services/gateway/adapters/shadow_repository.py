"""Shadow-check disagreements in the gateway's database (routes with ``shadow_store`` only)."""

from __future__ import annotations

import msgspec
import sqlalchemy as sa

from steadfast.services.gateway.db.models import shadow_disagreements
from steadfast.shared.contracts.proxy import ShadowDisagreement
from steadfast.shared.db import Database, delete_in_chunks

_decode = msgspec.json.Decoder(ShadowDisagreement).decode


class SqlDisagreementStore:
    """Shadow-check disagreements, stored in the gateway's database for the routes that ask
    for it (``shadow_store``)."""

    def __init__(self, database: Database) -> None:
        self._database = database

    async def add(self, disagreement: ShadowDisagreement) -> None:
        row = {
            "route": disagreement.route,
            "payload": msgspec.json.encode(disagreement).decode(),
            "created_at": disagreement.created_at,
        }
        async with self._database.engine.begin() as connection:
            await connection.execute(shadow_disagreements.insert().values(**row))

    async def newest(self, route: str | None, limit: int) -> list[ShadowDisagreement]:
        query = sa.select(shadow_disagreements.c.payload)
        if route is not None:
            query = query.where(shadow_disagreements.c.route == route)
        query = query.order_by(shadow_disagreements.c.created_at.desc()).limit(limit)
        async with self._database.engine.connect() as connection:
            rows = (await connection.execute(query)).scalars().all()
        return [_decode(payload) for payload in rows]

    async def purge_older_than(self, cutoff: float) -> int:
        """Delete the disagreements kept before ``cutoff`` (epoch seconds); how many."""
        old = shadow_disagreements.c.created_at < cutoff
        return await delete_in_chunks(
            self._database.engine, shadow_disagreements.c.id, old, chunk=5000
        )
