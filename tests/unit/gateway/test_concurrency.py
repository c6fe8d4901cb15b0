"""Per-route limits under concurrent load, through the gateway."""

from __future__ import annotations

import asyncio
import time

import msgspec
import pytest

from steadfast.services.gateway.domain.errors import GenerationFailed
from steadfast.services.gateway.domain.gateway import ModelGateway
from steadfast.services.gateway.domain.routes import Route
from tests.fakes.openai_server import FakeOpenAIServer
from tests.unit.gateway.conftest import ask, gateway_for, route_to


async def test_the_upstream_never_sees_more_than_max_concurrency() -> None:
    with FakeOpenAIServer(latency_s=0.05) as fake:
        gateway = gateway_for(route_to("openai", fake, max_concurrency=2))
        started = time.perf_counter()
        responses = await asyncio.gather(*(gateway.generate(ask(f"q{i}")) for i in range(8)))
        elapsed = time.perf_counter() - started
        await gateway.close()
    assert [r.text for r in responses] == [f"echo: q{i}" for i in range(8)]
    assert fake.max_inflight == 2
    assert elapsed >= 0.2  # four rounds of two


async def test_routes_have_separate_limits() -> None:
    with FakeOpenAIServer(latency_s=0.05) as fake:
        gateway = gateway_for(
            route_to("openai", fake, name="a", max_concurrency=1),
            route_to("openai", fake, name="b", max_concurrency=1),
        )
        await asyncio.gather(*(gateway.generate(ask(model=m)) for m in "abab"))
        await gateway.close()
    assert fake.max_inflight == 2


async def test_callers_beyond_the_limit_wait_but_only_until_their_deadline() -> None:
    # the first call (1 s) fits its deadline (1.5 s); the two behind it start after a second
    # at the earliest, and cannot finish by theirs: half a second of room either way
    with FakeOpenAIServer(latency_s=1.0) as fake:
        gateway = gateway_for(route_to("openai", fake, max_concurrency=1, deadline_s=1.5))

        async def timed(index: int) -> tuple[float, object]:
            started = time.perf_counter()
            try:
                result: object = await gateway.generate(ask(f"q{index}"))
            except GenerationFailed as failure:
                result = failure
            return time.perf_counter() - started, result

        results = await asyncio.gather(*(timed(i) for i in range(3)))
        await gateway.close()
    outcomes = [r.outcome if isinstance(r, GenerationFailed) else "ok" for _, r in results]
    assert outcomes.count("ok") == 1 and outcomes.count("timeout") == 2
    waited = [elapsed for elapsed, r in results if isinstance(r, GenerationFailed)]
    assert all(0.9 <= elapsed < 10 for elapsed in waited)  # waited, were not rejected at once


async def test_requests_per_minute_paces_the_upstream() -> None:
    with FakeOpenAIServer() as fake:
        gateway = gateway_for(route_to("openai", fake, requests_per_minute=600))
        started = time.perf_counter()
        await asyncio.gather(*(gateway.generate(ask(f"q{i}")) for i in range(4)))
        elapsed = time.perf_counter() - started
        await gateway.close()
    assert 0.28 <= elapsed < 10  # three intervals of 100 ms between four requests


async def test_a_timed_out_local_attempt_is_not_piled_up_by_retries() -> None:
    class StuckLocal:
        """A local backend whose inference outlives the attempt timeout."""

        name, supports_logprobs, retry_timeouts = "local", False, False
        calls = 0

        async def complete(self, request: object, timeout_s: float) -> object:
            StuckLocal.calls += 1
            await asyncio.sleep(10)
            raise AssertionError("not reached")

        async def close(self) -> None:
            pass

    route = msgspec.convert(
        {"name": "r", "backend": "local", "model": "smollm2-135m-instruct", "timeout_s": 0.1},
        type=Route,
    )
    gateway = ModelGateway({"r": route}, backend_factory=lambda _: StuckLocal())  # type: ignore[arg-type,return-value]
    with pytest.raises(GenerationFailed) as failure:
        await gateway.generate(ask())
    assert (failure.value.outcome, failure.value.attempts, StuckLocal.calls) == ("timeout", 1, 1)
