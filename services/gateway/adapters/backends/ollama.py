"""Backend for Ollama's native ``POST /api/chat`` (non-streaming)."""

from __future__ import annotations

from typing import Any

import msgspec

from steadfast.services.gateway.adapters.backends import BackendContext
from steadfast.services.gateway.adapters.backends.http_backend import HttpBackend
from steadfast.services.gateway.domain.backend import Completion, finish_reason
from steadfast.services.gateway.domain.errors import BackendError
from steadfast.services.gateway.domain.routes import Route
from steadfast.shared.contracts.gateway import GenerateRequest


class _Message(msgspec.Struct):
    content: str = ""


class _ChatResponse(msgspec.Struct):
    message: _Message
    done: bool = True
    done_reason: str | None = None
    prompt_eval_count: int = 0
    eval_count: int = 0


_DECODER = msgspec.json.Decoder(_ChatResponse)


def chat_body(model: str, request: GenerateRequest) -> dict[str, Any]:
    options: dict[str, Any] = {"temperature": request.temperature}
    if request.max_tokens is not None:
        options["num_predict"] = request.max_tokens
    if request.seed is not None:
        options["seed"] = request.seed
    if request.stop:
        options["stop"] = request.stop
    return {
        "model": model,
        "messages": [{"role": m.role, "content": m.content} for m in request.messages],
        "stream": False,
        "options": options,
    }


class OllamaBackend(HttpBackend):
    """Routes to an Ollama server, through its ``/api/chat`` (no logprobs)."""

    name = "ollama"
    supports_logprobs = False
    retry_timeouts = True

    def __init__(self, route: Route, _: BackendContext | None = None) -> None:
        super().__init__(route, f"{(route.resolved_base_url() or '').rstrip('/')}/api/chat")

    def max_samples(self, route: Route) -> int:
        return 1  # no n in its API: the gateway sends a request a sample

    async def complete(self, request: GenerateRequest, timeout_s: float) -> Completion:
        body = msgspec.json.encode(chat_body(self.route.model, request))
        payload = await self._post(body, {"Content-Type": "application/json"}, timeout_s)
        return _completion(payload)


def _completion(payload: bytes) -> Completion:
    try:
        response = _DECODER.decode(payload)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise BackendError("bad_response", f"not an Ollama chat answer: {exc}") from exc
    if not response.done:
        raise BackendError("bad_response", "Ollama answered with an unfinished message")
    return Completion(
        text=response.message.content,
        finish_reason=finish_reason(response.done_reason or "stop"),
        input_tokens=response.prompt_eval_count,
        output_tokens=response.eval_count,
    )
