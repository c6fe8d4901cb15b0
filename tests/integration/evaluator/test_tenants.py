"""Tenants (#28 item 3): every evaluation, dataset, position-bias job, monitor and study is the
tenant's of the key that made it. Another tenant's is a 404 alike an id that does not exist
(reading, changing, deleting, and what hangs under it), listings show one's own, an admin key
sees every tenant's, built-in samples are everyone's, and an Idempotency-Key is a tenant's own.
Real HTTP against the app in keys mode, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from litestar.testing import AsyncTestClient

from steadfast.cli import main
from steadfast.services.evaluator.app import create_app
from steadfast.services.evaluator.errors import UpstreamError
from steadfast.services.evaluator.settings import EvaluatorSettings
from steadfast.shared.api_keys import ApiKeyStore, key_hash
from steadfast.shared.contracts.perturb import (
    DistractorRequest,
    DistractorResponse,
    OptionOrder,
    PermutationRequest,
    PermutationResponse,
)
from steadfast.shared.contracts.scoring import PositionBiasRequest, PositionBiasResponse
from steadfast.shared.db import create_engine, downgrade, migrate
from tests.integration.evaluator.stand_ins import StandInUpstream
from tests.integration.evaluator.test_api import answer_right, job_body, render, wait_finished
from tests.integration.evaluator.test_api_keys import keys

Headers = dict[str, str]


@pytest.fixture
def data_dir(tmp_path: Path, database_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """One database (SQLite, then PostgreSQL) for the app and the ``steadfast keys`` commands."""
    monkeypatch.setenv("STEADFAST_DATA_DIR", str(tmp_path))
    for variable in ("STEADFAST_DATABASE_URL", "STEADFAST_EVALUATOR_DATABASE_URL"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("DATABASE_URL", database_url)
    yield tmp_path


class Upstream(StandInUpstream):
    """The stand-in services, with the positional-bias protocol's: two option orders; the
    scoring of a job's replies fails (a job then ends failed, which these tests do not mind)."""

    async def permutations(self, request: PermutationRequest) -> PermutationResponse:
        orders = [
            OptionOrder(options=[], positions=[], order=[0, 1]),
            OptionOrder(options=[], positions=[], order=[1, 0]),
        ]
        return PermutationResponse(scheme=request.scheme, orders=orders)

    async def distractors(self, request: DistractorRequest) -> DistractorResponse:
        raise UpstreamError("perturb: no distractors here")

    async def position_bias(self, request: PositionBiasRequest) -> PositionBiasResponse:
        raise UpstreamError("scoring: unavailable")

    async def logprob_routes(self) -> set[str]:
        return set()


def app_client(data_dir: Path, auth: str) -> AsyncTestClient[Any]:
    settings = EvaluatorSettings(
        data_dir=str(data_dir),
        database_url=os.environ["DATABASE_URL"],
        log_json=False,
        log_level="WARNING",
        auth=auth,  # type: ignore[arg-type]
    )
    return AsyncTestClient(create_app(settings, Upstream(answer_right), render))


@dataclass
class World:
    """The app in keys mode and a key of each caller: tenants acme and globex, and an admin
    (of a tenant of its own, ops)."""

    client: AsyncTestClient[Any]
    acme: Headers
    globex: Headers
    admin: Headers


