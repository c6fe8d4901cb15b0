"""Every typed outcome, on every remote backend, through the real clients and stand-ins."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
from typing import Any

import pytest
from prometheus_client import REGISTRY

from steadfast.services.gateway.controllers.problems import problem_for
from steadfast.services.gateway.domain.errors import (
    UNREACHABLE_RETRY_AFTER_S,
    GenerationFailed,
    UnknownRoute,
    UnsupportedParameter,
)
from tests.conftest import free_port
from tests.fakes.gemini_server import FakeGeminiServer
from tests.fakes.openai_server import FakeOpenAIServer, Reply
from tests.fakes.stand_in import Fault
from tests.unit.gateway.conftest import FAKES, ask, gateway_for, route_to

BACKENDS = list(FAKES)


def _metric(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


@pytest.mark.parametrize("backend", BACKENDS)
async def test_answer_reaches_the_backend_model(backend: str) -> None:
    with FAKES[backend](responder=lambda body: "Paris") as fake:
        gateway = gateway_for(route_to(backend, fake))
        response = await gateway.generate(ask(max_tokens=20, seed=3))
        await gateway.close()
    assert (response.text, response.backend, response.route) == ("Paris", backend, "r")
    assert response.model == f"{backend}-model"
    assert response.finish_reason == "stop"
    assert response.usage.input_tokens == 6 and response.usage.output_tokens == 1
    assert (response.cached, response.attempts) == (False, 1)
    sent = fake.calls[0]
    if backend == "openai":
        assert (sent["model"], sent["max_tokens"], sent["seed"]) == ("openai-model", 20, 3)
    elif backend == "ollama":
        assert sent["model"] == "ollama-model"
        assert sent["options"] == {"temperature": 0.0, "num_predict": 20, "seed": 3}
    else:
        assert sent["_model"] == "gemini-model" and sent["_api_key"] == "gemini-test-key"
        assert sent["generationConfig"]["maxOutputTokens"] == 20


@pytest.mark.parametrize("backend", BACKENDS)
async def test_rate_limit_is_retried_after_retry_after(backend: str) -> None:
    before = _metric("steadfast_model_retries_total", route="r", reason="rate_limited")
    with FAKES[backend]() as fake:
        fake.enqueue(Fault.rate_limit(retry_after_s=0.2))
        gateway = gateway_for(route_to(backend, fake))
        started = time.perf_counter()
        response = await gateway.generate(ask("hi"))
        elapsed = time.perf_counter() - started
        await gateway.close()
    assert response.text == "echo: hi"
    assert response.attempts == 2 and fake.call_count == 2
    assert elapsed >= 0.2
    after = _metric("steadfast_model_retries_total", route="r", reason="rate_limited")
    assert after == before + 1


@pytest.mark.parametrize("backend", BACKENDS)
async def test_rate_limit_until_retries_run_out(backend: str) -> None:
    with FAKES[backend]() as fake:
        fake.enqueue(*[Fault.rate_limit(retry_after_s=0.01)] * 5)
        gateway = gateway_for(route_to(backend, fake, max_retries=2))
        with pytest.raises(GenerationFailed) as failure:
            await gateway.generate(ask())
        await gateway.close()
    assert failure.value.outcome == "rate_limited"
    assert failure.value.attempts == 3 and fake.call_count == 3
    assert failure.value.retry_after_s == pytest.approx(0.01)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_server_errors_are_retried(backend: str) -> None:
    with FAKES[backend]() as fake:
        fake.enqueue(Fault.error(503), Fault.error(500))
        gateway = gateway_for(route_to(backend, fake))
        response = await gateway.generate(ask("hi"))
        await gateway.close()
    assert response.attempts == 3 and response.text == "echo: hi"


@pytest.mark.parametrize("backend", BACKENDS)
async def test_client_errors_are_not_retried(backend: str) -> None:
    with FAKES[backend]() as fake:
        fake.enqueue(Fault.error(400))
        gateway = gateway_for(route_to(backend, fake))
        with pytest.raises(GenerationFailed) as failure:
            await gateway.generate(ask())
        await gateway.close()
    assert failure.value.outcome == "upstream_error"
    assert failure.value.attempts == 1 and fake.call_count == 1


@pytest.mark.parametrize("backend", BACKENDS)
async def test_hang_times_out_each_attempt(backend: str) -> None:
    before = _metric(
        "steadfast_model_requests_total", route="r", backend=backend, outcome="timeout"
    )
    with FAKES[backend]() as fake:
        fake.enqueue(Fault.hang(), Fault.hang())
        gateway = gateway_for(route_to(backend, fake, timeout_s=0.2, max_retries=1))
        started = time.perf_counter()
        with pytest.raises(GenerationFailed) as failure:
            await gateway.generate(ask())
        elapsed = time.perf_counter() - started
        await gateway.close()
    assert failure.value.outcome == "timeout" and failure.value.attempts == 2
    assert 0.4 <= elapsed < 10
    after = _metric("steadfast_model_requests_total", route="r", backend=backend, outcome="timeout")
    assert after == before + 1


@pytest.mark.parametrize("backend", BACKENDS)
async def test_malformed_body_is_a_bad_response(backend: str) -> None:
    with FAKES[backend]() as fake:
        fake.enqueue(Fault.malformed())
        gateway = gateway_for(route_to(backend, fake))
        with pytest.raises(GenerationFailed) as failure:
            await gateway.generate(ask())
        await gateway.close()
    assert failure.value.outcome == "bad_response" and failure.value.attempts == 1


@pytest.mark.parametrize("backend", ["openai", "gemini"])
async def test_safety_block_is_refused(backend: str) -> None:
    with FAKES[backend]() as fake:
        fake.enqueue(Fault.refuse())
        gateway = gateway_for(route_to(backend, fake))
        with pytest.raises(GenerationFailed) as failure:
            await gateway.generate(ask())
        await gateway.close()
    assert failure.value.outcome == "refused" and failure.value.attempts == 1


@pytest.mark.parametrize("backend", BACKENDS)
async def test_unreachable_server_is_unavailable(backend: str) -> None:
    class Closed:
        url = f"http://127.0.0.1:{free_port()}"

    gateway = gateway_for(route_to(backend, Closed(), max_retries=2))
    with pytest.raises(GenerationFailed) as failure:
        await gateway.generate(ask())
    await gateway.close()
    # a refused connection is asked again (a server restarting), then given up on, saying
    # when to come back: a caller can tell "down for now" from "refused for good"
    assert failure.value.outcome == "unavailable" and failure.value.attempts == 3
    assert failure.value.retry_after_s == UNREACHABLE_RETRY_AFTER_S


async def test_retry_after_beyond_the_deadline_fails_at_once() -> None:
    with FakeOpenAIServer() as fake:
        fake.enqueue(Fault.rate_limit(retry_after_s=30))
        gateway = gateway_for(route_to("openai", fake, deadline_s=1.0))
        started = time.perf_counter()
        with pytest.raises(GenerationFailed) as failure:
            await gateway.generate(ask())
        await gateway.close()
    assert time.perf_counter() - started < 2.0  # not 30 s
    assert (failure.value.outcome, failure.value.attempts) == ("rate_limited", 1)
    assert failure.value.retry_after_s == 30
    assert "deadline" in failure.value.detail


async def test_logprobs_of_the_first_token() -> None:
    reply = Reply(text="B", top_logprobs=[("B", -0.1), ("A", -2.5), ("C", -4.0)])
    with FakeOpenAIServer(responder=lambda _: reply) as fake:
        gateway = gateway_for(route_to("openai", fake))
        response = await gateway.generate(ask(top_logprobs=2))
        await gateway.close()
    assert fake.calls[0]["logprobs"] is True and fake.calls[0]["top_logprobs"] == 2
    assert response.logprobs is not None
    assert [(alt.token, alt.logprob) for alt in response.logprobs] == [("B", -0.1), ("A", -2.5)]


async def test_an_empty_answer_with_logprobs_asked_for_has_no_alternatives() -> None:
    # no token, no first-token alternatives: an answer all the same, not a bad response
    with FakeOpenAIServer(responder=lambda _: "") as fake:
        gateway = gateway_for(route_to("openai", fake))
        response = await gateway.generate(ask(top_logprobs=2))
        await gateway.close()
    assert (response.text, response.logprobs) == ("", [])


@pytest.mark.parametrize("backend", ["gemini", "ollama"])
async def test_logprobs_where_unsupported_are_refused_before_any_call(backend: str) -> None:
    with FAKES[backend]() as fake:
        gateway = gateway_for(route_to(backend, fake))
        with pytest.raises(UnsupportedParameter) as error:
            await gateway.generate(ask(top_logprobs=3))
        await gateway.close()
    assert error.value.field == "top_logprobs" and fake.call_count == 0


async def test_unknown_route_names_it() -> None:
    with FakeOpenAIServer() as fake:
        gateway = gateway_for(route_to("openai", fake))
        with pytest.raises(UnknownRoute, match="'gpt-9'"):
            await gateway.generate(ask(model="gpt-9"))


async def test_missing_api_key_is_unavailable_and_keys_never_leak(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with FakeOpenAIServer() as fake:
        gateway = gateway_for(route_to("openai", fake, api_key_env="STEADFAST_TEST_OPENAI_KEY"))
        monkeypatch.delenv("STEADFAST_TEST_OPENAI_KEY", raising=False)
        with pytest.raises(GenerationFailed) as failure:
            await gateway.generate(ask())
        assert failure.value.outcome == "unavailable"
        assert failure.value.retry_after_s is None  # for good: waiting will not bring a key
        assert "STEADFAST_TEST_OPENAI_KEY" in failure.value.detail
        assert fake.call_count == 0
        monkeypatch.setenv("STEADFAST_TEST_OPENAI_KEY", "sk-very-secret")
        response = await gateway.generate(ask())
        await gateway.close()
    assert "sk-very-secret" not in repr(response)


async def test_overhead_metric_leaves_out_the_upstream_time() -> None:
    def total(suffix: str) -> float:
        return REGISTRY.get_sample_value(f"steadfast_gateway_overhead_seconds_{suffix}") or 0.0

    count, seconds = total("count"), total("sum")
    with FakeOpenAIServer(latency_s=0.2) as fake:
        gateway = gateway_for(route_to("openai", fake))
        response = await gateway.generate(ask())
        await gateway.close()
    assert response.latency_s >= 0.2
    assert total("count") == count + 1
    assert total("sum") - seconds < 0.15  # the 0.2 s upstream wait is not in it


async def test_a_gemini_thinking_models_thoughts_count_as_output_tokens() -> None:
    with FakeGeminiServer(responder=lambda body: "Paris") as fake:
        fake.thoughts = "the capital of France is Paris"
        gateway = gateway_for(route_to("gemini", fake))
        response = await gateway.generate(ask())
        await gateway.close()
    assert response.text == "Paris"  # the thought part is not the answer
    assert response.usage.output_tokens == 1 + 6  # but it is billed


async def test_gemini_waits_the_retry_delay_its_429_body_asks_for() -> None:
    retry_info = {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "0.3s"}
    error = {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED"}
    body = json.dumps({"error": {**error, "details": [retry_info]}})
    with FakeGeminiServer() as fake:
        fake.enqueue(Fault.error(429, body=body))
        gateway = gateway_for(route_to("gemini", fake))  # its own back-off is 0.01 s
        started = time.perf_counter()
        response = await gateway.generate(ask("hi"))
        elapsed = time.perf_counter() - started
        await gateway.close()
    assert response.text == "echo: hi" and response.attempts == 2
    assert elapsed >= 0.3


async def test_every_failed_attempt_is_logged_with_its_reason(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="steadfast.services.gateway.domain.gateway")
    with FakeOpenAIServer() as fake:
        fake.enqueue(
            Fault.error(503, body='{"error": {"message": "overloaded, shard 7"}}'),
            Fault.error(400, body='{"error": {"message": "prompt too long"}}'),
        )
        gateway = gateway_for(route_to("openai", fake))
        with pytest.raises(GenerationFailed):
            await gateway.generate(ask("hi"))
        await gateway.close()
    logged = {record.getMessage(): record for record in caplog.records}
    retried, failed = logged["model call retried"], logged["model call failed"]
    assert retried.status == 503 and "overloaded, shard 7" in retried.detail  # type: ignore[attr-defined]
    assert failed.status == 400 and "prompt too long" in failed.detail  # type: ignore[attr-defined]
    assert failed.attempts == 2  # type: ignore[attr-defined]


async def test_without_the_gemini_sdk_a_gemini_route_is_unavailable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with FakeGeminiServer() as fake:
        gateway = gateway_for(route_to("gemini", fake))
        for module in ("google.genai", "google.genai.types", "google.genai.errors"):
            monkeypatch.setitem(sys.modules, module, None)  # an import of it now fails
        with pytest.raises(GenerationFailed) as failed:
            await gateway.generate(ask("hi"))
        await gateway.close()
    assert failed.value.outcome == "unavailable"
    assert "google-genai is not installed" in failed.value.detail
    assert fake.call_count == 0


async def test_a_retry_that_never_gets_a_slot_fails_with_the_upstreams_reason() -> None:
    # one slot: "limited" is told to wait, and while it waits "slow" takes the slot past the
    # deadline; its failure is the rate limit (and its Retry-After), not a slot timeout
    def fault_for(body: dict[str, Any]) -> Fault | None:
        text = body["messages"][-1]["content"]
        return Fault.rate_limit(0.2) if text == "limited" else Fault.delay(1.5)

    with FakeOpenAIServer(fault_for=fault_for) as fake:
        route = route_to("openai", fake, max_concurrency=1, deadline_s=1.0, timeout_s=2.0)
        gateway = gateway_for(route)
        limited = asyncio.create_task(gateway.generate(ask("limited")))
        await asyncio.sleep(0.1)  # its first attempt is answered, its back-off has begun
        slow = asyncio.create_task(gateway.generate(ask("slow")))
        with pytest.raises(GenerationFailed) as failed:
            await limited
        with pytest.raises(GenerationFailed):  # it is slower than the deadline too
            await slow
        await gateway.close()
    assert failed.value.outcome == "rate_limited" and failed.value.retry_after_s == 0.2
    assert "waited for a free slot" in failed.value.detail


async def test_an_upstream_echoing_the_key_in_its_error_never_passes_it_on(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    key = "sk-very-secret-provider-key"
    monkeypatch.setenv("STEADFAST_TEST_OPENAI_KEY", key)
    echo = f'{{"error": "bad request", "headers": {{"Authorization": "Bearer {key}"}}}}'
    with FakeOpenAIServer() as fake:
        fake.enqueue(Fault.error(400, body=echo))
        gateway = gateway_for(route_to("openai", fake, api_key_env="STEADFAST_TEST_OPENAI_KEY"))
        with pytest.raises(GenerationFailed) as failure:
            await gateway.generate(ask())
        await gateway.close()
    assert key not in str(failure.value) and key not in failure.value.detail
    assert "[redacted]" in failure.value.detail and "bad request" in failure.value.detail
    assert key not in caplog.text


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (413, "Request Entity Too Large"),
        (400, '{"error": {"code": "context_length_exceeded", "message": "too long"}}'),
        (400, "This model's maximum context length is 8192 tokens"),
    ],
)
async def test_a_request_the_model_cannot_take_is_the_callers_413_not_retried(
    status: int, body: str
) -> None:
    with FakeOpenAIServer() as fake:
        fake.enqueue(Fault.error(status, body=body))
        gateway = gateway_for(route_to("openai", fake))
        with pytest.raises(GenerationFailed) as failure:
            await gateway.generate(ask())
        await gateway.close()
    assert failure.value.outcome == "too_large" and failure.value.caller_error
    assert failure.value.attempts == 1 and fake.call_count == 1
    problem = problem_for(failure.value)
    assert (problem.status, problem.outcome) == (413, "too_large")  # was a 502
