"""``n`` samples of one prompt: one upstream request where the backend writes several, one
request a sample where it does not; cached as one answer."""

from __future__ import annotations

import itertools

import msgspec
import pytest

from steadfast.services.gateway.adapters.backends.openai import ChatCompletion, completion_from
from steadfast.services.gateway.adapters.cache_repository import SqlResponseCache
from steadfast.services.gateway.domain.errors import BackendError
from tests.fakes.ollama_server import FakeOllamaServer
from tests.fakes.openai_server import FakeOpenAIServer
from tests.unit.gateway.conftest import ask, gateway_for, route_to


def counting_replies() -> FakeOpenAIServer:
    numbers = itertools.count(1)
    return FakeOpenAIServer(responder=lambda _: f"sample {next(numbers)}")


async def test_an_openai_route_writes_every_sample_in_one_request() -> None:
    with counting_replies() as fake:
        gateway = gateway_for(route_to("openai", fake))
        response = await gateway.generate(ask("Reword: what is 2+2?", temperature=0.8, n=3))
        await gateway.close()
    assert fake.call_count == 1 and fake.calls[0]["n"] == 3
    assert response.samples == ["sample 1", "sample 2", "sample 3"]
    assert response.text == "sample 1"
    # the prompt is read (and counted) once, the samples' words all
    assert response.usage.input_tokens == 4 and response.usage.output_tokens == 6


async def test_one_sample_sends_no_n_and_returns_no_samples() -> None:
    with counting_replies() as fake:
        gateway = gateway_for(route_to("openai", fake))
        response = await gateway.generate(ask(temperature=0.8))
        await gateway.close()
    assert "n" not in fake.calls[0] and response.samples is None


async def test_a_backend_without_samples_gets_one_request_a_sample_with_its_own_seed() -> None:
    with FakeOllamaServer() as fake:
        gateway = gateway_for(route_to("ollama", fake))
        response = await gateway.generate(ask(temperature=0.8, seed=6, n=3, cache=False))
        one = await gateway.generate(ask(temperature=0.8, seed=6, cache=False))
        await gateway.close()
    assert fake.call_count == 4
    seeds = sorted(call["options"]["seed"] for call in fake.calls[:3])
    assert seeds == [4, 6, 7]  # 6 ^ 0, 6 ^ 1, 6 ^ 2
    assert response.samples is not None and len(response.samples) == 3
    assert response.text == response.samples[0] == one.text
    assert response.usage.input_tokens == 3 * one.usage.input_tokens > 0


async def test_samples_are_cached_together_and_apart_from_one_sample(
    cache: SqlResponseCache,
) -> None:
    with counting_replies() as fake:
        gateway = gateway_for(route_to("openai", fake), cache=cache)
        request = ask(temperature=0.8, n=2)
        first = await gateway.generate(request)
        again = await gateway.generate(request)
        single = await gateway.generate(msgspec.structs.replace(request, n=1))
        await gateway.close()
    assert (first.cached, again.cached, single.cached) == (False, True, False)
    assert first.samples == again.samples == ["sample 1", "sample 2"]
    assert single.samples is None and fake.call_count == 2


def test_fewer_choices_than_samples_asked_for_is_a_bad_response() -> None:
    reply = {"choices": [{"index": 0, "message": {"content": "a"}, "finish_reason": "stop"}]}
    response = msgspec.convert(reply, ChatCompletion)
    with pytest.raises(BackendError) as failure:
        completion_from(response, ask(n=2))
    assert failure.value.outcome == "bad_response" and "2 samples" in str(failure.value)


def test_choices_are_read_in_their_index_order() -> None:
    choices = [
        {"index": 1, "message": {"content": "second"}, "finish_reason": "stop"},
        {"index": 0, "message": {"content": "first"}, "finish_reason": "stop"},
    ]
    response = msgspec.convert({"choices": choices}, ChatCompletion)
    assert completion_from(response, ask(n=2)).samples == ("first", "second")
