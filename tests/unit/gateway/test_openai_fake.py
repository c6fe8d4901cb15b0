"""The stand-in OpenAI server behaves like OpenAI for the real ``openai`` client."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request

import openai
import pytest

from tests.conftest import free_port
from tests.fakes.openai_server import FakeOpenAIServer, Fault, Reply


def _client(fake: FakeOpenAIServer) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=fake.url, api_key="test", max_retries=0, timeout=5)


async def test_answer_depends_on_wording_and_calls_are_recorded() -> None:
    def responder(body: dict) -> str:
        return "Paris" if "France" in body["messages"][-1]["content"] else "unknown"

    with FakeOpenAIServer(responder=responder) as fake:
        client = _client(fake)
        first = await client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "Capital of France?"}]
        )
        second = await client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "Capital of Spain?"}]
        )
        await client.close()
        assert first.choices[0].message.content == "Paris"
        assert second.choices[0].message.content == "unknown"
        assert first.usage is not None and first.usage.prompt_tokens == 3
        assert fake.call_count == 2
        assert fake.calls[1]["messages"][0]["content"] == "Capital of Spain?"


async def test_logprobs_have_the_replys_alternatives() -> None:
    reply = Reply(text="A", top_logprobs=[("A", -0.2), ("B", -1.8), ("C", -3.0)])
    with FakeOpenAIServer(responder=lambda _: reply) as fake:
        client = _client(fake)
        response = await client.chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": "pick"}],
            logprobs=True,
            top_logprobs=2,
        )
        await client.close()
    content = response.choices[0].logprobs.content  # type: ignore[union-attr]
    assert content is not None
    assert [(alt.token, alt.logprob) for alt in content[0].top_logprobs] == [
        ("A", -0.2),
        ("B", -1.8),
    ]


async def test_queued_faults_apply_in_order_then_normal_answers() -> None:
    with FakeOpenAIServer() as fake:
        fake.enqueue(Fault.rate_limit(retry_after_s=2), Fault.error(503), Fault.malformed())
        client = _client(fake)
        messages = [{"role": "user", "content": "hi"}]
        with pytest.raises(openai.RateLimitError) as limited:
            await client.chat.completions.create(model="m", messages=messages)  # type: ignore[arg-type]
        assert limited.value.response.headers["retry-after"] == "2"
        with pytest.raises(openai.InternalServerError):
            await client.chat.completions.create(model="m", messages=messages)  # type: ignore[arg-type]
        with pytest.raises(ValueError):  # the body is not JSON
            await client.chat.completions.create(model="m", messages=messages)  # type: ignore[arg-type]
        ok = await client.chat.completions.create(model="m", messages=messages)  # type: ignore[arg-type]
        await client.close()
        assert ok.choices[0].message.content == "echo: hi"
        assert fake.call_count == 4


async def test_hang_and_refusal_are_per_request() -> None:
    def fault_for(body: dict) -> Fault | None:
        text = body["messages"][-1]["content"]
        return Fault.hang() if text == "hang" else Fault.refuse() if text == "bad" else None

    with FakeOpenAIServer(fault_for=fault_for) as fake:
        client = openai.AsyncOpenAI(base_url=fake.url, api_key="t", max_retries=0, timeout=0.3)
        started = time.monotonic()
        with pytest.raises(openai.APITimeoutError):
            await client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "hang"}]
            )
        assert time.monotonic() - started < 10  # given up, not hung for ever
        refused = await client.with_options(timeout=30).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "bad"}]
        )
        await client.close()
        assert refused.choices[0].finish_reason == "content_filter"


def test_runs_as_a_process_with_latency() -> None:
    port = free_port()
    command = [sys.executable, "-m", "tests.fakes.openai_server", "--port", str(port)]
    process = subprocess.Popen([*command, "--latency-ms", "50"])
    try:
        body = b'{"model": "m", "messages": [{"role": "user", "content": "x"}]}'
        deadline = time.monotonic() + 20
        while True:
            request = urllib.request.Request(
                f"http://127.0.0.1:{port}/v1/chat/completions",
                data=body,
                headers={"Content-Type": "application/json"},
            )
            try:
                started = time.monotonic()
                with urllib.request.urlopen(request, timeout=5) as response:
                    payload = response.read()
                break
            except OSError:
                assert time.monotonic() < deadline, "stand-in did not start"
                time.sleep(0.1)
        assert b"echo: x" in payload
        assert time.monotonic() - started >= 0.05
    finally:
        process.terminate()
        process.wait(10)
