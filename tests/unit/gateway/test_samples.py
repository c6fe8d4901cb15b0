"""``n`` samples of one prompt: one upstream request where the backend writes several, one
request a sample where it does not; cached as one answer."""

from __future__ import annotations

import itertools
from pathlib import Path

import msgspec
import pytest

from steadfast.services.gateway.adapters.backends import BackendContext, create_backend
from steadfast.services.gateway.adapters.backends.openai import (
    ChatCompletion,
    OpenAIBackend,
    completion_from,
)
from steadfast.services.gateway.adapters.cache_repository import SqlResponseCache
from steadfast.services.gateway.domain.errors import BackendError
from steadfast.services.gateway.domain.gateway import ModelGateway, _next_seed
from steadfast.services.gateway.domain.routes import Route
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
    """Ollama's API has no ``n``."""
    with FakeOllamaServer() as fake:
        gateway = gateway_for(route_to("ollama", fake))
        response = await gateway.generate(ask(temperature=0.8, seed=6, n=3, cache=False))
        one = await gateway.generate(ask(temperature=0.8, seed=6, cache=False))
        await gateway.close()
    assert fake.call_count == 4
    seeds = sorted(call["options"]["seed"] for call in fake.calls[:3])
    assert seeds == [6, 7, 8]  # seed + i, as the next requests' would be
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


def test_a_local_route_writes_at_most_a_sample_a_slot() -> None:
    route = msgspec.convert(
        {"name": "l", "backend": "local", "model": "qwen2.5-coder-0.5b-instruct", "n_parallel": 3},
        type=Route,
    )
    backend = create_backend(route, BackendContext(models_dir=Path("/nonexistent")))
    assert backend.max_samples(route) == 3


async def test_more_samples_than_a_request_takes_go_one_request_a_sample() -> None:
    class TwoAtMost(OpenAIBackend):
        def max_samples(self, route: Route) -> int:
            return 2

    with counting_replies() as fake:
        route = route_to("openai", fake)
        gateway = ModelGateway({route.name: route}, backend_factory=TwoAtMost)
        response = await gateway.generate(ask(temperature=0.8, seed=1, n=3, sample_index=4))
        await gateway.close()
    assert fake.call_count == 3 and all("n" not in call for call in fake.calls)
    assert sorted(call["seed"] for call in fake.calls) == [1, 2, 3]
    assert sorted(response.samples or []) == ["sample 1", "sample 2", "sample 3"]


def test_a_seed_at_the_top_of_its_range_wraps_round() -> None:
    assert _next_seed(2**63 - 1, 1) == -(2**63)
    assert _next_seed(-5, 2) == -3


async def test_samples_with_an_empty_one_are_not_cached(cache: SqlResponseCache) -> None:
    replies = iter(["one", "", "one again", "two"])
    with FakeOpenAIServer(responder=lambda _: next(replies)) as fake:
        gateway = gateway_for(route_to("openai", fake), cache=cache)
        first = await gateway.generate(ask(temperature=0.8, n=2))
        second = await gateway.generate(ask(temperature=0.8, n=2))
        await gateway.close()
    assert first.samples == ["one", ""] and not second.cached
    assert second.samples == ["one again", "two"] and fake.call_count == 2


def test_a_refusal_in_any_choice_is_a_refusal() -> None:
    choices = [
        {"index": 0, "message": {"content": "a"}, "finish_reason": "stop"},
        {"index": 1, "message": {"content": None, "refusal": "no"}, "finish_reason": "stop"},
    ]
    response = msgspec.convert({"choices": choices}, ChatCompletion)
    with pytest.raises(BackendError) as failure:
        completion_from(response, ask(n=2))
    assert failure.value.outcome == "refused"
