"""Limits per API key on the evaluator's API (#28 item 4): requests per minute and concurrent
jobs answer 429 with Retry-After and the problem naming the limit; the admin API sets and
changes limits; ``GET /v1/keys/{id}/usage`` shows a key's requests; no key id is a label of the
metrics. On SQLite and PostgreSQL (the ``data_dir`` fixture)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import AsyncTestClient
from sqlalchemy.ext.asyncio import create_async_engine

from steadfast.services.evaluator.app import create_app
from steadfast.services.evaluator.db.models import position_jobs
from steadfast.services.evaluator.limits import KeyJobs
from steadfast.services.evaluator.settings import EvaluatorSettings
from steadfast.shared.api_keys import KeyGrant
from steadfast.shared.errors import OverLimit
from steadfast.shared.key_limit_values import KeyLimits
from tests.integration.evaluator.stand_ins import StandInUpstream
from tests.integration.evaluator.test_api import answer_right, job_body, render
from tests.integration.evaluator.test_api_keys import data_dir, keys

__all__ = ["data_dir"]  # the fixture, shared with the keys' tests


@pytest.fixture
async def client(data_dir: Path) -> AsyncIterator[AsyncTestClient[Any]]:
    """The evaluator with keys, its job loops off: a job stays queued until cancelled."""
    settings = EvaluatorSettings(
        data_dir=str(data_dir),
        database_url=os.environ["DATABASE_URL"],
        log_json=False,
        log_level="WARNING",
        auth="keys",
        run_jobs=False,
    )
    async with AsyncTestClient(create_app(settings, StandInUpstream(answer_right), render)) as c:
        yield c


async def made(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[str, dict[str, str]]:
    """A key made with ``steadfast keys create``: its id and the headers presenting it."""
    lines = await keys("create", *argv, capsys=capsys)
    return lines[0].split()[1], {"Authorization": f"Bearer {lines[1]}"}


def assert_over_limit(response: Any, limit: str, most_s: int) -> None:
    assert response.status_code == 429, response.text
    wait = int(response.headers["retry-after"])
    assert 1 <= wait <= most_s
    assert response.headers["content-type"].startswith("application/problem+json")
    problem = response.json()
    assert problem["status"] == 429 and problem["limit"] == limit, problem


async def test_requests_over_the_rpm_are_refused_with_retry_after_and_usage_counts_them(
    client: AsyncTestClient[Any], capsys: pytest.CaptureFixture[str]
) -> None:
    key_id, limited = await made(capsys, "limited", "--rpm", "3")
    _, other = await made(capsys, "other")
    for _ in range(3):
        assert (await client.get("/v1/evaluations", headers=limited)).status_code == 200
    before = rejections((await client.get("/metrics")).text)
    refused = await client.get("/v1/datasets", headers=limited)
    assert_over_limit(refused, "rpm", 60)
    assert "3 requests per minute" in refused.json()["detail"]
    assert (await client.get("/v1/evaluations", headers=other)).status_code == 200  # its own
    # its own usage, readable by the key itself (the refused request is not counted)
    usage = await client.get(f"/v1/keys/{key_id}/usage", headers=limited)
    assert usage.status_code == 429  # the usage endpoint counts too
    metrics = (await client.get("/metrics")).text
    assert rejections(metrics) == before + 2
    assert key_id not in metrics


def rejections(metrics: str, limit: str = "rpm") -> float:
    line = f'steadfast_key_limit_rejections_total{{limit="{limit}"}} '
    found = [row for row in metrics.splitlines() if row.startswith(line)]
    return float(found[0].removeprefix(line)) if found else 0.0


async def test_a_key_reads_its_own_usage_and_an_admin_key_every_key_s(
    client: AsyncTestClient[Any], capsys: pytest.CaptureFixture[str]
) -> None:
    key_id, reader = await made(capsys, "reader", "--scope", "proxy")
    other_id, other = await made(capsys, "other")
    _, admin = await made(capsys, "admin", "--scope", "admin")
    assert (await client.get("/v1/evaluations", headers=other)).status_code == 200
    own = await client.get(f"/v1/keys/{key_id}/usage", headers=reader)
    assert own.status_code == 200, own.text  # even without the read scope
    body = own.json()
    assert body["key_id"] == key_id and body["day"]["period"].startswith("day:")
    assert body["day"]["requests"] == 1 and body["month"]["requests"] == 1  # this one
    assert body["limits"] == {
        "rpm": None,
        "max_concurrent_jobs": None,
        "token_budget": None,
        "budget_period": None,
    }
    foreign = await client.get(f"/v1/keys/{other_id}/usage", headers=reader)
    assert foreign.status_code == 403 and "admin" in foreign.json()["detail"]
    seen = (await client.get(f"/v1/keys/{other_id}/usage", headers=admin)).json()
    assert seen["day"]["requests"] == 1 and seen["month"]["requests"] == 1
    missing = await client.get("/v1/keys/key-nope/usage", headers=admin)
    assert missing.status_code == 404


async def test_jobs_over_the_concurrent_limit_are_refused_until_one_is_cancelled(
    client: AsyncTestClient[Any], capsys: pytest.CaptureFixture[str]
) -> None:
    _, headers = await made(capsys, "jobs", "--max-jobs", "1")
    _, free = await made(capsys, "free")
    first = await client.post(
        "/v1/evaluations", json=job_body(), headers={**headers, "Idempotency-Key": "one"}
    )
    assert first.status_code == 202, first.text
    second = await client.post("/v1/evaluations", json=job_body(), headers=headers)
    assert_over_limit(second, "concurrent_jobs", 60)
    assert "1 jobs queued or running" in second.json()["detail"]
    # the retry of the job made already is no new job
    again = await client.post(
        "/v1/evaluations", json=job_body(), headers={**headers, "Idempotency-Key": "one"}
    )
    assert again.status_code == 202 and again.json()["id"] == first.json()["id"]
    # another key's jobs are its own
    assert (await client.post("/v1/evaluations", json=job_body(), headers=free)).status_code == 202
    cancelled = await client.delete(f"/v1/evaluations/{first.json()['id']}", headers=headers)
    assert cancelled.status_code == 200, cancelled.text
    third = await client.post("/v1/evaluations", json=job_body(), headers=headers)
    assert third.status_code == 202, third.text


async def test_simultaneous_creates_of_a_key_cannot_overshoot_its_job_limit() -> None:
    """Each create counts the key's jobs, then makes its own: six at once, with a limit of
    two, make two (the others are refused), however long each takes between the two steps."""
    made_jobs: list[str] = []

    class CountedInMemory(KeyJobs):
        async def active(self, key_id: str) -> int:
            return made_jobs.count(key_id)

    key_jobs = CountedInMemory(create_async_engine("sqlite+aiosqlite://"))
    grant = KeyGrant("key-burst", frozenset({"evaluate"}), limits=KeyLimits(max_concurrent_jobs=2))

    async def create() -> int:
        try:
            async with key_jobs.admitted(grant, None) as key_id:
                await asyncio.sleep(0.05)  # the job is being made
                made_jobs.append(str(key_id))
        except OverLimit:
            return 429
        return 202

    statuses = sorted(await asyncio.gather(*(create() for _ in range(6))))
    assert statuses == [202, 202, 429, 429, 429, 429] and len(made_jobs) == 2
    await key_jobs.engine.dispose()


async def test_another_tenant_s_idempotency_key_is_no_retry_past_the_job_limit(
    client: AsyncTestClient[Any], capsys: pytest.CaptureFixture[str]
) -> None:
    _, first = await made(capsys, "first", "--tenant", "one")
    _, limited = await made(capsys, "limited", "--tenant", "two", "--max-jobs", "1")
    made_by_first = await client.post(
        "/v1/evaluations", json=job_body(), headers={**first, "Idempotency-Key": "shared"}
    )
    assert made_by_first.status_code == 202, made_by_first.text
    own = await client.post("/v1/evaluations", json=job_body(), headers=limited)
    assert own.status_code == 202, own.text
    # the Idempotency-Key another tenant used makes no retry of a job of this key's
    borrowed = await client.post(
        "/v1/evaluations", json=job_body(), headers={**limited, "Idempotency-Key": "shared"}
    )
    assert_over_limit(borrowed, "concurrent_jobs", 60)


async def test_a_position_bias_job_of_the_key_counts_as_one_of_its_jobs(
    client: AsyncTestClient[Any], capsys: pytest.CaptureFixture[str]
) -> None:
    key_id, headers = await made(capsys, "jobs", "--max-jobs", "1")
    engine = create_async_engine(os.environ["DATABASE_URL"])
    try:
        async with engine.begin() as connection:
            await connection.execute(
                position_jobs.insert().values(
                    id="pb-running",
                    status="running",
                    request="{}",
                    order_count=1,
                    attempts=1,
                    created_at=1.0,
                    api_key_id=key_id,
                )
            )
        refused = await client.post("/v1/evaluations", json=job_body(), headers=headers)
        assert_over_limit(refused, "concurrent_jobs", 60)
        async with engine.begin() as connection:
            await connection.execute(position_jobs.update().values(status="succeeded"))
    finally:
        await engine.dispose()
    assert (
        await client.post("/v1/evaluations", json=job_body(), headers=headers)
    ).status_code == 202


async def test_the_admin_api_sets_and_changes_a_key_s_limits(
    client: AsyncTestClient[Any], capsys: pytest.CaptureFixture[str]
) -> None:
    _, admin = await made(capsys, "operator", "--scope", "admin")
    created = await client.post(
        "/v1/keys",
        json={"name": "app", "rpm": 2, "token_budget": 1000, "budget_period": "day"},
        headers=admin,
    )
    assert created.status_code == 201, created.text
    made_key = created.json()
    assert made_key["limits"] == {
        "rpm": 2,
        "max_concurrent_jobs": None,
        "token_budget": 1000,
        "budget_period": "day",
    }
    for field, value in (("rpm", 0), ("max_concurrent_jobs", -1), ("budget_period", "week")):
        bad = await client.post("/v1/keys", json={"name": "x", field: value}, headers=admin)
        assert bad.status_code == 400, bad.text
        assert bad.json()["errors"][0]["field"] == field
    key = {"Authorization": f"Bearer {made_key['key']}"}
    for _ in range(2):
        assert (await client.get("/v1/evaluations", headers=key)).status_code == 200
    assert_over_limit(await client.get("/v1/evaluations", headers=key), "rpm", 60)
    path = f"/v1/keys/{made_key['id']}"
    changed = await client.patch(path, json={"rpm": None, "max_concurrent_jobs": 0}, headers=admin)
    assert changed.status_code == 200, changed.text
    assert changed.json()["limits"] == {
        "rpm": None,
        "max_concurrent_jobs": 0,
        "token_budget": 1000,  # left out: kept
        "budget_period": "day",
    }
    assert (await client.get("/v1/evaluations", headers=key)).status_code == 200  # no rpm now
    refused = await client.post("/v1/evaluations", json=job_body(), headers=key)
    assert_over_limit(refused, "concurrent_jobs", 60)
    bad = await client.patch(path, json={"token_budget": 0}, headers=admin)
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "token_budget"
    assert (await client.patch(path, json={"rpm": 5}, headers=key)).status_code == 403
    missing = await client.patch("/v1/keys/key-nope", json={"rpm": 5}, headers=admin)
    assert missing.status_code == 404
    listed = (await client.get("/v1/keys", headers=admin)).json()["keys"]
    assert (
        next(k for k in listed if k["id"] == made_key["id"])["limits"]["max_concurrent_jobs"] == 0
    )
    listing = await keys("list", capsys=capsys)
    assert any("app" in line and "jobs 0, 1000 tokens/day" in line for line in listing), listing


async def test_steadfast_keys_limit_changes_a_key_s_limits(
    client: AsyncTestClient[Any], capsys: pytest.CaptureFixture[str]
) -> None:
    key_id, headers = await made(capsys, "cli", "--max-jobs", "3")
    changed = await keys("limit", key_id, "--rpm", "1", capsys=capsys)
    assert changed == [f"{key_id} limits: rpm 1, jobs 3"]
    assert (await client.get("/v1/evaluations", headers=headers)).status_code == 200
    assert_over_limit(await client.get("/v1/evaluations", headers=headers), "rpm", 60)
    removed = await keys("limit", key_id, "--rpm", "none", "--token-budget", "9", capsys=capsys)
    assert removed == [f"{key_id} limits: jobs 3, 9 tokens/month"]
    assert (await client.get("/v1/evaluations", headers=headers)).status_code == 200
    await keys("limit", "key-nope", "--rpm", "1", capsys=capsys, code=1)
