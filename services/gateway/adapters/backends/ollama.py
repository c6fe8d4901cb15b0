"""Backend for Ollama's native ``POST /api/chat`` (non-streaming)."""

from __future__ import annotations

from typing import Any

import aiohttp
import msgspec

from services.gateway.adapters.backends import BackendContext
from services.gateway.adapters.backends.http_errors import error_for_status, error_for_transport
from services.gateway.domain.backend import Completion, finish_reason
from services.gateway.domain.errors import BackendError
from services.gateway.domain.routes import Route
from shared.contracts.gateway import GenerateRequest


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


class OllamaBackend:
    name = "ollama"
    supports_logprobs = False
    retry_timeouts = True

    def __init__(self, route: Route, _: BackendContext | None = None) -> None:
        self.route = route
        self.url = f"{(route.resolved_base_url() or '').rstrip('/')}/api/chat"
        self._session: aiohttp.ClientSession | None = None

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(limit=max(self.route.max_concurrency, 16))
            self._session = aiohttp.ClientSession(connector=connector)
        return self._session

    async def complete(self, request: GenerateRequest, timeout_s: float) -> Completion:
        body = msgspec.json.encode(chat_body(self.route.model, request))
        timeout = aiohttp.ClientTimeout(total=timeout_s)
        headers = {"Content-Type": "application/json"}
        try:
            async with self._client().post(
                self.url, data=body, headers=headers, timeout=timeout
            ) as response:
                payload = await response.read()
                if response.status >= 400:
                    text = payload.decode("utf-8", "replace")
                    raise error_for_status(response.status, text, response.headers)
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise error_for_transport(exc) from exc
        return _completion(payload)

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()


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
