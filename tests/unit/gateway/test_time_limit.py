"""A generate request with ``time_limit_s``: the reply is read as it is written and, at the
limit, answered with what was written by then (``finish_reason`` ``time_limit``)."""

from __future__ import annotations

import asyncio
import time

import openai
import pytest

from steadfast.services.gateway.adapters.backends.streaming import StreamedReply, read_stream
from steadfast.services.gateway.adapters.cache_repository import SqlResponseCache
from steadfast.services.gateway.domain.errors import (
    BackendError,
    GenerationFailed,
    UnsupportedParameter,
)
from tests.fakes.gemini_server import FakeGeminiServer
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.stand_in import Fault
from tests.unit.gateway.conftest import ask, gateway_for, route_to

LIST = "\n".join(f"{n}. Reworded question number {n}?" for n in range(1, 21))


def slow_list(delay_s: float = 0.05) -> FakeOpenAIServer:
    fake = FakeOpenAIServer(responder=lambda _: LIST)
    fake.stream_delay_s = delay_s
    return fake


async def test_a_reply_is_cut_at_the_limit_with_what_was_written() -> None:
    with slow_list() as fake:  # 100 words, 5 s to write them all
        gateway = gateway_for(route_to("openai", fake))
        began = time.perf_counter()
        response = await gateway.generate(ask(time_limit_s=1.0, cache=False))
        elapsed = time.perf_counter() - began
        for _ in range(40):  # the gateway closed the stream it no longer reads
            if fake.closed_streams:
                break
            await asyncio.sleep(0.05)
        await gateway.close()
    assert response.finish_reason == "time_limit"
    assert 0 < len(response.text) < len(LIST) and LIST.startswith(response.text)
    assert elapsed < 2.0
    # counted by its pieces, one a word: OpenAI says its usage only at the end
    assert response.usage.output_tokens == len(response.text.split())
    assert fake.calls[0]["stream"] is True
    assert fake.calls[0]["stream_options"] == {"include_usage": True}
    assert "timings_per_token" not in fake.calls[0]  # llama.cpp's own option, not OpenAI's
    assert fake.closed_streams == 1


async def test_a_server_that_sends_nothing_by_the_limit_is_answered_at_the_limit() -> None:
    # llama.cpp sends its headers only once it has read the prompt
    with FakeOpenAIServer(responder=lambda _: LIST, fault_for=lambda _: Fault.delay(3.0)) as fake:
        gateway = gateway_for(route_to("openai", fake))
        began = time.perf_counter()
        response = await gateway.generate(ask(time_limit_s=0.5, cache=False))
        elapsed = time.perf_counter() - began
        await gateway.close()
    assert response.finish_reason == "time_limit" and response.text == ""
    assert elapsed < 1.5 and response.attempts == 1


async def test_a_reply_that_ends_before_the_limit_is_whole_and_counted_by_its_usage() -> None:
    with slow_list(delay_s=0.0) as fake:
        gateway = gateway_for(route_to("openai", fake))
        response = await gateway.generate(ask(time_limit_s=5.0, n=2, cache=False))
        await gateway.close()
    assert response.finish_reason == "stop"
    assert response.samples == [LIST, LIST]
    assert response.usage.input_tokens == 6  # the prompt's words, from the usage chunk
    assert response.usage.output_tokens == 2 * len(LIST.split())


async def test_the_limit_counts_from_arrival_and_a_request_past_it_goes_nowhere() -> None:
    with slow_list() as fake:
        route = route_to("openai", fake, max_concurrency=1)
        gateway = gateway_for(route)
        first = asyncio.create_task(gateway.generate(ask(time_limit_s=0.6, cache=False)))
        await asyncio.sleep(0.05)
        # waits for the one slot until after its own limit: nothing is asked upstream
        second = await gateway.generate(ask("other", time_limit_s=0.3, cache=False))
        await first
        await gateway.close()
    assert second.finish_reason == "time_limit" and second.text == ""
    assert fake.call_count == 1


