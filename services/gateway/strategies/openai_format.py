"""The OpenAI chat-completions wire format: requests in, ``chat.completion`` /
``chat.completion.chunk`` objects and error bodies out."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import msgspec

from steadfast.services.gateway.strategies.prompts import PROMPT_VERSION
from steadfast.services.gateway.strategies.question import AnswerSettings, Question
from steadfast.services.gateway.strategies.service import Run
from steadfast.shared.contracts.gateway import ChatMessage, Usage
from steadfast.shared.contracts.proxy import (
    AssistantMessage,
    ChatCompletion,
    ChatCompletionChunk,
    ChatCompletionRequest,
    ChunkChoice,
    ChunkDelta,
    CompletionChoice,
    CompletionUsage,
    OpenAIError,
    OpenAIErrorBody,
    ProxyMessage,
    SteadfastInfo,
)

#: characters per streamed chunk of the final answer
CHUNK_CHARS = 64

#: OpenAI's error ``type`` for each status the proxy answers with
ERROR_TYPES = {
    400: "invalid_request_error",
    404: "invalid_request_error",
    413: "invalid_request_error",
    422: "invalid_request_error",
    429: "rate_limit_error",
}


def conversation(request: ChatCompletionRequest) -> list[ChatMessage]:
    """OpenAI messages as gateway messages (``developer`` is a system message, text parts are
    joined)."""
    return [
        ChatMessage(
            role="system" if message.role == "developer" else message.role, content=_text(message)
        )
        for message in request.messages
    ]


def _text(message: ProxyMessage) -> str:
    if message.content is None:
        return ""
    if isinstance(message.content, str):
        return message.content
    return "\n".join(part.text for part in message.content)


def unsupported_field(request: ChatCompletionRequest) -> tuple[str, str] | None:
    """The first field set to something the proxy cannot honour, as (param, message); fields
    at their neutral value (``top_p`` 1, penalties 0, no tools, text output) pass."""
    neutral: list[tuple[str, Any, bool]] = [
        ("n", request.n, request.n in (None, 1)),
        ("top_p", request.top_p, request.top_p in (None, 1)),
        ("presence_penalty", request.presence_penalty, request.presence_penalty in (None, 0)),
        ("frequency_penalty", request.frequency_penalty, request.frequency_penalty in (None, 0)),
        ("logit_bias", request.logit_bias, not request.logit_bias),
        ("logprobs", request.logprobs, not request.logprobs),
        ("top_logprobs", request.top_logprobs, not request.top_logprobs),
        ("tools", request.tools, not request.tools),
        ("tool_choice", request.tool_choice, request.tool_choice in (None, "none", "auto")),
        (
            "response_format",
            request.response_format,
            request.response_format in (None, {"type": "text"}),
        ),
    ]
    for field, value, passes in neutral:
        if not passes:
            return field, f"{field}={value!r} is not supported by this proxy"
    for index, message in enumerate(request.messages):
        for field in ("tool_calls", "function_call", "audio"):
            if getattr(message, field):
                return f"messages[{index}].{field}", f"{field} in messages is not supported"
    return None


def answer_settings(request: ChatCompletionRequest, route: str) -> AnswerSettings:
    stop = [request.stop] if isinstance(request.stop, str) else request.stop
    return AnswerSettings.asked(
        route,
        temperature=request.temperature,
        seed=request.seed,
        cache=request.steadfast.cache if request.steadfast else True,
        max_tokens=request.max_completion_tokens or request.max_tokens,
        stop=stop,
    )


def question_of(request: ChatCompletionRequest) -> Question:
    return Question.from_messages(conversation(request))


def completion_usage(usage: Usage) -> CompletionUsage:
    return CompletionUsage(
        prompt_tokens=usage.input_tokens,
        completion_tokens=usage.output_tokens,
        total_tokens=usage.input_tokens + usage.output_tokens,
    )


def steadfast_info(run: Run, route: str) -> SteadfastInfo:
    result = run.result
    return SteadfastInfo(
        strategy=result.strategy,
        route=route,
        answer=result.answer,
        agreement=result.agreement,
        task=result.task,
        variants=result.variants,
        calls=run.meter.calls,
        cached_calls=run.meter.cached_calls,
        failed_variants=result.failed_variants,
        early_stopped=result.early_stopped,
        notes=result.notes,
        prompt_version=PROMPT_VERSION,
        clustering=result.clustering,
        clustering_judge_calls=result.clustering_judge_calls,
    )


def completion(
    model: str,
    content: str,
    usage: Usage,
    finish_reason: str = "stop",
    steadfast: SteadfastInfo | None = None,
) -> ChatCompletion:
    return ChatCompletion(
        id=new_completion_id(),
        object="chat.completion",
        created=int(time.time()),
        model=model,
        choices=[
            CompletionChoice(
                index=0,
                message=AssistantMessage(role="assistant", content=content),
                finish_reason=finish_reason,
            )
        ],
        usage=completion_usage(usage),
        steadfast=steadfast,
    )


def opening_chunk(
    completion_id: str, model: str, created: int, include_usage: bool
) -> ChatCompletionChunk:
    """The first chunk of a stream: the assistant's role, no content yet."""
    return ChatCompletionChunk(
        id=completion_id,
        object="chat.completion.chunk",
        created=created,
        model=model,
        choices=[
            ChunkChoice(index=0, delta=ChunkDelta(role="assistant", content=""), finish_reason=None)
        ],
        usage=_no_usage_yet(include_usage),
    )


