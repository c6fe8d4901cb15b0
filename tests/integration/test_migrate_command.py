"""``steadfast migrate`` and ``STEADFAST_MIGRATE_ON_START=false``: migrations run once, by a
job, before the services start; a service refuses tables of another version."""

from __future__ import annotations

import pytest
from litestar.testing import AsyncTestClient

from steadfast.migrations import run
from steadfast.services.gateway.app import create_app as create_gateway
from steadfast.services.gateway.settings import GatewaySettings
from steadfast.shared.db import MigrationsPending


@pytest.fixture
def shared_database(database_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("STEADFAST_DATABASE_URL", database_url)
    monkeypatch.delenv("DATABASE_URL", raising=False)
    return database_url


async def test_migrate_upgrades_both_services_and_check_says_so(
    shared_database: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert await run(["evaluator", "gateway"], check_only=True, wait_s=0) == 1
    assert "evaluator's tables are at no revision" in capsys.readouterr().err
    assert await run(["evaluator", "gateway"], check_only=False, wait_s=0) == 0
    assert await run(["evaluator", "gateway"], check_only=True, wait_s=0) == 0
    out = capsys.readouterr().out
    assert out.count("tables at the code's version") == 4


async def test_a_service_that_does_not_migrate_refuses_tables_of_another_version(
    shared_database: str, tmp_path: object
) -> None:
    settings = GatewaySettings(
        database_url=shared_database, data_dir=str(tmp_path), migrate_on_start=False
    )
    with pytest.raises(BaseException) as refused:  # the lifespan's task group wraps it
        async with AsyncTestClient(create_gateway(settings)):
            pass
    pending = [error for error in _leaves(refused.value) if isinstance(error, MigrationsPending)]
    assert pending and "run `steadfast migrate` first" in str(pending[0])
    assert await run(["gateway"], check_only=False, wait_s=0) == 0
    async with AsyncTestClient(create_gateway(settings)) as client:
        assert (await client.get("/readyz")).status_code == 200


def _leaves(error: BaseException) -> list[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in _leaves(inner)]
    return [error]


async def test_waiting_for_an_unreachable_database_gives_up_with_the_reason(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("steadfast.migrations.POLL_S", 0.05)
    monkeypatch.setenv("STEADFAST_DATABASE_URL", "postgresql://nobody@127.0.0.1:9/none")
    assert await run(["evaluator"], check_only=True, wait_s=0.2) == 1
    assert "evaluator's database cannot be reached" in capsys.readouterr().err