async def test_a_request_waiting_for_a_slot_past_its_limit_comes_back_at_the_limit() -> None:
    def first_is_slow(body: dict[str, object]) -> Fault | None:
        return None if "other" in str(body["messages"]) else Fault.delay(3.0)

    with FakeOpenAIServer(responder=lambda _: LIST, fault_for=first_is_slow) as fake:
        gateway = gateway_for(route_to("openai", fake, max_concurrency=1))
        first = asyncio.create_task(gateway.generate(ask(cache=False)))
        await asyncio.sleep(0.1)
        began = time.perf_counter()
        second = await gateway.generate(ask("other", time_limit_s=0.3, cache=False))
        elapsed = time.perf_counter() - began
        first.cancel()
        await asyncio.gather(first, return_exceptions=True)
        await gateway.close()
    assert second.finish_reason == "time_limit" and second.text == "" and elapsed < 1.0


async def test_a_retry_that_would_pass_the_limit_is_the_failure_it_was() -> None:
    with slow_list(delay_s=0.0) as fake:
        fake.enqueue(Fault.rate_limit(retry_after_s=5.0))
        gateway = gateway_for(route_to("openai", fake, retry_max_s=10.0))
        began = time.perf_counter()
        with pytest.raises(GenerationFailed) as failed:
            await gateway.generate(ask(time_limit_s=1.0, cache=False))
        elapsed = time.perf_counter() - began
        await gateway.close()
    assert failed.value.outcome == "rate_limited" and elapsed < 1.0
    assert "would pass the request's time limit" in failed.value.detail


async def test_a_cut_reply_is_not_cached_and_a_whole_one_is(cache: SqlResponseCache) -> None:
    with slow_list() as fake:
        gateway = gateway_for(route_to("openai", fake), cache=cache)
        cut = await gateway.generate(ask(time_limit_s=0.5))
        again = await gateway.generate(ask(time_limit_s=0.5))
        fake.stream_delay_s = 0.0
        whole = await gateway.generate(ask(time_limit_s=5.0))
        cached = await gateway.generate(ask())  # the same request without a limit
        await gateway.close()
    assert cut.finish_reason == again.finish_reason == "time_limit"
    assert not again.cached and fake.call_count == 3
    assert whole.text == LIST and cached.cached and cached.text == LIST


async def test_a_gemini_route_writes_to_the_end() -> None:
    with FakeGeminiServer(responder=lambda _: "Paris") as fake:
        gateway = gateway_for(route_to("gemini", fake))
        response = await gateway.generate(ask(time_limit_s=0.5, cache=False))
        await gateway.close()
    assert response.text == "Paris" and response.finish_reason == "stop"


async def test_logprobs_cannot_be_read_from_a_stream() -> None:
    with slow_list() as fake:
        gateway = gateway_for(route_to("openai", fake))
        with pytest.raises(UnsupportedParameter) as raised:
            await gateway.generate(ask(time_limit_s=1.0, top_logprobs=2))
        await gateway.close()
    assert raised.value.field == "time_limit_s" and fake.call_count == 0


async def test_the_fake_streams_as_openai_does_for_the_real_client() -> None:
    with slow_list(delay_s=0.0) as fake:
        client = openai.AsyncOpenAI(base_url=fake.url, api_key="test", max_retries=0)
        stream = await client.chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": "list"}],
            stream=True,
            stream_options={"include_usage": True},
        )
        pieces, usage = [], None
        async for chunk in stream:
            pieces += [choice.delta.content or "" for choice in chunk.choices]
            usage = chunk.usage or usage
        await client.close()
    assert "".join(pieces) == LIST
    assert usage is not None and usage.completion_tokens == len(LIST.split())


def _events(*chunks: bytes) -> list[bytes]:
    return [b"data: " + chunk + b"\n" for chunk in chunks]


async def _lines(events: list[bytes], pause_after: int | None = None):  # type: ignore[no-untyped-def]
    for index, event in enumerate(events):
        if index == pause_after:
            await asyncio.sleep(10)
        yield event


