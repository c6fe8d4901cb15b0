"""The evaluator's HTTP API in process (stand-in upstream), on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
import sqlalchemy as sa
from litestar.testing import AsyncTestClient
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from steadfast.services.evaluator.adapters.evaluations import paraphrase_sets as stored_sets
from steadfast.services.evaluator.adapters.evaluations.store import EvaluationStore
from steadfast.services.evaluator.app import create_app
from steadfast.services.evaluator.db.models import (
    answers,
    evaluation_items,
    evaluations,
    paraphrase_sets,
)
from steadfast.services.evaluator.domain.evaluations import legacy_request_hash, request_hash
from steadfast.services.evaluator.errors import UpstreamError
from steadfast.services.evaluator.records import Generated
from steadfast.services.evaluator.settings import EvaluatorSettings
from steadfast.shared.contracts.evaluator import EvaluationCreate
from steadfast.shared.contracts.scoring import Report, ReportFormat
from tests.integration.evaluator.stand_ins import Answerer, StandInUpstream


def answer_right(model: str, question: str) -> str | None:
    """The right answer; the model named "broken" fails every call."""
    return None if model == "broken" else question.split()[2].rstrip("?")


async def render(report: Report, fmt: ReportFormat) -> bytes:
    rows = [f"{item.item_id},{len(item.answers)}" for item in report.items]
    return ("item_id,answers\n" + "\n".join(rows)).encode()


def evaluator_app(
    database_url: str, tmp_path: Path, answerer: Answerer = answer_right, **settings: Any
) -> Any:
    """The evaluator on a stand-in upstream; the app runs in the test client's own loop."""
    defaults: dict[str, Any] = {
        "poll_s": 0.05,
        "retry_base_s": 0.01,
        "max_upload_bytes": 20_000,
        "log_json": False,
        "log_level": "WARNING",
        "auth": "open",
    }
    options = EvaluatorSettings(
        database_url=database_url, data_dir=str(tmp_path), **(defaults | settings)
    )
    return create_app(options, StandInUpstream(answerer), render)


@pytest.fixture
async def client(database_url: str, tmp_path: Path) -> AsyncIterator[AsyncTestClient[Any]]:
    async with AsyncTestClient(evaluator_app(database_url, tmp_path)) as test_client:
        yield test_client


def job_body(n: int = 3, **extra: Any) -> dict[str, Any]:
    items = [{"id": f"q{i}", "question": f"What is {i}?", "answer": str(i)} for i in range(n)]
    return {"models": ["m1", "m2"], "k": 2, "items": items, **extra}


