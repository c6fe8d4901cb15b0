"""``steadfast.client`` against a scripted local HTTP server: retries on 429/503 after the
server's Retry-After, one idempotency key across the retries of a create, the key from the
environment, typed results, paging, waiting with progress, and the blocking ``Client`` inside a
running event loop."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import msgspec
import pytest
from aiohttp import web

from steadfast.client import (
    ApiError,
    AsyncClient,
    Client,
    EvaluateRequest,
    EvaluationCreate,
    EvaluationItem,
)
from steadfast.shared.backoff import Backoff


def status_body(job_id: str, status: str, done: int = 0) -> dict[str, Any]:
    phase = {"done": done, "total": 4}
    return {
        "id": job_id,
        "status": status,
        "task": "factual",
        "models": ["m"],
        "k": 2,
        "item_count": 2,
        "progress": {"paraphrase": phase, "answer": phase, "grade": phase},
        "timings": {"created_at": "2026-12-04T21:00:00Z"},
    }


@dataclass
class Script:
    """What the server answers, and what it was asked."""

    #: statuses to answer POST /v1/evaluations with before accepting, each with Retry-After
    refusals: list[tuple[int, str | None]] = field(default_factory=list)
    statuses: list[str] = field(default_factory=lambda: ["queued", "running", "succeeded"])
    item_total: int = 5
    creates: list[dict[str, str]] = field(default_factory=list)
    create_times: list[float] = field(default_factory=list)
    bodies: list[Any] = field(default_factory=list)
    polls: int = 0


def make_app(script: Script) -> web.Application:
    async def create(request: web.Request) -> web.Response:
        script.creates.append(dict(request.headers))
        script.create_times.append(time.monotonic())
        script.bodies.append(await request.json())
        if script.refusals:
            status, retry_after = script.refusals.pop(0)
            headers = {"Retry-After": retry_after} if retry_after else {}
            problem = {"title": "Busy", "status": status, "detail": "try later"}
            return web.json_response(problem, status=status, headers=headers)
        return web.json_response({"id": "ev-1", "status": "queued"}, status=202)

    async def bad(request: web.Request) -> web.Response:
        script.creates.append(dict(request.headers))
        problem = {
            "title": "Invalid request",
            "status": 400,
            "detail": "k: expected >= 1",
            "errors": [{"field": "k", "message": "expected >= 1", "source": "body"}],
        }
        return web.json_response(problem, status=400, content_type="application/problem+json")

    async def evaluation(request: web.Request) -> web.Response:
        script.polls += 1
        status = script.statuses[min(script.polls - 1, len(script.statuses) - 1)]
        return web.json_response(status_body(request.match_info["id"], status, script.polls))

    async def items(request: web.Request) -> web.Response:
        limit, offset = int(request.query["limit"]), int(request.query["offset"])
        rows = [
            {
                "id": f"q{n}",
                "question": f"question {n}",
                "status": "complete",
                "variants": [],
                "models": [],
            }
            for n in range(offset, min(offset + limit, script.item_total))
        ]
        page = {"items": rows, "total": script.item_total, "limit": limit, "offset": offset}
        return web.json_response(page)

    app = web.Application()
    app.router.add_post("/v1/evaluations", create)
    app.router.add_post("/v1/evaluate", bad)
    app.router.add_get("/v1/evaluations/{id}", evaluation)
    app.router.add_get("/v1/evaluations/{id}/items", items)
    return app


@pytest.fixture
def served() -> Iterator[tuple[str, Script]]:
    """The scripted server on a loop of its own, so that blocking clients can call it too."""
    script, loop, ready = Script(), asyncio.new_event_loop(), threading.Event()
    runner = web.AppRunner(make_app(script))
    address: list[str] = []

    async def start() -> None:
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        address.append(f"http://127.0.0.1:{port}")
        ready.set()

    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(start(), loop)
    assert ready.wait(10)
    yield address[0], script
    asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)
    loop.close()


def request() -> EvaluationCreate:
    return EvaluationCreate(models=["m"], k=2, items=[EvaluationItem(question="Why?")])


def quick(client: AsyncClient, attempts: int = 4) -> AsyncClient:
    client.retries = Backoff(attempts=attempts, base_delay_s=0.01, max_delay_s=0.01)
    return client


async def test_a_busy_server_is_asked_again_with_the_same_idempotency_key(
    served: tuple[str, Script],
) -> None:
    url, script = served
    script.refusals = [(503, None), (429, None)]
    async with AsyncClient(url) as client:
        accepted = await quick(client).create_evaluation(request())
    assert accepted.id == "ev-1"
    keys = {headers["Idempotency-Key"] for headers in script.creates}
    assert len(script.creates) == 3 and len(keys) == 1
    assert script.bodies[0] == msgspec.to_builtins(request())


async def test_the_servers_retry_after_is_waited_for(served: tuple[str, Script]) -> None:
    url, script = served
    script.refusals = [(503, "1")]
    async with AsyncClient(url) as client:
        await quick(client).create_evaluation(request())
    assert script.create_times[1] - script.create_times[0] >= 1.0


async def test_retries_end_with_the_servers_problem(served: tuple[str, Script]) -> None:
    url, script = served
    script.refusals = [(503, None)] * 5
    async with AsyncClient(url) as client:
        with pytest.raises(ApiError) as caught:
            await quick(client, attempts=3).create_evaluation(request())
    assert caught.value.status == 503 and caught.value.problem.detail == "try later"
    assert len(script.creates) == 3


async def test_a_refused_request_is_not_asked_again_and_names_the_field(
    served: tuple[str, Script],
) -> None:
    url, script = served
    async with AsyncClient(url) as client:
        with pytest.raises(ApiError) as caught:
            await quick(client).evaluate(EvaluateRequest(models=["m"], items=request().items or []))
    assert caught.value.status == 400
    assert caught.value.problem.errors and caught.value.problem.errors[0].field == "k"
    assert len(script.creates) == 1


async def test_the_key_comes_from_the_argument_or_the_environment(
    served: tuple[str, Script], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, script = served
    monkeypatch.setenv("STEADFAST_API_KEY", "sf_from_env")
    async with AsyncClient(url) as client:
        await client.create_evaluation(request())
    async with AsyncClient(url, api_key="sf_given") as client:
        await client.create_evaluation(request())
    monkeypatch.delenv("STEADFAST_API_KEY")
    async with AsyncClient(url) as client:
        await client.create_evaluation(request())
    sent = [headers.get("Authorization") for headers in script.creates]
    assert sent == ["Bearer sf_from_env", "Bearer sf_given", None]


async def test_the_address_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STEADFAST_EVALUATOR_URL", "http://evaluator.internal:9000/")
    assert AsyncClient().base_url == "http://evaluator.internal:9000"
    monkeypatch.delenv("STEADFAST_EVALUATOR_URL")
    assert AsyncClient().base_url == "http://127.0.0.1:8000"


async def test_wait_reports_progress_until_the_job_is_finished(
    served: tuple[str, Script],
) -> None:
    url, _ = served
    seen: list[str] = []
    async with AsyncClient(url) as client:
        final = await client.wait("ev-1", progress=lambda s: seen.append(s.status), poll_s=0.01)
    assert seen == ["queued", "running", "succeeded"]
    assert final.status == "succeeded" and final.progress.answer.done == 3


async def test_wait_gives_up_after_its_timeout(served: tuple[str, Script]) -> None:
    url, script = served
    script.statuses = ["running"]
    async with AsyncClient(url) as client:
        with pytest.raises(TimeoutError, match="still running"):
            await client.wait("ev-1", poll_s=0.01, timeout_s=0.05)


async def test_every_item_is_read_page_by_page(served: tuple[str, Script]) -> None:
    url, _ = served
    async with AsyncClient(url) as client:
        results = await client.all_items("ev-1", page_size=2)
    assert [result.id for result in results] == ["q0", "q1", "q2", "q3", "q4"]


async def test_the_blocking_client_works_inside_a_running_loop(
    served: tuple[str, Script],
) -> None:
    url, _ = served
    with Client(url) as client:
        accepted = client.create_evaluation(request())
        final = client.wait(accepted.id, poll_s=0.01)
        ids = [result.id for result in client.iter_items(accepted.id, page_size=3)]
    assert (accepted.id, final.status) == ("ev-1", "succeeded")
    assert ids == ["q0", "q1", "q2", "q3", "q4"]
    with pytest.raises(RuntimeError, match="closed"):
        client.evaluation("ev-1")


def test_every_call_of_the_async_client_has_a_blocking_twin() -> None:
    import inspect

    calls = {
        name
        for name, member in vars(AsyncClient).items()
        if inspect.iscoroutinefunction(member) and not name.startswith("_")
    } - {"close", "__aenter__", "__aexit__"}
    assert len(calls) >= 30
    missing = sorted(name for name in calls if not callable(getattr(Client, name, None)))
    assert missing == []


def test_a_closed_client_leaves_no_thread_behind(served: tuple[str, Script]) -> None:
    url, script = served
    script.statuses = ["running"]
    with Client(url) as client, pytest.raises(TimeoutError):
        client.wait("ev-1", poll_s=0.01, timeout_s=0.1)
    assert not client._thread.is_alive()  # closed: the thread is gone, nothing left polling


def test_a_progress_callback_may_not_call_the_client(served: tuple[str, Script]) -> None:
    url, _ = served
    with Client(url) as client, pytest.raises(RuntimeError, match="own callbacks"):
        client.wait("ev-1", progress=lambda status: client.evaluation(status.id), poll_s=0.01)