async def test_samples_interleaved_and_counted_by_llama_cpp_timings_when_cut() -> None:
    events = _events(
        b'{"choices":[{"index":1,"delta":{"content":"1. B"}}],'
        b'"timings":{"prompt_n":30,"cache_n":10,"predicted_n":1}}',
        b'{"choices":[{"index":0,"delta":{"content":"1. A"}}],'
        b'"timings":{"prompt_n":30,"cache_n":10,"predicted_n":1}}',
        b'{"choices":[{"index":0,"delta":{"content":"\\n2."}}],'
        b'"timings":{"prompt_n":30,"cache_n":10,"predicted_n":2}}',
        b'{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}',
        b"[DONE]",
    )
    reply = StreamedReply(samples=2)
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.2):
            await read_stream(_lines(events, pause_after=3), reply)
    completion = reply.completion(cut=True)
    assert completion.finish_reason == "time_limit"
    assert completion.samples == ("1. A\n2.", "1. B")
    assert (completion.input_tokens, completion.output_tokens) == (40, 3)


async def test_a_whole_stream_ends_at_done() -> None:
    events = _events(
        b'{"choices":[{"index":0,"delta":{"content":"Paris"}}]}',
        b'{"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}',
        b'{"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":1}}',
        b"[DONE]",
    )
    reply = StreamedReply(samples=1)
    await read_stream(_lines(events), reply)
    completion = reply.completion(cut=False)
    assert reply.done and completion.text == "Paris" and completion.finish_reason == "length"
    assert (completion.input_tokens, completion.output_tokens) == (7, 1)


async def test_several_whole_samples_are_counted_by_llama_cpp_timings_not_its_usage() -> None:
    events = _events(
        b'{"choices":[{"index":0,"delta":{"content":"Yes"}}],'
        b'"timings":{"prompt_n":12,"cache_n":0,"predicted_n":1}}',
        b'{"choices":[{"index":1,"delta":{"content":"No"}}],'
        b'"timings":{"prompt_n":12,"cache_n":0,"predicted_n":1}}',
        b'{"choices":[{"index":1,"delta":{"content":", never"}}],'
        b'"timings":{"prompt_n":12,"cache_n":0,"predicted_n":3}}',
        b'{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}',
        b'{"choices":[{"index":1,"delta":{},"finish_reason":"stop"}]}',
        b'{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":1}}',
        b"[DONE]",
    )
    reply = StreamedReply(samples=2)
    await read_stream(_lines(events), reply)
    completion = reply.completion(cut=False)
    assert completion.samples == ("Yes", "No, never") and completion.finish_reason == "stop"
    assert (completion.input_tokens, completion.output_tokens) == (12, 4)


@pytest.mark.parametrize(
    ("line", "outcome"),
    [
        (
            b'error: {"code":400,"message":"the request exceeds the available context size"}',
            "too_large",
        ),
        (b'error: {"code":500,"message":"slot crashed"}', "upstream_error"),
    ],
)
async def test_llama_cpp_ending_a_stream_in_an_error_is_a_typed_failure(
    line: bytes, outcome: str
) -> None:
    reply = StreamedReply(samples=1)
    with pytest.raises(BackendError) as raised:
        await read_stream(
            _lines([*_events(b'{"choices":[{"delta":{"content":"a"}}]}'), line]), reply
        )
    assert raised.value.outcome == outcome


def test_a_stream_is_finished_once_every_sample_said_how_it_ended() -> None:
    reply = StreamedReply(samples=2)
    reply.add(b'{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}')
    assert not reply.finished()
    reply.add(b'{"choices":[{"index":1,"delta":{},"finish_reason":"length"}]}')
    assert reply.finished()


@pytest.mark.parametrize(
    ("chunk", "outcome"),
    [
        (b'{"error":{"message":"model crashed"}}', "upstream_error"),
        (b'{"choices":[{"index":0,"delta":{"refusal":"I cannot help"}}]}', "refused"),
        (b'{"choices": [', "bad_response"),
    ],
)
def test_a_bad_chunk_is_a_typed_failure(chunk: bytes, outcome: str) -> None:
    with pytest.raises(BackendError) as raised:
        StreamedReply(samples=1).add(chunk)
    assert raised.value.outcome == outcome