async def wait_finished(client: AsyncTestClient[Any], job_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        status = (await client.get(f"/v1/evaluations/{job_id}")).json()
        if status["status"] not in ("queued", "running"):
            return dict(status)
        await asyncio.sleep(0.05)
    raise AssertionError(f"evaluation {job_id} did not finish")


async def test_job_lifecycle_items_and_reports(client: AsyncTestClient[Any]) -> None:
    created = await client.post("/v1/evaluations", json=job_body(name="first"))
    assert created.status_code == 202, created.text
    job_id = created.json()["id"]
    assert created.headers["location"] == f"/v1/evaluations/{job_id}"

    status = await wait_finished(client, job_id)
    assert status["status"] == "succeeded"
    assert status["progress"]["answer"] == {"done": 18, "failed": 0, "total": 18}
    assert status["progress"]["grade"]["done"] == 18
    assert status["progress"]["fraction"] == 1.0

    page = (await client.get(f"/v1/evaluations/{job_id}/items?limit=2&offset=1")).json()
    assert page["total"] == 3 and [item["id"] for item in page["items"]] == ["q1", "q2"]
    first = page["items"][0]
    assert [v["index"] for v in first["variants"]] == [0, 1, 2]
    assert first["models"][0]["agreement"] == 1.0
    assert first["gold"] == ["1"]

    report = (await client.get(f"/v1/evaluations/{job_id}/report")).json()
    assert {m["model"] for m in report["models"]} == {"m1", "m2"}
    assert report["models"][0]["metrics"]["A_orig"]["value"] == 1.0
    assert report["settings"]["instruction_role"] == "user"  # resolved: no strategy model
    csv = await client.get(f"/v1/evaluations/{job_id}/report?format=csv")
    assert csv.status_code == 200 and csv.headers["content-type"] == "text/csv; charset=utf-8"
    html = await client.get(f"/v1/evaluations/{job_id}/report?format=html")
    assert html.headers["content-type"] == "text/html; charset=utf-8"  # one charset, not two
    assert csv.text.splitlines()[1:] == ["q0,6", "q1,6", "q2,6"]
    bad_format = await client.get(f"/v1/evaluations/{job_id}/report?format=pdf")
    assert bad_format.status_code == 400 and "format" in bad_format.text

    listed = (await client.get("/v1/evaluations?status=succeeded&model=m2")).json()
    assert [e["id"] for e in listed["evaluations"]] == [job_id]
    assert (await client.get("/v1/evaluations?status=running")).json()["total"] == 0


async def test_a_list_page_shows_each_job_as_its_status_does_in_a_fixed_number_of_queries(
    client: AsyncTestClient[Any],
) -> None:
    async def submit(count: int, **extra: Any) -> None:
        for _ in range(count):
            created = await client.post("/v1/evaluations", json=job_body(n=2, **extra))
            await wait_finished(client, created.json()["id"])

    statements: list[str] = []
    engine = client.app.state.database.engine.sync_engine

    def count(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        runners = ("evaluator_evaluations.status IN", "evaluator_position_jobs")
        if not any(polled in statement for polled in runners):  # the job runners' own polls
            statements.append(statement)

    async def listed() -> tuple[list[dict[str, Any]], int]:
        statements.clear()
        sa.event.listen(engine, "before_cursor_execute", count)
        try:
            page = (await client.get("/v1/evaluations?limit=50")).json()
        finally:
            sa.event.remove(engine, "before_cursor_execute", count)
        return page["evaluations"], len(statements)

    await submit(1, models=["m1", "broken"])
    await submit(2)
    page, queries = await listed()
    for entry in page:  # the same status, progress and errors as the job's own page
        assert entry == (await client.get(f"/v1/evaluations/{entry['id']}")).json()
    failing = [entry for entry in page if entry["models"] == ["m1", "broken"]]
    assert failing[0]["error_count"] == len(failing[0]["errors"]) == 6
    assert failing[0]["progress"]["answer"]["failed"] == 6

    await submit(3)
    page, more_queries = await listed()
    assert len(page) == 6
    assert more_queries <= queries, statements  # jobs without failures add no query


async def test_a_status_poll_leaves_the_stored_results_in_the_database(
    client: AsyncTestClient[Any],
) -> None:
    created = await client.post("/v1/evaluations", json=job_body())
    job_id = created.json()["id"]
    await wait_finished(client, job_id)
    selected: list[str] = []
    engine = client.app.state.database.engine.sync_engine

    def record(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if statement.lstrip().upper().startswith("SELECT"):
            selected.append(statement)

    sa.event.listen(engine, "before_cursor_execute", record)
    try:
        status = (await client.get(f"/v1/evaluations/{job_id}")).json()
        polled = list(selected)
        report = (await client.get(f"/v1/evaluations/{job_id}/report")).json()
    finally:
        sa.event.remove(engine, "before_cursor_execute", record)
    assert status["status"] == "succeeded"
    assert not any("evaluator_evaluations.results" in s for s in polled), polled
    assert any("evaluator_evaluations.results" in s for s in selected[len(polled) :])
    assert report["models"][0]["metrics"]["A_orig"]["value"] == 1.0  # read from the results


async def test_a_summary_stored_by_an_earlier_version_is_counted_again_from_the_answers(
    client: AsyncTestClient[Any], database_url: str
) -> None:
    job_id = (await client.post("/v1/evaluations", json=job_body())).json()["id"]
    await wait_finished(client, job_id)
    fresh = (await client.get(f"/v1/evaluations/{job_id}/report")).json()["models"]
    engine = create_async_engine(database_url)
    try:
        async with engine.begin() as connection:
            row = evaluations.c.id == job_id
            results = await connection.scalar(sa.select(evaluations.c.results).where(row))
            for summary in results["models"]:  # an earlier version: no unparsed, other counts
                summary.pop("unparsed", None)
                summary.update(answered=1, failed=7, mean_agreement=0.1)
            await connection.execute(evaluations.update().where(row).values(results=results))
    finally:
        await engine.dispose()
    report = (await client.get(f"/v1/evaluations/{job_id}/report")).json()
    assert report["models"] == fresh
    assert [m["answered"] for m in fresh] == [9, 9] and fresh[0]["mean_agreement"] == 1.0


async def test_the_model_filter_pages_in_the_database_and_matches_whole_names(
    client: AsyncTestClient[Any],
) -> None:
    for models in (["m1", "m2"], ["m10"], ["m2"]):
        submitted = await client.post("/v1/evaluations", json=job_body(n=1, models=models))
        assert submitted.status_code == 202, submitted.text
    first = (await client.get("/v1/evaluations?model=m2&limit=1")).json()
    second = (await client.get("/v1/evaluations?model=m2&limit=1&offset=1")).json()
    assert first["total"] == second["total"] == 2
    ids = [page["evaluations"][0]["id"] for page in (first, second)]
    assert len(set(ids)) == 2
    only_m1 = (await client.get("/v1/evaluations?model=m1")).json()
    assert only_m1["total"] == 1 and only_m1["evaluations"][0]["models"] == ["m1", "m2"]


async def test_idempotency_key(client: AsyncTestClient[Any]) -> None:
    headers = {"Idempotency-Key": "abc"}
    first = await client.post("/v1/evaluations", json=job_body(), headers=headers)
    again = await client.post("/v1/evaluations", json=job_body(), headers=headers)
    assert first.json()["id"] == again.json()["id"]
    other = await client.post("/v1/evaluations", json=job_body(n=2), headers=headers)
    assert other.status_code == 422
    assert other.json()["errors"][0] | {"message": ""} == {
        "field": "Idempotency-Key",
        "source": "header",
        "message": "",
    }
    assert (await client.get("/v1/evaluations")).json()["total"] == 1
    # an empty key is no key at all: refused, naming the header (the second one was a 500)
    for _ in range(2):
        empty = await client.post(
            "/v1/evaluations", json=job_body(), headers={"Idempotency-Key": ""}
        )
        assert empty.status_code == 400
        error = empty.json()["errors"][0]
        assert (error["field"], error["source"]) == ("Idempotency-Key", "header")


async def test_an_idempotency_key_stored_by_an_earlier_version_still_matches(
    client: AsyncTestClient[Any], database_url: str
) -> None:
    headers = {"Idempotency-Key": "before-the-upgrade"}
    body = job_body()
    first = (await client.post("/v1/evaluations", json=body, headers=headers)).json()
    # as the version before this one stored it: a hash of every field
    legacy = legacy_request_hash(msgspec.convert(body, EvaluationCreate))
    engine = create_async_engine(database_url)
    async with engine.begin() as connection:
        await connection.execute(
            evaluations.update().where(evaluations.c.id == first["id"]).values(request_hash=legacy)
        )
    await engine.dispose()
    again = await client.post("/v1/evaluations", json=body, headers=headers)
    assert again.status_code == 202 and again.json()["id"] == first["id"]
    other = await client.post("/v1/evaluations", json=job_body(n=2), headers=headers)
    assert other.status_code == 422


@pytest.mark.parametrize("k", [5, None])
async def test_a_key_stored_when_k_defaulted_to_five_still_matches(
    client: AsyncTestClient[Any], database_url: str, k: int | None
) -> None:
    headers = {"Idempotency-Key": f"k-was-five-{k}"}
    body = {key: value for key, value in job_body(k=k).items() if value is not None}
    first = (await client.post("/v1/evaluations", json=body, headers=headers)).json()
    # what that version stored: "k": 5 left out as its default; a body without k ran with 5
    # and its legacy hash held every field, k = 5 included
    without_k = {key: value for key, value in body.items() if key != "k"}
    stored = msgspec.convert(without_k, EvaluationCreate)
    old_hash = (
        request_hash(stored)
        if k == 5
        else legacy_request_hash(msgspec.structs.replace(stored, k=5))
    )
    engine = create_async_engine(database_url)
    async with engine.begin() as connection:
        row = evaluations.update().where(evaluations.c.id == first["id"])
        await connection.execute(row.values(request_hash=old_hash))
    await engine.dispose()
    again = await client.post("/v1/evaluations", json=body, headers=headers)
    assert again.status_code == 202 and again.json()["id"] == first["id"]
    other = await client.post("/v1/evaluations", json={**body, "k": 3}, headers=headers)
    assert other.status_code == 422


async def test_a_key_stored_with_ten_paraphrases_refuses_a_retry_asking_for_five(
    client: AsyncTestClient[Any],
) -> None:
    headers = {"Idempotency-Key": "k-is-ten-now"}
    body = {key: value for key, value in job_body().items() if key != "k"}  # k = 10
    first = await client.post("/v1/evaluations", json=body, headers=headers)
    assert first.status_code == 202
    five = await client.post("/v1/evaluations", json={**body, "k": 5}, headers=headers)
    assert five.status_code == 422 and "Idempotency-Key" in five.text
    ten = await client.post("/v1/evaluations", json={**body, "k": 10}, headers=headers)
    assert ten.status_code == 202 and ten.json()["id"] == first.json()["id"]


@pytest.mark.parametrize(
    ("body", "status", "field"),
    [
        ({"items": [{"question": "q"}]}, 400, "model"),
        ({"model": "m", "k": 0, "items": [{"question": "q"}]}, 400, "k"),
        ({"model": "m", "items": [{"question": ""}]}, 400, "items[0].question"),
        (
            {"model": "m", "items": [{"question": "q"}], "instruction_role": "assistant"},
            400,
            "instruction_role",
        ),
        ({"model": "m", "dataset_id": "nope"}, 404, "dataset_id"),
        (
            {"model": "m", "items": [{"question": "q"}], "plain_per_round": 0}
            | {"toned_per_round": 0},
            400,
            "plain_per_round",
        ),
        ({"model": "m"}, 400, "items"),
        (
            {"model": "m", "items": [{"question": "q"}], "reuse_paraphrases_from": "x"},
            404,
            "reuse_paraphrases_from",
        ),
    ],
)
async def test_bad_submissions_name_the_field(
    client: AsyncTestClient[Any], body: dict[str, Any], status: int, field: str
) -> None:
    response = await client.post("/v1/evaluations", json=body)
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["errors"][0]["field"] == field


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"models": ["m", "m"], "items": [{"question": "q"}]}, "models[1]"),
        (
            {"model": "m", "items": [{"id": "a", "question": "q"}, {"id": "a", "question": "r"}]},
            "items[1].id",
        ),
        (  # the second item's id is item-2 by its position
            {"model": "m", "items": [{"id": "item-2", "question": "q"}, {"question": "r"}]},
            "items[1].id",
        ),
        ({"model": "m", "items": [{"question": "q"}], "seed": 2**31}, "seed"),
    ],
)
async def test_items_and_models_are_distinct_and_seeds_fit(
    client: AsyncTestClient[Any], body: dict[str, Any], field: str
) -> None:
    for path in ("/v1/evaluations", "/v1/evaluate"):
        response = await client.post(path, json=body | {"k": 2})
        assert response.status_code == 400, (path, response.text)
        assert response.json()["errors"][0]["field"] == field


