"""Stored shadow disagreements on SQLite and PostgreSQL: newest first, by route, and deleted by
the age sweep (they hold callers' questions)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from steadfast.services.gateway.adapters.shadow_repository import SqlDisagreementStore
from steadfast.shared.contracts.proxy import ShadowDisagreement, ShadowVariant
from steadfast.shared.db import Database


@pytest.fixture
async def store(database_url: str) -> AsyncIterator[SqlDisagreementStore]:
    database = Database("gateway", database_url)
    await database.migrate()
    yield SqlDisagreementStore(database)
    await database.dispose()


def disagreement(route: str, at: float) -> ShadowDisagreement:
    variant = ShadowVariant(question=f"reworded at {at}", answer="Canberra", agrees=False)
    return ShadowDisagreement(
        route=route,
        question=f"asked at {at}",
        answer="Sydney",
        agreement=0.0,
        variants=[variant],
        created_at=at,
    )


async def test_newest_first_by_route_and_old_ones_swept(store: SqlDisagreementStore) -> None:
    for route, at in (("a", 100.0), ("b", 200.0), ("a", 300.0)):
        await store.add(disagreement(route, at))
    assert [d.created_at for d in await store.newest(None, 10)] == [300.0, 200.0, 100.0]
    assert [d.question for d in await store.newest("a", 1)] == ["asked at 300.0"]
    assert (await store.newest("a", 10))[1].variants[0].answer == "Canberra"
    assert await store.purge_older_than(250.0) == 2
    assert [d.created_at for d in await store.newest(None, 10)] == [300.0]
