"""The gateway as a real process, called over HTTP with ``GatewayClient``; upstreams are the
stand-in servers (OpenAI-compatible, Gemini through google-genai, Ollama)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from steadfast.shared.clients.gateway import GatewayClient
from steadfast.shared.contracts.gateway import ChatMessage, GenerateRequest, GenerateResponse
from steadfast.shared.http_client import ServiceCallError, get_session
from steadfast.supervisor import Supervisor, service_ports
from tests.conftest import free_port_block
from tests.fakes.gemini_server import FakeGeminiServer
from tests.fakes.ollama_server import FakeOllamaServer
from tests.fakes.openai_server import FakeOpenAIServer, Reply
from tests.fakes.stand_in import Fault

SECRET = "sk-integration-secret-value"


def _fault_by_wording(body: dict[str, Any]) -> Fault | None:
    text = body["messages"][-1]["content"]
    faults = {
        "fail-me": Fault.error(400),
        "limit-me": Fault.rate_limit(0.05),
        "limit-me-forever": Fault.rate_limit(float("inf")),
    }
    return faults.get(text)


def _answer(body: dict[str, Any]) -> Reply:
    text = body["messages"][-1]["content"]
    return Reply(
        text="Paris" if "France" in text else f"echo: {text}",
        top_logprobs=[("Paris", -0.05), ("Lyon", -3.2)],
    )


def routes_toml(openai: str, gemini: str, ollama: str) -> str:
    return f"""
[models.fake-gpt]
backend = "openai"
model = "gpt-fake"
base_url = "{openai}"
api_key_env = "STEADFAST_TEST_OPENAI_KEY"
max_retries = 2
retry_base_s = 0.01
timeout_s = 5

[models.fake-gemini]
backend = "gemini"
model = "gemini-fake"
base_url = "{gemini}"
api_key_env = "STEADFAST_TEST_GEMINI_KEY"