async def test_an_offset_beyond_any_stored_row_is_a_400_naming_it(
    client: AsyncTestClient[Any],
) -> None:
    for path in ("/v1/evaluations", "/v1/datasets/gsm8k/items"):
        response = await client.get(path, params={"offset": 2**63})
        assert response.status_code == 400, response.text
        assert response.json()["errors"][0]["field"] == "offset"
        assert response.json()["errors"][0]["source"] == "query"


async def test_an_unknown_evaluation_is_a_404_naming_the_path_parameter(
    client: AsyncTestClient[Any],
) -> None:
    for response in (
        await client.get("/v1/evaluations/nothing"),
        await client.delete("/v1/evaluations/nothing"),
    ):
        assert response.status_code == 404
        error = response.json()["errors"][0]
        assert (error["field"], error["source"]) == ("evaluation_id", "path")


CHOICE = {"question": "Pick one.", "options": ["red", "blue"], "correct_option": "B"}


@pytest.mark.parametrize("path", ["/v1/evaluations", "/v1/evaluate"])
@pytest.mark.parametrize(
    ("item", "task", "field"),
    [
        ({"question": " \n "}, "factual", "items[1].question"),
        ({"question": "Q?", "answer": " "}, "factual", "items[1].answer"),
        ({"question": "Q?", "answers": ["a", ""]}, "factual", "items[1].answers[1]"),
        ({"question": "Q?", "answers": ["?!"]}, "factual", "items[1].answers[0]"),
        ({"question": "Q?", "answer": " "}, "math", "items[1].answer"),
        ({**CHOICE, "correct_option": "C"}, "choice", "items[1].correct_option"),
        ({**CHOICE, "task": "choice", "options": ["red", "  "]}, "factual", "items[1].options[1]"),
    ],
)
async def test_an_item_no_answer_could_be_graded_against_is_a_400_naming_it(
    client: AsyncTestClient[Any], path: str, item: dict[str, Any], task: str, field: str
) -> None:
    # the scoring service refused these only when the first answer was graded: every grade
    # of the item failed
    body = job_body(n=1, task=task)
    body["items"][0] = {**CHOICE, "id": "first"} if task == "choice" else body["items"][0]
    body["items"].append(item)
    response = await client.post(path, json=body)
    assert response.status_code == 400, response.text
    assert response.json()["errors"][0]["field"] == field


