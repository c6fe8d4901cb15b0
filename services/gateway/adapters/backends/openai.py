"""Backend for any OpenAI-compatible chat-completions server, over aiohttp."""

from __future__ import annotations

import os
from typing import Any

import msgspec

from steadfast.services.gateway.adapters.backends import BackendContext
from steadfast.services.gateway.adapters.backends.http_backend import HttpBackend
from steadfast.services.gateway.domain.backend import Completion, finish_reason
from steadfast.services.gateway.domain.errors import BackendError
from steadfast.services.gateway.domain.routes import Route
from steadfast.shared.contracts.gateway import MAX_SAMPLES, GenerateRequest, TokenAlternative


class _TopLogprob(msgspec.Struct):
    token: str
    logprob: float


class _TokenLogprob(msgspec.Struct):
    token: str
    logprob: float
    top_logprobs: list[_TopLogprob] = msgspec.field(default_factory=list)


class _Logprobs(msgspec.Struct):
    content: list[_TokenLogprob] | None = None


class _Message(msgspec.Struct):
    content: str | None = None
    refusal: str | None = None


class _Choice(msgspec.Struct):
    message: _Message
    index: int = 0
    finish_reason: str | None = None
    logprobs: _Logprobs | None = None


class _Usage(msgspec.Struct):
    prompt_tokens: int = 0
    completion_tokens: int = 0


class ChatCompletion(msgspec.Struct):
    """The part of an OpenAI chat-completion response the gateway reads."""

    choices: list[_Choice]
    usage: _Usage | None = None


_DECODER = msgspec.json.Decoder(ChatCompletion)


def chat_body(model: str, request: GenerateRequest) -> dict[str, Any]:
    """The OpenAI request body of a generate request."""
    body: dict[str, Any] = {
        "model": model,
        "messages": [{"role": m.role, "content": m.content} for m in request.messages],
        "temperature": request.temperature,
    }
    if request.max_tokens is not None:
        body["max_tokens"] = request.max_tokens
    if request.seed is not None:
        body["seed"] = request.seed
    if request.n > 1:
        body["n"] = request.n
    if request.stop:
        body["stop"] = request.stop
    if request.top_logprobs is not None:
        body["logprobs"] = True
        body["top_logprobs"] = request.top_logprobs
    return body


def streamed_body(model: str, request: GenerateRequest, **extra: Any) -> dict[str, Any]:
    """The body of a request read as it is written (one with a time limit), with the usage
    at its end; ``extra`` adds a server's own options."""
    return chat_body(model, request) | {
        "stream": True,
        "stream_options": {"include_usage": True},
        **extra,
    }


def completion_from(response: ChatCompletion, request: GenerateRequest) -> Completion:
    if not response.choices:
        raise BackendError("bad_response", "the response has no choices")
    choice = min(response.choices, key=lambda choice: choice.index)
    refusal = next((c.message.refusal for c in response.choices if c.message.refusal), None)
    if refusal:  # of any sample
        raise BackendError("refused", f"the model refused: {refusal[:300]}")
    usage = response.usage or _Usage()
    return Completion(
        text=choice.message.content or "",
        finish_reason=finish_reason(choice.finish_reason),
        input_tokens=usage.prompt_tokens,
        output_tokens=usage.completion_tokens,
        logprobs=_first_token_alternatives(choice, request),
        samples=_samples(response, request),
    )


def _samples(response: ChatCompletion, request: GenerateRequest) -> tuple[str, ...] | None:
    """The texts of the ``n`` choices asked for, in their order."""
    if request.n == 1:
        return None
    choices = sorted(response.choices, key=lambda choice: choice.index)
    if len(choices) != request.n:
        raise BackendError(
            "bad_response", f"{request.n} samples were asked for, {len(choices)} came back"
        )
    return tuple(choice.message.content or "" for choice in choices)


def _first_token_alternatives(
    choice: _Choice, request: GenerateRequest
) -> list[TokenAlternative] | None:
    if request.top_logprobs is None:
        return None
    tokens = choice.logprobs.content if choice.logprobs else None
    if not tokens and not choice.message.content:
        return []  # an empty answer has no first token
    if not tokens:
        raise BackendError("bad_response", "logprobs were asked for but none came back")
    first = tokens[0]
    alternatives = first.top_logprobs or [_TopLogprob(first.token, first.logprob)]
    return [TokenAlternative(token=alt.token, logprob=alt.logprob) for alt in alternatives]


def decode_completion(payload: bytes, request: GenerateRequest) -> Completion:
    try:
        response = _DECODER.decode(payload)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise BackendError("bad_response", f"not a chat completion: {exc}") from exc
    return completion_from(response, request)


def api_key(route: Route) -> str | None:
    """The route's key from its environment variable (never logged, never returned)."""
    if not route.api_key_env:
        return None
    key = os.environ.get(route.api_key_env)
    if not key:
        raise BackendError(
            "unavailable",
            f"environment variable {route.api_key_env} (api_key_env of route "
            f"{route.name!r}) is not set",
        )
    return key


class OpenAIBackend(HttpBackend):
    """OpenAI and OpenAI-compatible servers, through ``/chat/completions`` (with logprobs)."""

    name = "openai"
    supports_logprobs = True
    retry_timeouts = True

    def __init__(self, route: Route, _: BackendContext | None = None) -> None:
        super().__init__(route, f"{(route.resolved_base_url() or '').rstrip('/')}/chat/completions")

    def max_samples(self, route: Route) -> int:
        return MAX_SAMPLES

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        key = api_key(self.route)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    async def complete(self, request: GenerateRequest, timeout_s: float) -> Completion:
        headers = self._headers()
        if request.time_limit_s is not None:
            body = msgspec.json.encode(streamed_body(self.route.model, request))
            return await self._post_streamed(
                body, headers, timeout_s, request.n, request.time_limit_s
            )
        body = msgspec.json.encode(chat_body(self.route.model, request))
        payload = await self._post(body, headers, timeout_s)
        return decode_completion(payload, request)