def _no_usage_yet(include_usage: bool) -> msgspec.UnsetType | None:
    return None if include_usage else msgspec.UNSET


def chunk_events(
    completion: ChatCompletion, include_usage: bool, opened: bool = False
) -> Iterator[bytes]:
    """The completion as server-sent ``chat.completion.chunk`` events: the role (unless the
    stream was ``opened`` with it already), the content in pieces, the finish reason (with
    ``steadfast``), optionally the usage, then ``[DONE]``."""
    choice = completion.choices[0]
    content = choice.message.content

    def chunk(
        delta: ChunkDelta, finish: str | None = None, last: bool = False
    ) -> ChatCompletionChunk:
        return ChatCompletionChunk(
            id=completion.id,
            object="chat.completion.chunk",
            created=completion.created,
            model=completion.model,
            choices=[ChunkChoice(index=0, delta=delta, finish_reason=finish)],
            usage=_no_usage_yet(include_usage),
            steadfast=completion.steadfast if last else None,
        )

    if not opened:
        opening = opening_chunk(completion.id, completion.model, completion.created, include_usage)
        yield event(opening)
    for start in range(0, len(content), CHUNK_CHARS):
        yield event(chunk(ChunkDelta(content=content[start : start + CHUNK_CHARS])))
    yield event(chunk(ChunkDelta(), finish=choice.finish_reason, last=True))
    if include_usage:
        usage_chunk = chunk(ChunkDelta())
        usage_chunk.choices, usage_chunk.usage = [], completion.usage
        yield event(usage_chunk)
    yield b"data: [DONE]\n\n"


def event(payload: ChatCompletionChunk | OpenAIError) -> bytes:
    return b"data: " + msgspec.json.encode(payload) + b"\n\n"


def error_event(error: OpenAIError) -> bytes:
    """An error that ended a stream already started, as OpenAI sends one (its clients raise an
    ``APIError``)."""
    return event(error)


def new_completion_id() -> str:
    return f"chatcmpl-{uuid.uuid4().hex}"


def error_body(
    status: int, message: str, param: str | None = None, code: str | None = None
) -> OpenAIError:
    kind = ERROR_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    return OpenAIError(error=OpenAIErrorBody(message=message, type=kind, param=param, code=code))