async def test_items_whose_gold_their_task_can_read_are_accepted(
    client: AsyncTestClient[Any],
) -> None:
    for task, item in (
        ("math", {"question": "What is 3 - 3?", "answer": "0"}),
        ("math", {"question": "What is 1?", "answer": "1", "answers": [" "]}),  # unread
        ("factual", {"question": "Capital of Italy?", "answer": "", "answers": ["Rome"]}),
        ("factual", {"question": "Capital of Italy?", "answer": "Rome", "options": ["a", "b"]}),
        ("choice", {"question": "A) red B) blue: which is blue?", "correct_option": "B"}),
        ("choice", {"question": "Which?", "options": ["a", "b"], "answer": " "}),  # unread
    ):
        body = {"models": ["m1"], "k": 1, "task": task, "items": [item]}
        accepted = await client.post("/v1/evaluations", json=body)
        assert accepted.status_code == 202, (item, accepted.text)


@pytest.mark.parametrize(
    ("method", "path", "field", "source"),
    [
        ("GET", "/v1/evaluations/a%00b", "evaluation_id", "path"),
        ("DELETE", "/v1/evaluations/a%00b", "evaluation_id", "path"),
        ("GET", "/v1/evaluations/a%00b/items", "evaluation_id", "path"),
        ("GET", "/v1/evaluations/a%00b/report", "evaluation_id", "path"),
        ("GET", "/v1/datasets/a%00b", "dataset_id", "path"),
        ("DELETE", "/v1/datasets/a%00b", "dataset_id", "path"),
        ("GET", "/v1/datasets/a%00b/items", "dataset_id", "path"),
        ("GET", "/v1/position-bias/jobs/a%00b", "job_id", "path"),
        ("DELETE", "/v1/position-bias/jobs/a%00b", "job_id", "path"),
        ("GET", "/v1/evaluations?model=a%00b", "model", "query"),
        ("GET", "/v1/evaluations?dataset_id=a%00b", "dataset_id", "query"),
        ("POST", "/v1/datasets?name=a%00b", "name", "query"),
        ("POST", "/v1/datasets", "name", "query"),  # missing altogether
    ],
)
async def test_a_bad_path_or_query_parameter_is_a_400_naming_it_on_every_database(
    client: AsyncTestClient[Any], method: str, path: str, field: str, source: str
) -> None:
    # a NUL was a 500 (a filter) or a 400 naming nothing (an id) on PostgreSQL; litestar
    # calls any parameter whose name begins with "data" the body's
    response = await client.request(method, path, content=b'{"question": "Q"}\n')
    assert response.status_code == 400, response.text
    error = response.json()["errors"][0]
    assert (error["field"], error["source"]) == (field, source)


async def test_a_nul_character_is_the_callers_error_on_every_database(
    client: AsyncTestClient[Any], database_url: str
) -> None:
    # PostgreSQL cannot store U+0000: it was a 500 there (SQLite stores it)
    body = job_body()
    body["items"][1]["question"] = "What is\u00001?"
    submitted = await client.post("/v1/evaluations", json=body)
    assert submitted.status_code == 400
    error = submitted.json()["errors"][0]
    assert error["field"] == "items[1].question" and "NUL" in error["message"]
    looked_up = await client.get("/v1/evaluations/a%00b")
    assert looked_up.status_code == 400 and "NUL" in looked_up.json()["detail"]


async def test_reused_paraphrase_sets_must_have_this_evaluations_k(
    client: AsyncTestClient[Any],
) -> None:
    earlier = (await client.post("/v1/evaluations", json=job_body())).json()["id"]
    await wait_finished(client, earlier)
    other_k = await client.post(
        "/v1/evaluations", json=job_body(k=3, reuse_paraphrases_from=earlier)
    )
    assert other_k.status_code == 422, other_k.text
    assert other_k.json()["errors"][0]["field"] == "reuse_paraphrases_from"
    assert "k=2" in other_k.json()["detail"]
    same_k = await client.post("/v1/evaluations", json=job_body(reuse_paraphrases_from=earlier))
    assert same_k.status_code == 202


async def test_cancel(client: AsyncTestClient[Any]) -> None:
    job_id = (await client.post("/v1/evaluations", json=job_body(n=50))).json()["id"]
    cancelled = await client.delete(f"/v1/evaluations/{job_id}")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    again = await client.delete(f"/v1/evaluations/{job_id}")
    assert again.status_code == 409
    assert (await client.delete("/v1/evaluations/missing")).status_code == 404


