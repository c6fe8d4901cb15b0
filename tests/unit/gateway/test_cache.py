"""The response cache, on SQLite and PostgreSQL: key, hits, misses, nothing cached on error."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable
from typing import Any

import pytest
from prometheus_client import REGISTRY

from steadfast.services.gateway.adapters.cache_repository import SqlResponseCache
from steadfast.services.gateway.domain import gateway as gateway_module
from steadfast.services.gateway.domain.backend import Completion
from steadfast.services.gateway.domain.cache import cache_key
from steadfast.services.gateway.domain.errors import GenerationFailed
from steadfast.services.gateway.domain.gateway import DROP_WHEN_CANCELLED, DropSignal, ModelGateway
from steadfast.shared.contracts.gateway import ChatMessage, GenerateRequest, GenerateResponse
from steadfast.shared.db import Database
from tests.fakes.openai_server import FakeOpenAIServer, Reply
from tests.fakes.stand_in import Fault, StandInServer
from tests.unit.gateway.conftest import ask, gateway_for, route_to


@pytest.fixture
def fake() -> Any:
    reply = Reply(text="Paris", top_logprobs=[("Paris", -0.1), ("Lyon", -3.0)])
    with FakeOpenAIServer(responder=lambda _: reply) as server:
        yield server


@pytest.fixture
async def gateway(fake: FakeOpenAIServer, cache: SqlResponseCache) -> AsyncIterator[ModelGateway]:
    gateway = gateway_for(route_to("openai", fake), cache=cache)
    yield gateway
    await gateway.close()


def _hits() -> float:
    return REGISTRY.get_sample_value("steadfast_model_cache_requests_total", {"result": "hit"}) or 0


async def test_identical_request_hits_without_an_upstream_call(
    gateway: ModelGateway, fake: FakeOpenAIServer
) -> None:
    first = await gateway.generate(ask(top_logprobs=2))
    hits = _hits()
    second = await gateway.generate(ask(top_logprobs=2))
    assert fake.call_count == 1
    assert (first.cached, second.cached) == (False, True)
    assert second.attempts == 0 and _hits() == hits + 1
    assert (second.text, second.usage, second.logprobs) == (first.text, first.usage, first.logprobs)


@pytest.mark.parametrize(
    "change",
    [
        {"temperature": 0.7},
        {"max_tokens": 5},
        {"seed": 1},
        {"stop": ["\n"]},
        {"top_logprobs": 1},
        {"sample_index": 1},
        {"text": "What is the capital of Italy?"},
        {"system": "Answer briefly."},
    ],
)
async def test_a_changed_parameter_misses(
    gateway: ModelGateway, fake: FakeOpenAIServer, change: dict[str, Any]
) -> None:
    await gateway.generate(ask())
    params = dict(change)
    request = ask(
        params.pop("text", "What is the capital of France?"),
        **{key: value for key, value in params.items() if key != "system"},
    )
    if "system" in change:
        request.messages.insert(0, ChatMessage(role="system", content=change["system"]))
    response = await gateway.generate(request)
    assert response.cached is False and fake.call_count == 2
    assert (await gateway.generate(request)).cached is True
    assert fake.call_count == 2


async def test_samples_are_cached_per_sample_index(
    gateway: ModelGateway, fake: FakeOpenAIServer
) -> None:
    for index in range(3):
        assert not (await gateway.generate(ask(temperature=1.0, sample_index=index))).cached
    for index in range(3):
        assert (await gateway.generate(ask(temperature=1.0, sample_index=index))).cached
    assert fake.call_count == 3


async def test_errors_and_refusals_are_not_stored(
    gateway: ModelGateway, fake: FakeOpenAIServer
) -> None:
    fake.enqueue(Fault.error(400), Fault.refuse(), Fault.malformed())
    outcomes = []
    for _ in range(3):
        with pytest.raises(GenerationFailed) as failure:
            await gateway.generate(ask())
        outcomes.append(failure.value.outcome)
    assert outcomes == ["upstream_error", "refused", "bad_response"]
    response = await gateway.generate(ask())
    assert response.cached is False and response.text == "Paris"
    assert fake.call_count == 4


@pytest.mark.parametrize("ending", ["length", "stop"])
async def test_an_answer_is_stored_unless_it_is_empty(cache: SqlResponseCache, ending: str) -> None:
    replies = iter([Reply(text="", finish_reason=ending), Reply(text="Par", finish_reason=ending)])
    with FakeOpenAIServer(responder=lambda _: next(replies)) as server:
        gateway = gateway_for(route_to("openai", server), cache=cache)
        first = await gateway.generate(ask(max_tokens=1))  # all spent on thinking
        second = await gateway.generate(ask(max_tokens=1))  # asked again: a real answer
        third = await gateway.generate(ask(max_tokens=1))  # that one was stored
        await gateway.close()
    assert (first.text, first.finish_reason, first.cached) == ("", ending, False)
    assert (second.text, second.cached) == ("Par", False)
    assert (third.text, third.cached) == ("Par", True)
    assert server.call_count == 2


async def test_cache_false_neither_reads_nor_writes(
    gateway: ModelGateway, fake: FakeOpenAIServer
) -> None:
    await gateway.generate(ask(cache=False))
    assert (await gateway.generate(ask())).cached is False
    assert (await gateway.generate(ask(cache=False))).cached is False
    assert fake.call_count == 3


def test_key_covers_the_route_and_its_backend_model(fake: FakeOpenAIServer) -> None:
    base = route_to("openai", fake)
    request = ask()
    keys = {
        cache_key(base, request),
        cache_key(route_to("openai", fake, name="other"), request),
        cache_key(route_to("openai", fake, model="gpt-other"), request),
        cache_key(route_to("ollama", fake), request),
    }
    assert len(keys) == 4
    assert cache_key(base, ask(cache=False)) == cache_key(base, request)  # not output-affecting


async def test_identical_concurrent_requests_share_one_upstream_call(
    cache: SqlResponseCache,
) -> None:
    with FakeOpenAIServer(latency_s=0.5) as slow:
        gateway = gateway_for(route_to("openai", slow), cache=cache)
        responses = await asyncio.gather(*(gateway.generate(ask()) for _ in range(4)))
        assert slow.call_count == 1
        assert sorted(r.cached for r in responses) == [False, True, True, True]
        assert {r.text for r in responses} == {"echo: What is the capital of France?"}
        slow.enqueue(Fault.error(400))
        failures = await asyncio.gather(
            *(gateway.generate(ask("other")) for _ in range(3)), return_exceptions=True
        )
        await gateway.close()
    assert slow.call_count == 2
    assert all(isinstance(f, GenerationFailed) and f.outcome == "upstream_error" for f in failures)


async def leave_once_asked(caller: Awaitable[Any], fake: StandInServer) -> None:
    """Run ``caller`` and cancel it once its request reached ``fake``: not after a fixed time,
    which a slow cache lookup on a loaded machine may outlast (the call not yet made)."""
    asked = fake.call_count
    task = asyncio.ensure_future(caller)
    deadline = time.monotonic() + 10
    while fake.call_count == asked:
        assert not task.done() and time.monotonic() < deadline, "the call never went upstream"
        await asyncio.sleep(0.005)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def leave_once_joined(
    caller: Awaitable[Any], gateway: ModelGateway, request: GenerateRequest, waiters: int
) -> None:
    """Run ``caller`` and cancel it once it waits on the call in flight for ``request`` beside
    others (``waiters`` in all): a caller cancelled before it joined would drop nothing."""
    key = cache_key(gateway.route(request.model), request)
    task = asyncio.ensure_future(caller)
    deadline = time.monotonic() + 10
    while (call := gateway._pending.get(key)) is None or call.waiters < waiters:
        assert not task.done() and time.monotonic() < deadline, "the caller never joined"
        await asyncio.sleep(0.005)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def until_asked(fake: StandInServer, times: int = 1) -> None:
    deadline = time.monotonic() + 10
    while fake.call_count < times:
        assert time.monotonic() < deadline, "the call never went upstream"
        await asyncio.sleep(0.005)


async def test_a_caller_going_away_does_not_lose_the_answer(cache: SqlResponseCache) -> None:
    with FakeOpenAIServer(latency_s=1.0) as slow:
        gateway = gateway_for(route_to("openai", slow), cache=cache)
        await leave_once_asked(gateway.generate(ask()), slow)
        response = await gateway.generate(ask())  # the call still running, or its stored answer
        await gateway.close()
    assert response.cached is True and slow.call_count == 1


async def _dropping(gateway: ModelGateway, request: GenerateRequest) -> GenerateResponse:
    """A call by a caller that drops the calls it cancels (as paraphrase-vote's early stop)."""
    DROP_WHEN_CANCELLED.set(DropSignal(drop=True))  # in this task's own context only
    return await gateway.generate(request)


async def test_a_call_its_only_caller_drops_is_cancelled_upstream(
    cache: SqlResponseCache,
) -> None:
    with FakeOpenAIServer(latency_s=1.0) as slow:
        gateway = gateway_for(route_to("openai", slow), cache=cache)
        await leave_once_asked(_dropping(gateway, ask()), slow)
        response = await gateway.generate(ask())
        await gateway.close()
    # nothing was stored: the second request went upstream again
    assert response.cached is False and slow.call_count == 2


async def test_a_dropped_call_another_caller_waits_for_runs_on(cache: SqlResponseCache) -> None:
    with FakeOpenAIServer(latency_s=1.0) as slow:
        gateway = gateway_for(route_to("openai", slow), cache=cache)
        waiting = asyncio.ensure_future(gateway.generate(ask()))
        await until_asked(slow)  # the call is on its way: the dropping caller joins it
        await leave_once_joined(_dropping(gateway, ask()), gateway, ask(), waiters=2)
        first = await waiting
        again = await gateway.generate(ask())
        await gateway.close()
    assert first.text == "echo: What is the capital of France?"
    assert again.cached is True and slow.call_count == 1


async def test_a_caller_with_a_drop_signal_not_set_keeps_its_call(
    cache: SqlResponseCache,
) -> None:
    # paraphrase-vote's calls when its client goes away: no early stop decided to drop them
    async def undecided(gateway: ModelGateway) -> GenerateResponse:
        DROP_WHEN_CANCELLED.set(DropSignal())
        return await gateway.generate(ask())

    with FakeOpenAIServer(latency_s=1.0) as slow:
        gateway = gateway_for(route_to("openai", slow), cache=cache)
        await leave_once_asked(undecided(gateway), slow)
        again = await gateway.generate(ask())
        await gateway.close()
    assert again.cached is True and slow.call_count == 1


async def test_a_call_a_caller_left_without_dropping_is_kept(cache: SqlResponseCache) -> None:
    with FakeOpenAIServer(latency_s=1.0) as slow:
        gateway = gateway_for(route_to("openai", slow), cache=cache)
        await leave_once_asked(gateway.generate(ask()), slow)  # left, not dropped
        await leave_once_joined(_dropping(gateway, ask()), gateway, ask(), waiters=1)
        again = await gateway.generate(ask())
        await gateway.close()
    assert again.cached is True and slow.call_count == 1


async def test_concurrent_distinct_requests_are_each_stored_and_found(
    gateway: ModelGateway, fake: FakeOpenAIServer
) -> None:
    """Lookups and stores of concurrent requests are coalesced into shared queries; every
    answer must still land under its own key."""
    questions = [f"Question number {i}?" for i in range(60)]
    first = await asyncio.gather(*(gateway.generate(ask(question)) for question in questions))
    assert fake.call_count == 60 and not any(response.cached for response in first)
    again = await asyncio.gather(*(gateway.generate(ask(question)) for question in questions))
    assert fake.call_count == 60 and all(response.cached for response in again)
    assert [response.text for response in again] == [response.text for response in first]


async def test_a_lookup_racing_a_store_of_its_key_still_finds_it(
    cache: SqlResponseCache, fake: FakeOpenAIServer
) -> None:
    """A lookup whose query ran before the store committed must not report a miss once the
    store is done: the gateway no longer tracks that call as in flight and would ask again."""
    route = route_to("openai", fake)
    completion = Completion(text="Paris", finish_reason="stop", input_tokens=3, output_tokens=1)
    query_ran = asyncio.Event()
    release = asyncio.Event()
    real_get_many = cache._get_many

    async def slow_lookup(keys: list[str]) -> list[Completion | None]:
        found = await real_get_many(keys)  # runs before the store: nothing there yet
        query_ran.set()
        await release.wait()
        return found

    cache._lookups._handler = slow_lookup  # the batched lookup, slowed after its query ran
    lookup = asyncio.ensure_future(cache.get("k" * 64))
    await asyncio.wait_for(query_ran.wait(), 10)
    await cache.put("k" * 64, route, completion)
    release.set()
    found = await asyncio.wait_for(lookup, 10)
    assert found is not None and found.text == "Paris"


async def test_a_stalled_cache_lookup_counts_as_a_miss(
    fake: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    class StalledCache:
        async def get(self, key: str) -> Completion | None:
            await asyncio.sleep(60)  # a locked database file
            return None

        async def put(self, key: str, route: Any, completion: Completion) -> None:
            return None

        async def close(self) -> None:
            return None

    monkeypatch.setattr(gateway_module, "CACHE_LOOKUP_TIMEOUT_S", 0.2)
    gateway = gateway_for(route_to("openai", fake), cache=StalledCache())
    response = await asyncio.wait_for(gateway.generate(ask()), 5)
    await gateway.close()
    assert response.text == "Paris" and response.cached is False


async def test_a_stalled_cache_store_still_answers_every_caller(
    fake: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A database that takes the write and never answers (a connection lost without a reset)
    must not hold the callers of the call, nor identical callers that joined it."""

    class StalledStore:
        async def get(self, key: str) -> Completion | None:
            return None

        async def put(self, key: str, route: Any, completion: Completion) -> None:
            await asyncio.sleep(60)

        async def close(self) -> None:
            return None

    monkeypatch.setattr(gateway_module, "CACHE_STORE_TIMEOUT_S", 0.2)
    gateway = gateway_for(route_to("openai", fake), cache=StalledStore())
    first, joined = await asyncio.wait_for(
        asyncio.gather(gateway.generate(ask()), gateway.generate(ask())), 5
    )
    await gateway.close()
    assert first.text == joined.text == "Paris" and fake.call_count == 1


async def test_closing_lets_a_call_its_caller_left_store_its_answer(database_url: str) -> None:
    database = Database("gateway", database_url)
    await database.migrate()
    with FakeOpenAIServer(latency_s=0.3) as slow:
        gateway = gateway_for(route_to("openai", slow), cache=SqlResponseCache(database))
        await leave_once_asked(gateway.generate(ask()), slow)
        await gateway.close(grace_s=5)
        # a cache of its own: the answer is found in the database, not in the first one's memory
        reopened = gateway_for(route_to("openai", slow), cache=SqlResponseCache(database))
        again = await reopened.generate(ask())
        await reopened.close()
    await database.dispose()
    assert again.cached is True and slow.call_count == 1


async def test_a_closed_gateway_refuses_new_requests(cache: SqlResponseCache) -> None:
    with FakeOpenAIServer() as fake:
        gateway = gateway_for(route_to("openai", fake), cache=cache)
        await gateway.close()
        with pytest.raises(GenerationFailed) as failure:
            await gateway.generate(ask())
    assert failure.value.outcome == "unavailable" and fake.call_count == 0


async def test_closing_cancels_a_call_still_running_after_the_grace(
    cache: SqlResponseCache,
) -> None:
    running_before = asyncio.all_tasks()  # another test's leftovers are not this one's
    with FakeOpenAIServer(latency_s=30) as stuck:
        gateway = gateway_for(route_to("openai", stuck), cache=cache)
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(gateway.generate(ask()), 0.05)
        await asyncio.wait_for(gateway.close(grace_s=0.1), 5)
        left = await _tasks_left(running_before)
    assert left == set()


async def _tasks_left(running_before: set[asyncio.Task[object]]) -> set[asyncio.Task[object]]:
    """The tasks still running besides those before and this one, once those whose awaited
    future is already done have had a turn of the loop to end (a batch's drain that woke up as
    the gateway closed ends on its next step: CI once saw it still pending)."""
    for _ in range(20):
        left = asyncio.all_tasks() - running_before - {asyncio.current_task()}
        if not left:
            break
        await asyncio.sleep(0.01)
    return left


async def test_an_answer_older_than_the_maximum_age_is_asked_again_and_replaced(
    database_url: str, fake: FakeOpenAIServer
) -> None:
    database = Database("gateway", database_url)
    await database.migrate()
    now = [1000.0]

    async def generate_with_a_new_cache() -> GenerateResponse:
        """Through a cache of its own: what it finds comes from the database."""
        cache = SqlResponseCache(database, max_age_s=100.0, clock=lambda: now[0])
        gateway = gateway_for(route_to("openai", fake), cache=cache)
        try:
            return await gateway.generate(ask())
        finally:
            await gateway.close()

    try:
        assert (await generate_with_a_new_cache()).cached is False
        now[0] = 1090.0
        assert (await generate_with_a_new_cache()).cached is True
        now[0] = 1101.0  # stored 101 s ago: too old to serve
        assert (await generate_with_a_new_cache()).cached is False
        now[0] = 1150.0  # the new answer replaced the old one
        assert (await generate_with_a_new_cache()).cached is True
        assert fake.call_count == 2

        cache = SqlResponseCache(database, max_age_s=100.0, clock=lambda: now[0])
        assert await cache.purge_older_than(1101.0) == 0
        assert await cache.purge_older_than(1102.0) == 1
        assert await cache.get(cache_key(route_to("openai", fake), ask())) is None
    finally:
        await database.dispose()


async def test_an_answer_this_process_stored_expires_from_memory_too(
    database_url: str, fake: FakeOpenAIServer
) -> None:
    now = [1000.0]
    database = Database("gateway", database_url)
    await database.migrate()
    aging = SqlResponseCache(database, max_age_s=100.0, clock=lambda: now[0])
    gateway = gateway_for(route_to("openai", fake), cache=aging)
    try:
        await gateway.generate(ask())
        now[0] = 1050.0
        assert (await gateway.generate(ask())).cached is True
        now[0] = 1200.0
        assert (await gateway.generate(ask())).cached is False
        assert fake.call_count == 2
    finally:
        await gateway.close()
        await database.dispose()


@pytest.mark.parametrize("max_age_s", [None, 100.0])
async def test_a_stored_answer_is_replaced_only_once_it_has_expired(
    database_url: str, fake: FakeOpenAIServer, max_age_s: float | None
) -> None:
    database = Database("gateway", database_url)
    await database.migrate()
    now = [1000.0]
    route = route_to("openai", fake)

    def fresh_cache() -> SqlResponseCache:  # its own memory: what it finds is the database's
        return SqlResponseCache(database, max_age_s=max_age_s, clock=lambda: now[0])

    async def store(text: str) -> None:
        cache = fresh_cache()
        await cache.put("k", route, Completion(text=text, finish_reason="stop"))
        await cache.close()

    async def found() -> str | None:
        completion = await fresh_cache().get("k")
        return completion.text if completion else None

    try:
        await store("first")
        now[0] = 1050.0
        await store("second")  # e.g. another replica racing on the same request
        assert await found() == "first"
        now[0] = 1200.0
        await store("third")
        assert await found() == ("first" if max_age_s is None else "third")
    finally:
        await database.dispose()