[models.fake-ollama]
backend = "ollama"
model = "llama-fake"
base_url = "{ollama}"
"""


@pytest.fixture(scope="module")
def upstreams() -> Iterator[tuple[FakeOpenAIServer, FakeGeminiServer, FakeOllamaServer]]:
    with (
        FakeOpenAIServer(responder=_answer, fault_for=_fault_by_wording) as openai,
        FakeGeminiServer(responder=lambda _: "Gemini says hi") as gemini,
        FakeOllamaServer(responder=lambda _: "Ollama says hi") as ollama,
    ):
        yield openai, gemini, ollama


def start_gateway(tmp: Path, routes_file: Path, extra: dict[str, str] | None = None) -> Supervisor:
    env = {
        "STEADFAST_DATA_DIR": str(tmp / "data"),
        "STEADFAST_MODELS_FILE": str(routes_file),
        "STEADFAST_TEST_OPENAI_KEY": SECRET,
        "STEADFAST_TEST_GEMINI_KEY": SECRET,
        **(extra or {}),
    }
    supervisor = Supervisor(
        ports=service_ports(free_port_block(5)),
        env=env,
        services=("gateway",),
        log_dir=tmp / "logs",
    )
    supervisor.start()
    return supervisor


@pytest.fixture(scope="module")
def gateway_url(
    upstreams: tuple[FakeOpenAIServer, FakeGeminiServer, FakeOllamaServer],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("gateway")
    routes = tmp / "models.toml"
    routes.write_text(routes_toml(*(fake.url for fake in upstreams)))
    supervisor = start_gateway(tmp, routes)
    try:
        assert all(supervisor.wait_ready(60).values())
        yield supervisor.processes[0].url
    finally:
        supervisor.stop()


def ask(model: str, text: str, **params: Any) -> GenerateRequest:
    return GenerateRequest(model=model, messages=[ChatMessage(role="user", content=text)], **params)


async def test_models_are_listed_without_keys(gateway_url: str) -> None:
    listed = await GatewayClient(gateway_url).models()
    names = {route.name: route for route in listed.models}
    assert set(names) == {"fake-gpt", "fake-gemini", "fake-ollama"}
    assert names["fake-gpt"].supports_logprobs and not names["fake-gemini"].supports_logprobs
    assert names["fake-gpt"].max_retries == 2
    async with get_session().get(f"{gateway_url}/v1/models") as response:
        assert SECRET not in await response.text()


@pytest.mark.parametrize(
    ("route", "expected"),
    [("fake-gpt", "Paris"), ("fake-gemini", "Gemini says hi"), ("fake-ollama", "Ollama says hi")],
)
async def test_every_backend_answers_and_the_second_call_is_cached(
    gateway_url: str, route: str, expected: str
) -> None:
    client = GatewayClient(gateway_url)
    question = f"What is the capital of France? ({route})"
    first = await client.generate(ask(route, question))
    second = await client.generate(ask(route, question))
    assert first.text == second.text == expected
    assert (first.cached, second.cached) == (False, True)
    assert first.route == route and first.backend in route.replace("gpt", "openai")


async def test_logprobs_come_back_from_an_openai_route(gateway_url: str) -> None:
    response = await GatewayClient(gateway_url).generate(
        ask("fake-gpt", "Capital of France?", top_logprobs=2, cache=False)
    )
    assert response.logprobs is not None
    assert [alt.token for alt in response.logprobs] == ["Paris", "Lyon"]


async def test_problems_name_the_field(gateway_url: str) -> None:
    client = GatewayClient(gateway_url)
    with pytest.raises(ServiceCallError) as unknown:
        await client.generate(ask("gpt-99", "hi"))
    assert unknown.value.status == 404
    assert unknown.value.problem.errors and unknown.value.problem.errors[0].field == "model"
    assert "gpt-99" in (unknown.value.problem.detail or "")
    with pytest.raises(ServiceCallError) as unsupported:
        await client.generate(ask("fake-gemini", "hi", top_logprobs=2))
    assert unsupported.value.status == 422
    assert unsupported.value.problem.errors[0].field == "top_logprobs"  # type: ignore[index]
    with pytest.raises(ServiceCallError) as one_answer:
        await client.generate(ask("paraphrase-vote:fake-gpt", "hi", n=2))
    assert one_answer.value.status == 422
    assert one_answer.value.problem.errors[0].field == "n"  # type: ignore[index]
    for model, params in [
        ("fake-gpt", {"top_logprobs": 2}),  # a stream returns no logprobs
        ("paraphrase-vote:fake-gpt", {}),  # a strategy answers after all its calls
    ]:
        with pytest.raises(ServiceCallError) as limited:
            await client.generate(ask(model, "hi", time_limit_s=5, **params))
        assert limited.value.status == 422
        assert limited.value.problem.errors[0].field == "time_limit_s"  # type: ignore[index]
    for body, field in [
        ({"model": "fake-gpt", "messages": [{"role": "user", "content": "x"}], "n": 17}, "n"),
        ({"model": "fake-gpt", "messages": [], "temperature": 0}, "messages"),
        (
            {"model": "fake-gpt", "messages": [{"role": "user", "content": "x"}], "temperature": 9},
            "temperature",
        ),
        (
            {"model": "fake-gpt", "messages": [{"role": "robot", "content": "x"}]},
            "messages[0].role",
        ),
        (  # past what OpenAI's API takes: the caller's error, not the upstream's
            {"model": "fake-gpt", "messages": [{"role": "user", "content": "x"}], "seed": 2**63},
            "seed",
        ),
        (
            {
                "model": "fake-gpt",
                "messages": [{"role": "user", "content": "x"}],
                "sample_index": 2**31,
            },
            "sample_index",
        ),
        (
            {
                "model": "fake-gpt",
                "messages": [{"role": "user", "content": "x"}],
                "time_limit_s": 0,
            },
            "time_limit_s",
        ),
    ]:
        async with get_session().post(f"{gateway_url}/v1/generate", json=body) as response:
            problem = await response.json(content_type=None)
        assert response.status == 400, problem
        assert problem["errors"][0]["field"] == field


async def test_a_reply_still_being_written_at_its_time_limit_comes_back_cut(
    gateway_url: str, upstreams: tuple[FakeOpenAIServer, FakeGeminiServer, FakeOllamaServer]
) -> None:
    openai = upstreams[0]
    openai.stream_delay_s = 0.05  # "echo: " and 60 words: 3 s to write
    try:
        began = time.perf_counter()
        cut = await GatewayClient(gateway_url).generate(
            ask("fake-gpt", " ".join(["word"] * 60), time_limit_s=1.0, cache=False)
        )
        elapsed = time.perf_counter() - began
    finally:
        openai.stream_delay_s = 0.0
    assert cut.finish_reason == "time_limit" and elapsed < 2.5
    assert cut.text.startswith("echo: word") and 0 < len(cut.text.split()) < 61
    assert cut.usage.output_tokens == len(cut.text.split())


async def test_a_final_failure_carries_its_outcome_and_attempts(gateway_url: str) -> None:
    with pytest.raises(ServiceCallError) as failure:
        await GatewayClient(gateway_url).generate(ask("fake-gpt", "limit-me"))
    problem = failure.value.problem
    assert failure.value.status == 429
    assert (problem.outcome, problem.attempts) == ("rate_limited", 3)
    assert problem.retry_after_s == pytest.approx(0.05)
    # a wait that is no number is no advice: still a 429 problem (it was a 500)
    with pytest.raises(ServiceCallError) as endless:
        await GatewayClient(gateway_url).generate(ask("fake-gpt", "limit-me-forever"))
    assert endless.value.status == 429 and endless.value.problem.retry_after_s is None


async def test_batch_answers_in_order_and_one_failure_does_not_fail_it(gateway_url: str) -> None:
    requests = [
        ask("fake-gpt", "first"),
        ask("fake-gpt", "fail-me"),
        ask("nope", "x"),
        ask("fake-ollama", "third"),
        ask("fake-gpt", "last"),
    ]
    batch = await GatewayClient(gateway_url).generate_batch(requests)
    results = batch.results
    assert [r.result.text if r.result else None for r in results] == [
        "echo: first",
        None,
        None,
        "Ollama says hi",
        "echo: last",
    ]
    assert results[1].error is not None and results[1].error.outcome == "upstream_error"
    assert results[1].error.status == 502 and results[1].error.attempts == 1
    assert results[2].error is not None and results[2].error.status == 404


async def test_metrics_are_exported_without_per_question_labels(gateway_url: str) -> None:
    client = GatewayClient(gateway_url)
    for _ in range(2):  # a miss, then a hit
        await client.generate(ask("fake-gpt", "metrics please"))
    with pytest.raises(ServiceCallError):
        await client.generate(ask("fake-gpt", "limit-me"))
    async with get_session().get(f"{gateway_url}/metrics") as response:
        text = await response.text()
    for name in [
        'steadfast_model_requests_total{backend="openai",outcome="ok",route="fake-gpt"}',
        'steadfast_model_request_duration_seconds_count{backend="openai",route="fake-gpt"}',
        "steadfast_gateway_overhead_seconds_count",
        'steadfast_model_retries_total{reason="rate_limited",route="fake-gpt"}',
        'steadfast_model_cache_requests_total{result="hit"}',
        'steadfast_model_tokens_total{direction="output",route="fake-gpt"}',
        'steadfast_model_inflight_requests{route="fake-gpt"} 0.0',
    ]:
        assert name in text, name
    assert "metrics please" not in text and SECRET not in text


def test_a_broken_routes_file_stops_start_up(tmp_path: Path) -> None:
    routes = tmp_path / "models.toml"
    routes.write_text('[models.fast]\nbackend = "openai"\nmodel = "m"\nmax_concurency = 4\n')
    supervisor = start_gateway(tmp_path, routes)
    try:
        with pytest.raises(RuntimeError, match="exited"):
            supervisor.wait_ready(30)
        log = (tmp_path / "logs" / "gateway.log").read_text()
    finally:
        supervisor.stop()
    assert "route 'fast', key 'max_concurency'" in log


async def test_the_cache_persists_across_restarts(
    database_url: str, tmp_path: Path, upstreams: tuple[FakeOpenAIServer, ...]
) -> None:
    openai = upstreams[0]
    routes = tmp_path / "models.toml"
    routes.write_text(routes_toml(*(fake.url for fake in upstreams)))
    question = ask("fake-gpt", f"Persist me on {database_url.split(':')[0]}")
    for run in range(2):
        supervisor = start_gateway(tmp_path, routes, {"DATABASE_URL": database_url})
        try:
            assert all(supervisor.wait_ready(60).values())
            calls = openai.call_count
            response = await GatewayClient(supervisor.processes[0].url).generate(question)
        finally:
            supervisor.stop()
        assert response.cached is (run == 1)
        assert openai.call_count == calls + (1 if run == 0 else 0)


async def test_with_a_maximum_age_an_old_answer_is_asked_again_and_the_sweep_deletes_it(
    tmp_path: Path, upstreams: tuple[FakeOpenAIServer, ...]
) -> None:
    openai = upstreams[0]
    routes = tmp_path / "models.toml"
    routes.write_text(routes_toml(*(fake.url for fake in upstreams)))
    max_age_s = 3.0
    settings = {
        "STEADFAST_GATEWAY_CACHE_MAX_AGE_DAYS": str(max_age_s / 86400),
        "STEADFAST_GATEWAY_CACHE_SWEEP_S": "0.2",
    }
    supervisor = start_gateway(tmp_path, routes, settings)
    try:
        assert all(supervisor.wait_ready(60).values())
        url = supervisor.processes[0].url
        client = GatewayClient(url)
        question = ask("fake-gpt", "Ask me again later")
        calls = openai.call_count
        first, second = [await client.generate(question) for _ in range(2)]
        assert (first.cached, second.cached) == (False, True)
        await asyncio.sleep(max_age_s + 0.5)
        # the sweep (every 0.2 s) deletes it; the third request would store a fresh one
        deadline = time.monotonic() + 30
        while await _purged_responses(url) < 1:
            assert time.monotonic() < deadline, "the sweep deleted no expired answer"
            await asyncio.sleep(0.1)
        third = await client.generate(question)
    finally:
        supervisor.stop()
    assert third.cached is False and openai.call_count == calls + 2


async def _purged_responses(gateway_url: str) -> float:
    async with get_session().get(f"{gateway_url}/metrics") as response:
        metrics = await response.text()
    purged = 'steadfast_model_cache_purged_total{kind="response"} '
    counts = [float(line.split()[-1]) for line in metrics.splitlines() if line.startswith(purged)]
    return counts[0] if counts else 0.0


def _batch_posts(gateway_url: str, text: str) -> float:
    """Requests the gateway counted on ``/v1/generate/batch``, from its /metrics text."""
    total = 0.0
    for line in text.splitlines():
        if line.startswith("steadfast_http_requests_total{") and "/v1/generate/batch" in line:
            total += float(line.rsplit(" ", 1)[1])
    return total


async def test_concurrent_generate_calls_travel_as_one_batch_with_their_own_outcomes(
    gateway_url: str,
) -> None:
    client = GatewayClient(gateway_url)
    async with get_session().get(f"{gateway_url}/metrics") as response:
        before = _batch_posts(gateway_url, await response.text())
    outcomes = await asyncio.gather(
        client.generate(ask("fake-gpt", "coalesced one")),
        client.generate(ask("fake-gpt", "fail-me")),
        client.generate(ask("gpt-99", "unknown route")),
        client.generate(ask("fake-gemini", "no logprobs here", top_logprobs=2)),
        client.generate(ask("fake-ollama", "coalesced two")),
        return_exceptions=True,
    )
    async with get_session().get(f"{gateway_url}/metrics") as response:
        after = _batch_posts(gateway_url, await response.text())
    assert after - before == 1  # five calls, one HTTP request
    first, failed, unknown, unsupported, last = outcomes
    assert isinstance(first, GenerateResponse) and first.text == "echo: coalesced one"
    assert isinstance(last, GenerateResponse) and last.text == "Ollama says hi"
    # each caller gets the error it would have got alone
    assert isinstance(failed, ServiceCallError) and failed.status == 502
    assert failed.problem.outcome == "upstream_error"
    assert isinstance(unknown, ServiceCallError) and unknown.status == 404
    assert "gpt-99" in (unknown.problem.detail or "")
    assert isinstance(unsupported, ServiceCallError) and unsupported.status == 422
    assert unsupported.problem.errors and unsupported.problem.errors[0].field == "top_logprobs"


async def test_an_invalid_request_among_concurrent_ones_fails_alone(gateway_url: str) -> None:
    """The gateway refuses a whole batch with one invalid request (400): the client then sends
    each alone, so only the invalid one fails, with the problem naming its own field."""
    client = GatewayClient(gateway_url)
    valid, invalid = await asyncio.gather(
        client.generate(ask("fake-gpt", "still answered")),
        client.generate(ask("fake-gpt", "too hot", temperature=9.0)),
        return_exceptions=True,
    )
    assert isinstance(valid, GenerateResponse) and valid.text == "echo: still answered"
    assert isinstance(invalid, ServiceCallError) and invalid.status == 400
    assert invalid.problem.errors and invalid.problem.errors[0].field == "temperature"