async def test_synchronous_evaluate(client: AsyncTestClient[Any]) -> None:
    body = {
        "model": "m1",
        "k": 2,
        "items": [{"question": "What is 7?"}, {"question": "What is 8?", "answer": "8"}],
    }
    response = await client.post("/v1/evaluate", json=body)
    assert response.status_code == 200, response.text
    result = response.json()
    assert [item["id"] for item in result["items"]] == ["item-1", "item-2"]
    no_gold = result["items"][0]["models"][0]
    assert no_gold["majority_answer"] == "7" and no_gold["agreement"] == 1.0
    assert no_gold["original_label"] is None
    assert result["items"][1]["models"][0]["original_label"] == "correct"
    assert result["models"][0]["metrics"]["A_orig"]["value"] == 1.0
    # the paraphrases' kinds reach scoring, as in a job
    kinds = {v["kind"] for item in result["items"] for v in item["variants"][1:]}
    assert set(result["models"][0]["extra"]["flips_by_kind"]) == kinds and kinds

    too_big = {"model": "m1", "k": 10, "items": [{"question": f"q{i}"} for i in range(30)]}
    response = await client.post("/v1/evaluate", json=too_big)
    assert response.status_code == 413
    assert "/v1/evaluations" in response.json()["detail"]


async def test_synchronous_evaluate_labels_a_maths_reply_cut_before_its_answer_invalid(
    database_url: str, tmp_path: Path
) -> None:
    def loops_on_paraphrases(model: str, question: str) -> str | Generated:
        if "(variant" in question:
            return Generated(text="Step 1: 20 + 20.\nStep 2: 20 + 20.\nStep 3: 20", cut=True)
        return "7"

    items = [
        {"question": "What is 3 + 4?", "answer": "7"},
        {"question": "What is 3 + 4 again?"},  # no gold: unparsed, with no label
    ]
    body = {"model": "m1", "k": 2, "task": "math", "items": items}
    async with AsyncTestClient(
        evaluator_app(database_url, tmp_path, loops_on_paraphrases)
    ) as client:
        response = await client.post("/v1/evaluate", json=body)
    assert response.status_code == 200, response.text
    labelled, unlabelled = (
        [(v["index"], v["answers"][0]["label"], v["answers"][0]["value"]) for v in item["variants"]]
        for item in response.json()["items"]
    )
    assert labelled == [(0, "correct", "7"), (1, "invalid", None), (2, "invalid", None)]
    assert unlabelled == [(0, None, "7"), (1, None, None), (2, None, None)]


async def test_without_k_each_question_gets_method_default_of_ten_paraphrases(
    client: AsyncTestClient[Any],
) -> None:
    body = {"model": "m1", "items": [{"question": "What is 7?", "answer": "7"}]}
    response = await client.post("/v1/evaluate", json=body)
    assert response.status_code == 200, response.text
    result = response.json()
    assert result["k"] == 10
    assert [v["index"] for v in result["items"][0]["variants"]] == list(range(11))


async def test_dataset_upload_and_samples(client: AsyncTestClient[Any]) -> None:
    lines = [json.dumps({"problem": f"What is {i}?", "answer": str(i)}) for i in range(4)]
    uploaded = await client.post("/v1/datasets?name=mine.jsonl", content="\n".join(lines).encode())
    assert uploaded.status_code == 201, uploaded.text
    dataset = uploaded.json()
    assert dataset["item_count"] == 4 and dataset["builtin"] is False

    csv_body = "Question,Best Answer,Correct Answers\nWhat is 1?,1,1; one\n"
    uploaded_csv = await client.post("/v1/datasets?name=t.csv&format=csv", content=csv_body)
    assert uploaded_csv.status_code == 201, uploaded_csv.text
    items = (await client.get(f"/v1/datasets/{uploaded_csv.json()['id']}/items")).json()["items"]
    assert items[0]["answers"] == ["1", "one"] and items[0]["answer"] == "1"

    bad = "\n".join([lines[0], "{not json", json.dumps({"answer": "3"})])
    rejected = await client.post("/v1/datasets?name=bad.jsonl", content=bad)
    assert rejected.status_code == 422
    fields = [e["field"] for e in rejected.json()["errors"]]
    assert fields == ["line 2: line", "line 3: question"]

    too_large = await client.post("/v1/datasets?name=big.jsonl", content=b"x" * 30_000)
    assert too_large.status_code == 413

    names = {d["name"] for d in (await client.get("/v1/datasets")).json()["datasets"]}
    assert {"gsm8k", "simpleqa", "truthfulqa", "math500", "mmlu", "squad_it", "mine.jsonl"} <= names
    sample = (await client.get("/v1/datasets/gsm8k")).json()
    assert sample["builtin"] and sample["license"] == "MIT" and sample["item_count"] <= 200

    job = await client.post(
        "/v1/evaluations", json={"model": "m1", "k": 1, "dataset_id": dataset["id"], "limit": 2}
    )
    assert job.status_code == 202
    status = await wait_finished(client, job.json()["id"])
    assert status["item_count"] == 2 and status["status"] == "succeeded"
    assert status["dataset_id"] == dataset["id"]


async def test_evaluations_are_found_by_the_sample_name_they_were_asked_with(
    client: AsyncTestClient[Any],
) -> None:
    job = await client.post(
        "/v1/evaluations", json={"model": "m1", "k": 1, "dataset_id": "gsm8k", "limit": 1}
    )
    assert job.status_code == 202, job.text
    found = (await client.get("/v1/evaluations", params={"dataset_id": "gsm8k"})).json()
    assert [evaluation["id"] for evaluation in found["evaluations"]] == [job.json()["id"]]