@pytest.fixture
async def world(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> AsyncIterator[World]:
    made = await keys("create", "operator", "--scope", "admin", "--tenant", "ops", capsys=capsys)
    assert "tenant: ops" in made[0]
    admin = {"Authorization": f"Bearer {made[1]}"}
    async with app_client(data_dir, "keys") as client:
        tenant_keys = {}
        for tenant in ("acme", "globex"):
            body = {"name": f"{tenant}-ci", "tenant": tenant}
            created = await client.post("/v1/keys", json=body, headers=admin)
            assert created.status_code == 201, created.text
            assert created.json()["tenant"] == tenant
            tenant_keys[tenant] = {"Authorization": f"Bearer {created.json()['key']}"}
        yield World(client, tenant_keys["acme"], tenant_keys["globex"], admin)


async def hidden(
    world: World, method: str, path: str, real_id: str, *, headers: Headers, **request: Any
) -> None:
    """``path`` (with ``{}`` for the id) answers ``headers``' caller about ``real_id`` exactly
    as about an id that does not exist: a 404, the same problem but for the id."""
    fake_id = "x" * len(real_id)
    seen = await world.client.request(method, path.format(real_id), headers=headers, **request)
    unknown = await world.client.request(method, path.format(fake_id), headers=headers, **request)
    assert seen.status_code == 404, f"{method} {path}: {seen.status_code} {seen.text}"
    assert unknown.status_code == 404, unknown.text
    assert problem(seen, real_id) == problem(unknown, fake_id)


def problem(response: Any, resource_id: str) -> dict[str, Any]:
    """The problem of a response, its id and the request's id left out."""
    body = json.loads(response.text.replace(resource_id, "ID"))
    body.pop("request_id", None)
    return dict(body)


def ids(response: Any, key: str) -> set[str]:
    assert response.status_code == 200, response.text
    return {row["id"] for row in response.json()[key]}


async def test_another_tenants_evaluation_is_a_404_and_left_out_of_its_listing(
    world: World,
) -> None:
    client = world.client
    created = await client.post("/v1/evaluations", json=job_body(), headers=world.acme)
    assert created.status_code == 202, created.text
    mine = created.json()["id"]
    theirs = (await client.post("/v1/evaluations", json=job_body(), headers=world.globex)).json()
    await wait_finished_as(client, mine, world.acme)

    for method, path in (
        ("GET", "/v1/evaluations/{}"),
        ("GET", "/v1/evaluations/{}/items"),
        ("GET", "/v1/evaluations/{}/report"),
        ("GET", "/v1/evaluations/{}/report?format=csv"),
        ("POST", "/v1/evaluations/{}/retry"),
        ("DELETE", "/v1/evaluations/{}"),
    ):
        await hidden(world, method, path, mine, headers=world.globex)
    assert (await client.get(f"/v1/evaluations/{mine}", headers=world.acme)).status_code == 200

    # a job of another tenant's earlier sets is an unknown one, named by its field
    reuse = job_body(reuse_paraphrases_from=mine)
    refused = await client.post("/v1/evaluations", json=reuse, headers=world.globex)
    assert refused.status_code == 404, refused.text
    assert refused.json()["errors"][0]["field"] == "reuse_paraphrases_from"
    unknown = job_body(reuse_paraphrases_from="x" * len(mine))
    unknown_refused = await client.post("/v1/evaluations", json=unknown, headers=world.globex)
    assert problem(refused, mine) == problem(unknown_refused, "x" * len(mine))
    reused = await client.post("/v1/evaluations", json=reuse, headers=world.acme)
    assert reused.status_code == 202, reused.text

    assert mine not in ids(await client.get("/v1/evaluations", headers=world.globex), "evaluations")
    assert theirs["id"] in ids(
        await client.get("/v1/evaluations", headers=world.globex), "evaluations"
    )
    own = await client.get("/v1/evaluations", headers=world.acme)
    assert ids(own, "evaluations") == {mine, reused.json()["id"]}
    assert own.json()["total"] == 2
    everyone = ids(await client.get("/v1/evaluations", headers=world.admin), "evaluations")
    assert {mine, theirs["id"], reused.json()["id"]} <= everyone
    assert (await client.get(f"/v1/evaluations/{mine}", headers=world.admin)).status_code == 200


async def wait_finished_as(client: AsyncTestClient[Any], job_id: str, headers: Headers) -> None:
    original = client.headers.copy()
    client.headers.update(headers)
    try:
        await wait_finished(client, job_id)
    finally:
        client.headers = original


async def test_an_idempotency_key_is_a_tenants_own(world: World) -> None:
    client = world.client
    key = {"Idempotency-Key": "nightly-2026-12-05"}
    first = await client.post("/v1/evaluations", json=job_body(), headers={**world.acme, **key})
    assert first.status_code == 202, first.text
    again = await client.post("/v1/evaluations", json=job_body(), headers={**world.acme, **key})
    assert again.json()["id"] == first.json()["id"]
    # another tenant's request under the same key is its own: neither a 422 naming acme's
    # evaluation nor acme's evaluation
    other = job_body(n=2)
    theirs = await client.post("/v1/evaluations", json=other, headers={**world.globex, **key})
    assert theirs.status_code == 202, theirs.text
    assert theirs.json()["id"] != first.json()["id"]
    assert first.json()["id"] not in theirs.text
    repeated = await client.post("/v1/evaluations", json=other, headers={**world.globex, **key})
    assert repeated.json()["id"] == theirs.json()["id"]
    conflict = await client.post(
        "/v1/evaluations", json=job_body(n=1), headers={**world.globex, **key}
    )
    assert conflict.status_code == 422
    assert theirs.json()["id"] in conflict.text and first.json()["id"] not in conflict.text

    body = position_body()
    job = await client.post("/v1/position-bias/jobs", json=body, headers={**world.acme, **key})
    assert job.status_code == 202, job.text
    changed = {**body, "seed": 7}
    other_job = await client.post(
        "/v1/position-bias/jobs", json=changed, headers={**world.globex, **key}
    )
    assert other_job.status_code == 202, other_job.text
    assert other_job.json()["id"] != job.json()["id"]


async def test_another_tenants_dataset_is_a_404_and_samples_are_everyones(world: World) -> None:
    client = world.client
    lines = [json.dumps({"question": f"What is {i}?", "answer": str(i)}) for i in range(3)]
    uploaded = await client.post(
        "/v1/datasets?name=acme.jsonl", content="\n".join(lines).encode(), headers=world.acme
    )
    assert uploaded.status_code == 201, uploaded.text
    mine = uploaded.json()["id"]

    for method, path in (
        ("GET", "/v1/datasets/{}"),
        ("GET", "/v1/datasets/{}/items"),
        ("DELETE", "/v1/datasets/{}"),
    ):
        await hidden(world, method, path, mine, headers=world.globex)
    # an evaluation, a positional-bias request, a study's part or a monitor of it: the dataset
    # is unknown
    of_dataset = {"k": 2, "dataset_id": mine}
    part = {"name": "p", "protocol": "consistency", "evaluation": of_dataset}
    for path, body, field in (
        ("/v1/evaluations", {"model": "m1", "k": 1, "dataset_id": mine}, "dataset_id"),
        ("/v1/position-bias", {"model": "m1", "dataset_id": mine}, "dataset_id"),
        ("/v1/position-bias/jobs", {"model": "m1", "dataset_id": mine}, "dataset_id"),
        (
            "/v1/studies",
            {"name": "s", "models": ["m1"], "parts": [part]},
            "parts[0].evaluation.dataset_id",
        ),
        (
            "/v1/monitors",
            {"name": "m", "interval_s": 3600, "evaluation": {**of_dataset, "models": ["m1"]}},
            "evaluation.dataset_id",
        ),
    ):
        refused = await client.post(path, json=body, headers=world.globex)
        assert refused.status_code == 404, f"{path}: {refused.text}"
        assert refused.json()["errors"][0]["field"] == field
    listed = await client.get(f"/v1/evaluations?dataset_id={mine}", headers=world.globex)
    assert listed.json()["total"] == 0

    theirs = await client.get("/v1/datasets", headers=world.globex)
    assert mine not in ids(theirs, "datasets")
    samples = {d["id"] for d in theirs.json()["datasets"] if d["builtin"]}
    assert samples and theirs.json()["total"] == len(samples)
    own = await client.get("/v1/datasets", headers=world.acme)
    assert ids(own, "datasets") == samples | {mine} and own.json()["total"] == len(samples) + 1
    assert mine in ids(await client.get("/v1/datasets", headers=world.admin), "datasets")
    for headers in (world.acme, world.globex):
        sample = await client.get("/v1/datasets/gsm8k", headers=headers)
        assert sample.status_code == 200 and sample.json()["builtin"]
        assert (await client.get("/v1/datasets/gsm8k/items", headers=headers)).status_code == 200
    from_sample = {"model": "m1", "k": 1, "dataset_id": "gsm8k", "limit": 1}
    job = await client.post("/v1/evaluations", json=from_sample, headers=world.globex)
    assert job.status_code == 202, job.text

    assert (await client.get(f"/v1/datasets/{mine}", headers=world.admin)).status_code == 200
    deleted = await client.delete(f"/v1/datasets/{mine}", headers=world.acme)
    assert deleted.status_code == 204


def position_body() -> dict[str, Any]:
    item = {"id": "q", "question": "Which?", "answer": "yes", "distractor": "no"}
    return {"model": "m1", "items": [item], "conditions": ["medium"]}


async def test_another_tenants_position_bias_job_is_a_404(world: World) -> None:
    client = world.client
    created = await client.post("/v1/position-bias/jobs", json=position_body(), headers=world.acme)
    assert created.status_code == 202, created.text
    mine = created.json()["id"]
    for method in ("GET", "DELETE"):
        await hidden(world, method, "/v1/position-bias/jobs/{}", mine, headers=world.globex)
    for headers in (world.acme, world.admin):
        found = await client.get(f"/v1/position-bias/jobs/{mine}", headers=headers)
        assert found.status_code == 200, found.text


def monitor_body(name: str) -> dict[str, Any]:
    items = [{"id": f"q{i}", "question": f"What is {i}?", "answer": str(i)} for i in range(3)]
    evaluation = {"models": ["m1"], "k": 2, "items": items}
    return {"name": name, "interval_s": 3600, "evaluation": evaluation, "paused": True}


async def test_another_tenants_monitor_is_a_404_and_left_out_of_its_listing(
    world: World,
) -> None:
    client = world.client
    created = await client.post(
        "/v1/monitors", json=monitor_body("acme-nightly"), headers=world.acme
    )
    assert created.status_code == 201, created.text
    mine = created.json()["id"]
    theirs = await client.post(
        "/v1/monitors", json=monitor_body("globex-nightly"), headers=world.globex
    )
    assert theirs.status_code == 201, theirs.text

    for method, path, request in (
        ("GET", "/v1/monitors/{}", {}),
        ("GET", "/v1/monitors/{}/series?model=m1&metric=a_orig", {}),
        ("PATCH", "/v1/monitors/{}", {"json": {"paused": False}}),
        ("POST", "/v1/monitors/{}/runs", {}),
        ("DELETE", "/v1/monitors/{}", {}),
    ):
        await hidden(world, method, path, mine, headers=world.globex, **request)
    paused = (await client.get(f"/v1/monitors/{mine}", headers=world.acme)).json()
    assert paused["paused"] is True  # the refused PATCH changed nothing

    assert ids(await client.get("/v1/monitors", headers=world.globex), "monitors") == {
        theirs.json()["id"]
    }
    assert ids(await client.get("/v1/monitors", headers=world.acme), "monitors") == {mine}
    everyone = ids(await client.get("/v1/monitors", headers=world.admin), "monitors")
    assert everyone == {mine, theirs.json()["id"]}
    deleted = await client.delete(f"/v1/monitors/{mine}", headers=world.admin)
    assert deleted.status_code == 204


def study_body(name: str) -> dict[str, Any]:
    items = [{"id": f"q{i}", "question": f"What is {i}?", "answer": str(i)} for i in range(2)]
    part = {"name": "codes", "protocol": "consistency", "evaluation": {"k": 2, "items": items}}
    return {"name": name, "models": ["m1"], "parts": [part]}


async def test_another_tenants_study_and_its_parts_are_404s(world: World) -> None:
    client = world.client
    created = await client.post("/v1/studies", json=study_body("acme"), headers=world.acme)
    assert created.status_code == 202, created.text
    mine = created.json()["id"]
    theirs = (await client.post("/v1/studies", json=study_body("g"), headers=world.globex)).json()

    for path in ("/v1/studies/{}", "/v1/studies/{}/report", "/v1/studies/{}/report?format=csv"):
        await hidden(world, "GET", path, mine, headers=world.globex)
    status = (await client.get(f"/v1/studies/{mine}", headers=world.acme)).json()
    part_job = status["parts"][0]["job_id"]
    # the part's job is the study's tenant's
    await hidden(world, "GET", "/v1/evaluations/{}", part_job, headers=world.globex)
    assert (await client.get(f"/v1/evaluations/{part_job}", headers=world.acme)).status_code == 200

    assert ids(await client.get("/v1/studies", headers=world.globex), "studies") == {theirs["id"]}
    own = await client.get("/v1/studies", headers=world.acme)
    assert ids(own, "studies") == {mine} and own.json()["total"] == 1
    assert ids(await client.get("/v1/studies", headers=world.admin), "studies") == {
        mine,
        theirs["id"],
    }


async def test_open_local_mode_sees_every_tenants_and_makes_the_default_tenants(
    world: World, data_dir: Path
) -> None:
    made = await world.client.post("/v1/evaluations", json=job_body(), headers=world.acme)
    mine = made.json()["id"]
    async with app_client(data_dir, "open") as client:
        assert (await client.get(f"/v1/evaluations/{mine}")).status_code == 200
        assert mine in ids(await client.get("/v1/evaluations"), "evaluations")
        local = (await client.post("/v1/evaluations", json=job_body())).json()["id"]
    # what open mode made is the default tenant's: a key of that tenant sees it, acme's not
    default_key = await keys_of(world, "default")
    assert (await world.client.get(f"/v1/evaluations/{local}", headers=default_key)).is_success
    await hidden(world, "GET", "/v1/evaluations/{}", local, headers=world.acme)


async def keys_of(world: World, tenant: str) -> Headers:
    body = {"name": f"{tenant}-key", "tenant": tenant}
    created = await world.client.post("/v1/keys", json=body, headers=world.admin)
    assert created.status_code == 201, created.text
    return {"Authorization": f"Bearer {created.json()['key']}"}


async def test_a_tenant_is_a_short_slug_and_listed_with_its_key(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    for bad in ("Acme", "", "a b", "-x", "x" * 64, "acme\n"):
        refused = await world.client.post(
            "/v1/keys", json={"name": "k", "tenant": bad}, headers=world.admin
        )
        assert refused.status_code == 400, bad
        assert refused.json()["errors"][0]["field"] == "tenant"
    listed = (await world.client.get("/v1/keys", headers=world.admin)).json()["keys"]
    assert {(key["name"], key["tenant"]) for key in listed} == {
        ("operator", "ops"),
        ("acme-ci", "acme"),
        ("globex-ci", "globex"),
    }
    with pytest.raises(SystemExit) as refused_cli:
        main(["keys", "create", "bad", "--tenant", "Not A Slug"])
    assert refused_cli.value.code == 2
    assert "not a tenant name" in capsys.readouterr().err
    default = (await keys("create", "plain", capsys=capsys))[0]
    assert "tenant: default" in default
    lines = await keys("list", capsys=capsys)
    assert "tenant" in lines[0]
    assert any("acme-ci" in line and " acme " in line for line in lines)


async def test_rows_from_before_tenants_are_the_default_tenants(database_url: str) -> None:
    """Migration 0016 puts every existing key, evaluation, dataset, position-bias job, monitor
    and study in the tenant ``default``, and keeps the rows that refer to them (SQLite makes
    the evaluations' table anew: its items and answers must stay)."""
    engine = create_engine(database_url)
    try:
        await migrate(engine, "evaluator", "0015")
        async with engine.begin() as connection:
            for statement in OLD_ROWS:
                await connection.execute(sa.text(statement), {"hash": key_hash("sf_old")})
        await migrate(engine, "evaluator")
        async with engine.connect() as connection:
            for table in OWNED:
                tenants = await connection.scalars(sa.text(f"SELECT tenant FROM {table}"))
                assert set(tenants) == {"default"}, table
            for table in ("evaluator_evaluation_items", "evaluator_answers"):
                count = await connection.scalar(sa.text(f"SELECT count(*) FROM {table}"))
                assert count == 1, table
        grant = await ApiKeyStore(engine).grant_of("sf_old")
        assert grant is not None and grant.tenant == "default"
        # the key is unique per tenant now: another tenant may send it too
        async with engine.begin() as connection:
            await connection.execute(
                sa.text(
                    "INSERT INTO evaluator_evaluations (id, status, task, models, k, item_count, "
                    "settings, idempotency_key, request_hash, created_at, tenant) VALUES "
                    "('ev-other', 'queued', 'factual', '[]', 1, 0, '{}', 'once', 'h', 2.0, 'acme')"
                )
            )
        with pytest.raises(sa.exc.IntegrityError):
            async with engine.begin() as connection:
                await connection.execute(
                    sa.text(
                        "INSERT INTO evaluator_evaluations (id, status, task, models, k, "
                        "item_count, settings, idempotency_key, request_hash, created_at) VALUES "
                        "('ev-again', 'queued', 'factual', '[]', 1, 0, '{}', 'once', 'h', 2.0)"
                    )
                )
        async with engine.begin() as connection:
            await connection.execute(
                sa.text("DELETE FROM evaluator_evaluations WHERE id='ev-other'")
            )
        await downgrade(engine, "evaluator", "0015")  # and back, on both databases
        async with engine.connect() as connection:
            count = await connection.scalar(sa.text("SELECT count(*) FROM evaluator_answers"))
            assert count == 1
            items = await connection.scalar(sa.text("SELECT count(*) FROM evaluator_dataset_items"))
            assert items == 1
        await migrate(engine, "evaluator")
    finally:
        await engine.dispose()


OWNED = (
    "evaluator_api_keys",
    "evaluator_evaluations",
    "evaluator_datasets",
    "evaluator_position_jobs",
    "evaluator_monitors",
    "evaluator_studies",
)
OLD_ROWS = (
    "INSERT INTO evaluator_api_keys (id, name, key_hash, created_at) "
    "VALUES ('key-old', 'old', :hash, 1.0)",
    "INSERT INTO evaluator_evaluations (id, status, task, models, k, item_count, settings, "
    "idempotency_key, request_hash, created_at) "
    "VALUES ('ev-old', 'succeeded', 'factual', '[\"m\"]', 1, 1, '{}', 'once', 'h', 1.0)",
    "INSERT INTO evaluator_evaluation_items (evaluation_id, position, item_id, item, status, "
    "attempts, next_attempt_at) VALUES ('ev-old', 0, 'q', '{}', 'done', 0, 0.0)",
    "INSERT INTO evaluator_answers (evaluation_id, position, model, variant, prompt, status, "
    "attempts, next_attempt_at) VALUES ('ev-old', 0, 'm', 0, 'p', 'graded', 0, 0.0)",
    "INSERT INTO evaluator_datasets (id, name, task, item_count, builtin, created_at) "
    "VALUES ('ds-old', 'old', 'factual', 1, false, 1.0)",
    "INSERT INTO evaluator_dataset_items (dataset_id, position, item) VALUES ('ds-old', 0, '{}')",
    "INSERT INTO evaluator_position_jobs (id, status, request, order_count, attempts, "
    "created_at, idempotency_key) VALUES ('pb-old', 'queued', '{}', 1, 0, 1.0, 'once')",
    "INSERT INTO evaluator_monitors (id, name, kind, spec, models, interval_s, paused, "
    "created_at) VALUES ('mon-old', 'old', 'consistency', '{}', '[]', 60.0, true, 1.0)",
    "INSERT INTO evaluator_studies (id, name, spec, models, created_at, parts) "
    "VALUES ('st-old', 'old', '{}', '[]', 1.0, '[]')",
)
