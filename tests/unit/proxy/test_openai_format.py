"""The chat.completion.chunk events of a streamed answer."""

from __future__ import annotations

import json

from steadfast.services.gateway.strategies import openai_format
from steadfast.shared.contracts.gateway import Usage


def test_the_answer_streams_as_chunks_ending_with_done() -> None:
    content = "x" * (openai_format.CHUNK_CHARS + 5)
    completion = openai_format.completion("fake", content, Usage(input_tokens=7, output_tokens=3))
    events = list(openai_format.chunk_events(completion, include_usage=True))
    assert events[-1] == b"data: [DONE]\n\n"
    assert all(event.startswith(b"data: ") and event.endswith(b"\n\n") for event in events)
    chunks = [json.loads(event[len(b"data: ") :]) for event in events[:-1]]
    assert {chunk["id"] for chunk in chunks} == {completion.id}
    assert {chunk["object"] for chunk in chunks} == {"chat.completion.chunk"}
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    text = "".join(chunk["choices"][0]["delta"].get("content", "") for chunk in chunks[:-1])
    assert text == content
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop"
    assert chunks[-1]["choices"] == []
    assert chunks[-1]["usage"] == {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}


def test_without_include_usage_no_usage_chunk_is_sent() -> None:
    completion = openai_format.completion("fake", "Paris", Usage())
    events = list(openai_format.chunk_events(completion, include_usage=False))
    chunks = [json.loads(event[len(b"data: ") :]) for event in events[:-1]]
    assert all("usage" not in chunk for chunk in chunks)
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"


def test_errors_have_openai_types() -> None:
    assert openai_format.error_body(429, "slow down").error.type == "rate_limit_error"
    assert openai_format.error_body(502, "upstream").error.type == "server_error"
    assert openai_format.error_body(400, "bad", "top_p").error.param == "top_p"