async def test_evaluate_keeps_its_answers_when_the_metrics_cannot_be_computed(
    database_url: str, tmp_path: Path
) -> None:
    class ScoringDown(StandInUpstream):
        async def consistency(self, request: Any) -> dict[str, Any]:
            raise UpstreamError("scoring: unavailable")

    settings = EvaluatorSettings(
        database_url=database_url, data_dir=str(tmp_path), retry_base_s=0.01, auth="open"
    )
    app = create_app(settings, ScoringDown(answer_right), render)
    async with AsyncTestClient(app) as client:
        body = {"model": "m1", "k": 1, "items": [{"question": "What is 7?", "answer": "7"}]}
        response = await client.post("/v1/evaluate", json=body)
    assert response.status_code == 200, response.text
    result = response.json()
    assert result["items"][0]["models"][0]["original_answer"] == "7"
    assert result["notes"] and "scoring: unavailable" in result["notes"][0]


async def test_an_uploaded_dataset_can_be_deleted_a_sample_cannot(
    client: AsyncTestClient[Any],
) -> None:
    line = json.dumps({"question": "What is 1?", "answer": "1"})
    dataset = (await client.post("/v1/datasets?name=gone.jsonl", content=line.encode())).json()
    job = await client.post(
        "/v1/evaluations", json={"model": "m1", "k": 1, "dataset_id": dataset["id"]}
    )
    finished = await wait_finished(client, job.json()["id"])
    assert (await client.delete(f"/v1/datasets/{dataset['id']}")).status_code == 204
    assert (await client.get(f"/v1/datasets/{dataset['id']}")).status_code == 404
    gone = await client.delete(f"/v1/datasets/{dataset['id']}")
    assert gone.status_code == 404 and gone.json()["errors"][0]["source"] == "path"
    # the evaluation of it keeps its items and results
    items = (await client.get(f"/v1/evaluations/{finished['id']}/items")).json()
    assert items["total"] == 1
    sample = await client.delete("/v1/datasets/gsm8k")
    assert sample.status_code == 409 and "built-in" in sample.json()["detail"]
    assert (await client.get("/v1/datasets/gsm8k")).status_code == 200


async def test_a_model_generator_or_judge_the_gateway_does_not_know_is_refused_up_front(
    database_url: str, tmp_path: Path
) -> None:
    upstream = StandInUpstream(answer_right)
    upstream.routes = {"m1", "local", "paraphrase-vote:m1"}
    settings = EvaluatorSettings(database_url=database_url, data_dir=str(tmp_path), auth="open")
    app = create_app(settings, upstream, render)
    items = [{"question": "What is 7?", "answer": "7"}]
    async with AsyncTestClient(app) as client:
        for path in ("/v1/evaluations", "/v1/evaluate"):
            for body, field, status in (
                ({"models": ["m1", "m2"]}, "models[1]", 422),
                ({"model": "m1", "generator": "gpt-9"}, "generator", 422),
                (
                    {"model": "m1", "grader": "llm", "judge_models": ["m1", "m2"]},
                    "judge_models[1]",
                    422,
                ),
                (
                    {"model": "m1", "grader": "llm", "judge_models": ["m1", "m1"]},
                    "judge_models[1]",
                    400,
                ),
                ({"model": "m1", "judge_models": ["m1"] * 10}, "judge_models", 400),
            ):
                response = await client.post(path, json={**body, "k": 1, "items": items})
                assert response.status_code == status, response.text
                assert response.json()["errors"][0]["field"] == field
        assert upstream.paraphrased == {}  # refused before anything was asked of a model
        known = {"models": ["m1", "paraphrase-vote:m1"], "k": 1, "items": items}
        assert (await client.post("/v1/evaluations", json=known)).status_code == 202
        # judges are only asked by the llm grader, of factual answers; none named: the default
        for unasked in (
            {"judge_models": ["gpt-9"]},
            {"grader": "llm", "task": "math", "judge_models": ["gpt-9"]},
            {"grader": "llm"},
            {"grader": "llm", "judge_models": []},
        ):
            body = {"model": "m1", "k": 1, "items": items, **unasked}
            accepted = await client.post("/v1/evaluations", json=body)
            assert accepted.status_code == 202, (unasked, accepted.text)


async def test_both_ways_to_evaluate_refuse_a_request_alike_and_in_one_order(
    database_url: str, tmp_path: Path
) -> None:
    """``/v1/evaluate`` and ``/v1/evaluations`` run one check: the same refusal for the same
    body, the caller's own mistakes before a route the gateway does not know."""
    upstream = StandInUpstream(answer_right)
    upstream.routes = {"m1", "local"}
    settings = EvaluatorSettings(database_url=database_url, data_dir=str(tmp_path), auth="open")
    twice = [{"id": "a", "question": "What is 7?", "answer": "7"}] * 2
    blank_gold = [{"question": "Who?", "answer": " ? "}]
    cases = [
        ({"models": ["m9"], "items": twice}, 400, "items[1].id"),
        ({"models": ["m9"], "items": blank_gold}, 400, "items[0].answer"),
        ({"items": twice}, 400, "model"),
        (
            {"model": "m1", "plain_per_round": 0, "toned_per_round": 0, "items": twice},
            400,
            "plain_per_round",
        ),
        ({"models": ["m1", "m9"], "items": twice[:1]}, 422, "models[1]"),
    ]
    # a job's own lookups come after the settings: a model named twice before an unknown dataset
    job_only = [
        ({"models": ["m1", "m1"], "dataset_id": "nowhere"}, 400, "models[1]"),
        ({"model": "m1", "dataset_id": "nowhere"}, 404, "dataset_id"),
    ]
    async with AsyncTestClient(create_app(settings, upstream, render)) as client:
        for body, status, field in cases:
            for path in ("/v1/evaluate", "/v1/evaluations"):
                response = await client.post(path, json={**body, "k": 1})
                assert response.status_code == status, (path, body, response.text)
                assert response.json()["errors"][0]["field"] == field, (path, body)
        for body, status, field in job_only:
            response = await client.post("/v1/evaluations", json={**body, "k": 1})
            assert response.status_code == status, (body, response.text)
            assert response.json()["errors"][0]["field"] == field, body
    assert upstream.paraphrased == {}


