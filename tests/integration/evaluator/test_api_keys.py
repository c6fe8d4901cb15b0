"""API keys: the evaluator's API refuses a call without an active key unless it runs in open
local mode; keys are made, listed and revoked with ``steadfast keys`` and stored hashed."""

from __future__ import annotations

import asyncio
import hashlib
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from litestar.testing import AsyncTestClient
from sqlalchemy.ext.asyncio import create_async_engine

from steadfast.cli import main
from steadfast.services.evaluator.app import create_app
from steadfast.services.evaluator.settings import EvaluatorSettings
from steadfast.supervisor import AUTH_VARIABLE, Supervisor
from tests.integration.evaluator.stand_ins import StandInUpstream
from tests.integration.evaluator.test_api import answer_right, job_body, render


@pytest.fixture
def data_dir(tmp_path: Path, database_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """One database (SQLite, then PostgreSQL) for the app and the ``steadfast keys`` commands."""
    monkeypatch.setenv("STEADFAST_DATA_DIR", str(tmp_path))
    for variable in ("STEADFAST_DATABASE_URL", "STEADFAST_EVALUATOR_DATABASE_URL"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("DATABASE_URL", database_url)
    yield tmp_path


def app_client(data_dir: Path, auth: str) -> AsyncTestClient[Any]:
    settings = EvaluatorSettings(
        data_dir=str(data_dir),
        database_url=os.environ["DATABASE_URL"],
        log_json=False,
        log_level="WARNING",
        auth=auth,  # type: ignore[arg-type]
    )
    return AsyncTestClient(create_app(settings, StandInUpstream(answer_right), render))


@pytest.fixture
async def guarded(data_dir: Path) -> AsyncIterator[AsyncTestClient[Any]]:
    async with app_client(data_dir, "keys") as client:
        yield client


async def keys(*argv: str, capsys: pytest.CaptureFixture[str], code: int = 0) -> list[str]:
    """``steadfast keys ...`` (its own event loop, so in a thread); its output lines."""
    assert await asyncio.to_thread(main, ["keys", *argv]) == code
    return capsys.readouterr().out.splitlines()


async def test_a_call_without_a_key_is_refused_with_a_problem(
    guarded: AsyncTestClient[Any],
) -> None:
    response = await guarded.get("/v1/evaluations")
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    problem = response.json()
    assert problem["errors"][0]["field"] == "Authorization"
    assert "API key" in problem["detail"]
    wrong = await guarded.get("/v1/evaluations", headers={"Authorization": "Bearer sf_nope"})
    assert wrong.status_code == 401 and "unknown or revoked" in wrong.json()["detail"]
    posted = await guarded.post("/v1/evaluations", json=job_body())
    assert posted.status_code == 401
    by_header = await guarded.get("/v1/evaluations", headers={"X-API-Key": "sf_nope"})
    assert by_header.status_code == 401


async def test_probes_metrics_and_schema_need_no_key(guarded: AsyncTestClient[Any]) -> None:
    for path in ("/healthz", "/readyz", "/metrics", "/schema/openapi.json"):
        assert (await guarded.get(path)).status_code != 401, path
    metrics = (await guarded.get("/metrics")).text
    await guarded.get("/v1/evaluations")
    after = (await guarded.get("/metrics")).text
    line = 'steadfast_api_auth_rejections_total{reason="missing"}'
    assert line in after and after != metrics


async def test_a_key_from_the_cli_is_accepted_until_it_is_revoked(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    created = await keys("create", "ci-robot", capsys=capsys)
    key_id, key = created[0].split()[1], created[1]
    assert key.startswith("sf_") and len(key) > 40
    async with app_client(data_dir, "keys") as client:
        bearer = {"Authorization": f"Bearer {key}"}
        assert (await client.get("/v1/evaluations", headers=bearer)).status_code == 200
        spaced = {"Authorization": f"bearer   {key} "}
        assert (await client.get("/v1/evaluations", headers=spaced)).status_code == 200
        assert (await client.get("/v1/datasets", headers={"X-API-Key": key})).status_code == 200
        submitted = await client.post("/v1/evaluations", json=job_body(), headers=bearer)
        assert submitted.status_code == 202
        listing = await keys("list", capsys=capsys)
        assert any(key_id in line and "ci-robot" in line for line in listing)
        await keys("revoke", key_id, capsys=capsys)
        assert (await client.get("/v1/evaluations", headers=bearer)).status_code == 401
        await keys("revoke", key_id, capsys=capsys, code=1)  # already revoked
    # only the hash is stored
    engine = create_async_engine(os.environ["DATABASE_URL"])
    async with engine.connect() as connection:
        query = sa.text("SELECT key_hash FROM evaluator_api_keys")
        stored = (await connection.execute(query)).scalars().all()
    await engine.dispose()
    assert stored == [hashlib.sha256(key.encode()).hexdigest()]


async def test_open_local_mode_needs_no_key(data_dir: Path) -> None:
    async with app_client(data_dir, "open") as client:
        assert (await client.get("/v1/evaluations")).status_code == 200


def test_the_services_a_local_launcher_starts_run_open_unless_told_otherwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(AUTH_VARIABLE, raising=False)
    assert Supervisor().environment()[AUTH_VARIABLE] == "open"
    monkeypatch.setenv(AUTH_VARIABLE, "open")
    assert Supervisor(open_local=False).environment()[AUTH_VARIABLE] == "keys"
    monkeypatch.delenv(AUTH_VARIABLE)
    told = Supervisor(env={AUTH_VARIABLE: "keys"}).environment()
    assert told[AUTH_VARIABLE] == "keys"
    monkeypatch.setenv(AUTH_VARIABLE, "keys")
    assert Supervisor().environment()[AUTH_VARIABLE] == "keys"


async def test_a_key_does_only_what_its_scopes_allow_and_403_names_the_missing_one(
    guarded: AsyncTestClient[Any], capsys: pytest.CaptureFixture[str]
) -> None:
    reader = (await keys("create", "dashboard", "--scope", "read", capsys=capsys))[1]
    headers = {"Authorization": f"Bearer {reader}"}
    assert (await guarded.get("/v1/evaluations", headers=headers)).status_code == 200
    refused = await guarded.post("/v1/evaluations", json=job_body(), headers=headers)
    assert refused.status_code == 403, refused.text
    problem = refused.json()
    assert "`evaluate`" in problem["detail"] and problem["errors"][0]["field"] == "Authorization"
    assert (await guarded.get("/v1/keys", headers=headers)).status_code == 403
    listed = await keys("list", capsys=capsys)
    assert any("dashboard" in line and "read" in line and "evaluate" not in line for line in listed)


async def test_the_admin_api_makes_lists_and_revokes_keys(
    guarded: AsyncTestClient[Any], capsys: pytest.CaptureFixture[str]
) -> None:
    admin = (await keys("create", "operator", "--scope", "admin", capsys=capsys))[1]
    headers = {"Authorization": f"Bearer {admin}"}
    made = await guarded.post(
        "/v1/keys", json={"name": "ci", "scopes": ["evaluate", "read"]}, headers=headers
    )
    assert made.status_code == 201, made.text
    created = made.json()
    assert created["key"].startswith("sf_") and created["scopes"] == ["evaluate", "read"]
    new = {"Authorization": f"Bearer {created['key']}"}
    assert (await guarded.post("/v1/evaluations", json=job_body(), headers=new)).status_code == 202
    listing = (await guarded.get("/v1/keys", headers=headers)).json()["keys"]
    assert {key["name"] for key in listing} >= {"operator", "ci"}
    assert all("key" not in key for key in listing)  # shown once, never again
    revoked = await guarded.delete(f"/v1/keys/{created['id']}", headers=headers)
    assert revoked.status_code == 204
    assert (await guarded.get("/v1/evaluations", headers=new)).status_code == 401
    again = await guarded.delete(f"/v1/keys/{created['id']}", headers=headers)
    assert again.status_code == 404 and again.json()["errors"][0]["field"] == "key_id"
    bad = await guarded.post("/v1/keys", json={"name": "x", "scopes": ["root"]}, headers=headers)
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"].startswith("scopes")


async def test_keys_made_before_scopes_keep_what_they_could_do(database_url: str) -> None:
    """Migration 0015 gives every existing key evaluate, read and proxy, not admin."""
    from steadfast.shared.api_keys import ApiKeyStore, key_hash
    from steadfast.shared.db import create_engine, downgrade, migrate

    engine = create_engine(database_url)
    try:
        await migrate(engine, "evaluator", "0014")
        async with engine.begin() as connection:
            await connection.execute(
                sa.text(
                    "INSERT INTO evaluator_api_keys (id, name, key_hash, created_at) "
                    "VALUES ('key-old', 'old', :hash, 1.0)"
                ),
                {"hash": key_hash("sf_old")},
            )
        await migrate(engine, "evaluator")
        grant = await ApiKeyStore(engine).grant_of("sf_old")
        assert grant is not None and grant.scopes == {"evaluate", "read", "proxy"}
        await downgrade(engine, "evaluator", "0014")  # and back, on both databases
    finally:
        await engine.dispose()