async def rows_of(engine: AsyncEngine, evaluation_id: str) -> tuple[int, int, set[str]]:
    """(items, answers, paraphrase set ids) stored for an evaluation."""
    async with engine.connect() as connection:
        counts = [
            await connection.scalar(
                sa.select(sa.func.count()).where(table.c.evaluation_id == evaluation_id)
            )
            for table in (evaluation_items, answers)
        ]
        set_ids = await connection.scalars(
            sa.select(evaluation_items.c.paraphrase_set_id).where(
                evaluation_items.c.evaluation_id == evaluation_id
            )
        )
        return counts[0], counts[1], set(set_ids)


async def sets_by_question(engine: AsyncEngine, evaluation_id: str) -> dict[str, str | None]:
    query = sa.select(evaluation_items.c.item, evaluation_items.c.paraphrase_set_id).where(
        evaluation_items.c.evaluation_id == evaluation_id
    )
    async with engine.connect() as connection:
        return {item["question"]: set_id for item, set_id in await connection.execute(query)}


async def test_retention_deletes_evaluations_finished_before_the_cutoff_and_sets_left_unused(
    database_url: str, tmp_path: Path
) -> None:
    ids = []
    async with AsyncTestClient(evaluator_app(database_url, tmp_path)) as client:
        for questions in (range(3), range(10, 12)):
            items = [{"question": f"What is {i}?"} for i in questions]
            created = await client.post("/v1/evaluations", json=job_body(items=items))
            ids.append(created.json()["id"])
            assert (await wait_finished(client, ids[-1]))["status"] == "succeeded"
    old, recent = ids
    engine = create_async_engine(database_url)
    try:
        async with AsyncTestClient(evaluator_app(database_url, tmp_path, run_jobs=False)) as client:
            # asked again, a question reuses the set the old evaluation stored for it; a new
            # question has no set yet
            items = [{"question": "What is 1?"}, {"question": "What is 99?"}]
            queued = (await client.post("/v1/evaluations", json=job_body(items=items))).json()
            queued = queued["id"]
            old_rows, recent_rows = await rows_of(engine, old), await rows_of(engine, recent)
            assert old_rows[:2] == (3, 18) and recent_rows[:2] == (2, 12)
            old_sets = await sets_by_question(engine, old)
            assert await sets_by_question(engine, queued) == {
                "What is 1?": old_sets["What is 1?"],
                "What is 99?": None,
            }
            async with engine.begin() as connection:
                for evaluation_id, finished_at in ((old, 100.0), (recent, 300.0), (queued, 50.0)):
                    row = evaluations.update().where(evaluations.c.id == evaluation_id)
                    await connection.execute(row.values(finished_at=finished_at))
                await connection.execute(
                    paraphrase_sets.update().values(created_at=100.0, used_at=100.0)
                )
                # stored long ago, but an evaluation took it after the cutoff
                taken = paraphrase_sets.update().where(
                    paraphrase_sets.c.id == old_sets["What is 2?"]
                )
                await connection.execute(taken.values(used_at=250.0))

            store = EvaluationStore(engine)
            assert await store.purge_finished_before(200.0, batch=1, chunk=5) == 1
            assert await store.purge_unused_sets_before(200.0, chunk=1) == 1
            assert (await client.get(f"/v1/evaluations/{old}")).status_code == 404
            assert await rows_of(engine, old) == (0, 0, set())
            assert await rows_of(engine, recent) == recent_rows
            async with engine.connect() as connection:
                kept = set(await connection.scalars(sa.select(paraphrase_sets.c.id)))
            assert kept == recent_rows[2] | {old_sets["What is 1?"], old_sets["What is 2?"]}
            report = await client.get(f"/v1/evaluations/{recent}/report")
            assert report.status_code == 200 and len(report.json()["items"]) == 2
            assert (await client.get(f"/v1/evaluations/{queued}")).json()["status"] == "queued"
    finally:
        await engine.dispose()


async def test_a_sweep_passes_over_evaluations_another_sweep_holds_and_ends(
    postgres_url: str, tmp_path: Path
) -> None:
    ids = []
    async with AsyncTestClient(evaluator_app(postgres_url, tmp_path)) as client:
        for question in range(3):
            items = [{"question": f"What is {question}?"}]
            created = await client.post("/v1/evaluations", json=job_body(items=items))
            ids.append(created.json()["id"])
            assert (await wait_finished(client, ids[-1]))["status"] == "succeeded"
    held = sorted(ids)[0]
    engine = create_async_engine(postgres_url)
    try:
        async with engine.begin() as connection:
            await connection.execute(evaluations.update().values(finished_at=100.0))
        store = EvaluationStore(engine)
        async with engine.connect() as other_sweep:
            transaction = await other_sweep.begin()
            lock = sa.select(evaluations.c.id).where(evaluations.c.id == held).with_for_update()
            await other_sweep.execute(lock)
            purged = await asyncio.wait_for(store.purge_finished_before(200.0, batch=1), 20)
            await transaction.rollback()
        assert purged == 2
        async with engine.connect() as connection:
            assert list(await connection.scalars(sa.select(evaluations.c.id))) == [held]
        assert await store.purge_finished_before(200.0, batch=1) == 1
    finally:
        await engine.dispose()


async def test_a_set_the_sweep_deleted_meanwhile_is_made_anew_not_a_failed_submission(
    database_url: str, tmp_path: Path
) -> None:
    async with AsyncTestClient(evaluator_app(database_url, tmp_path)) as client:
        items = [{"question": "What is 5?"}]
        first = (await client.post("/v1/evaluations", json=job_body(items=items))).json()["id"]
        await wait_finished(client, first)
        real_take = stored_sets._take

        async def swept_first(connection: Any, set_ids: Any) -> set[str]:
            # the sweep won the race: the set is gone when the submission takes it
            await connection.execute(evaluation_items.delete())
            await connection.execute(paraphrase_sets.delete())
            return await real_take(connection, set_ids)

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(stored_sets, "_take", swept_first)
            again = await client.post("/v1/evaluations", json=job_body(items=items))
        assert again.status_code == 202, again.text
        assert (await wait_finished(client, again.json()["id"]))["status"] == "succeeded"


async def test_a_service_with_a_retention_period_deletes_what_finished_before_it(
    database_url: str, tmp_path: Path
) -> None:
    one_second = 1 / 86400
    app = evaluator_app(database_url, tmp_path, retention_days=one_second, retention_sweep_s=0.05)
    async with AsyncTestClient(app) as client:
        job_id = (await client.post("/v1/evaluations", json=job_body())).json()["id"]
        assert (await wait_finished(client, job_id))["status"] == "succeeded"
        deadline = time.monotonic() + 20
        while (await client.get(f"/v1/evaluations/{job_id}")).status_code != 404:
            assert time.monotonic() < deadline, "the finished evaluation was kept"
            await asyncio.sleep(0.05)
    engine = create_async_engine(database_url)
    try:
        assert await rows_of(engine, job_id) == (0, 0, set())
    finally:
        await engine.dispose()


class MendedModel:
    """The model named "broken" fails every call until ``mended``; the others answer right."""

    def __init__(self) -> None:
        self.mended = False

    def __call__(self, model: str, question: str) -> str | None:
        if model == "broken" and not self.mended:
            return None
        return question.split()[2].rstrip("?")


async def test_a_retry_runs_only_the_failed_parts_again(database_url: str, tmp_path: Path) -> None:
    model = MendedModel()
    upstream = StandInUpstream(model)
    settings = EvaluatorSettings(
        database_url=database_url,
        data_dir=str(tmp_path),
        poll_s=0.05,
        retry_base_s=0.01,
        max_attempts=2,
        log_json=False,
        log_level="WARNING",
        auth="open",
    )
    async with AsyncTestClient(create_app(settings, upstream, render)) as client:
        job_id = (
            await client.post("/v1/evaluations", json=job_body(models=["m1", "broken"]))
        ).json()["id"]
        first = await wait_finished(client, job_id)
        assert first["status"] == "succeeded" and first["error_count"] == 9  # 3 items × 3
        assert "9 recorded failures" in first["message"]
        m1_calls = sum(n for (m, _), n in upstream.answered.items() if m == "m1")

        model.mended = True  # the provider's outage is over
        busy = await client.post(f"/v1/evaluations/{job_id}/retry")
        assert busy.status_code == 202, busy.text
        assert busy.json() == {"id": job_id, "status": "queued"}
        again = await wait_finished(client, job_id)
        assert again["status"] == "succeeded" and again["error_count"] == 0, again
        assert again["message"] is None
        # m1's answers stood: only broken's nine were asked again
        assert sum(n for (m, _), n in upstream.answered.items() if m == "m1") == m1_calls
        assert sum(n for (m, _), n in upstream.answered.items() if m == "broken") == 9
        report = (await client.get(f"/v1/evaluations/{job_id}/report?format=json")).json()
        broken = next(s for s in report["models"] if s["model"] == "broken")
        assert broken["answered"] == 9 and broken["failed"] == 0

        nothing = await client.post(f"/v1/evaluations/{job_id}/retry")
        assert nothing.status_code == 409 and "no failed part" in nothing.json()["detail"]
        assert (await client.post("/v1/evaluations/missing/retry")).status_code == 404
        running = (await client.post("/v1/evaluations", json=job_body(n=40))).json()["id"]
        early = await client.post(f"/v1/evaluations/{running}/retry")
        assert early.status_code == 409 and early.json()["errors"][0]["field"] == "evaluation_id"


async def test_the_language_an_item_was_asked_in_is_kept_with_it(
    client: AsyncTestClient[Any], database_url: str
) -> None:
    items = [
        {"id": "en", "question": "What is 4?", "answer": "4"},
        {
            "id": "it",
            "question": "Qual è il numero che viene dopo il 3 e prima del 5?",
            "answer": "4",
        },
    ]
    job_id = (await client.post("/v1/evaluations", json=job_body(items=items))).json()["id"]
    await wait_finished(client, job_id)
    page = (await client.get(f"/v1/evaluations/{job_id}/items")).json()
    assert {item["id"]: item["language"] for item in page["items"]} == {"en": "en", "it": "it"}
    report = (await client.get(f"/v1/evaluations/{job_id}/report?format=html")).text
    assert report  # the rendered settings carry the languages too (rendering is scoring's)
    engine = create_async_engine(database_url)
    try:
        async with engine.begin() as connection:
            stored = await connection.execute(
                sa.select(evaluation_items.c.item_id, evaluation_items.c.language).where(
                    evaluation_items.c.evaluation_id == job_id
                )
            )
            assert dict(stored.all()) == {"en": "en", "it": "it"}
            # a row made before the language was kept was asked in English, whatever its text
            await connection.execute(
                evaluation_items.update()
                .where(evaluation_items.c.evaluation_id == job_id)
                .values(language=None)
            )
    finally:
        await engine.dispose()
    page = (await client.get(f"/v1/evaluations/{job_id}/items")).json()
    assert {item["language"] for item in page["items"]} == {"en"}
