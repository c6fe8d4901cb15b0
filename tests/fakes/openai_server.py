"""Stand-in OpenAI-compatible chat-completions server (``POST /v1/chat/completions``).

In a test::

    with FakeOpenAIServer(responder=lambda body: "Paris", latency_s=0.0) as fake:
        base_url = fake.url            # "http://127.0.0.1:<port>/v1", an OpenAI base_url
        fake.enqueue(Fault.rate_limit(retry_after_s=0.1), Fault.error(503))
        ...
        assert fake.call_count == 3 and fake.calls[0]["messages"][0]["content"] == "..."

``responder(body) -> str | Reply`` makes the answer depend on the request (e.g. its wording); the
default echoes the last user message. Faults (see :class:`tests.fakes.stand_in.Fault`): latency,
429 with Retry-After, any status, hang, malformed body, content-filter refusal — from a queue
(``enqueue``) or per request (``fault_for=lambda body: Fault.error(500) if ... else None``).
``logprobs``/``top_logprobs`` are answered in OpenAI's shape (alternatives from ``Reply``).
``stream: true`` is answered as OpenAI streams: a chunk a word (``stream_delay_s`` apart), the
usage at the end when ``stream_options.include_usage`` asks; ``closed_streams`` counts the streams
the client closed before their end.

As a process (benchmarks): ``python -m tests.fakes.openai_server --port N [--latency-ms 50]``.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.fakes.stand_in import Fault, StandInServer, count_words, last_user_text, serve_forever

__all__ = ["FakeOpenAIServer", "Fault", "Reply"]


@dataclass
class Reply:
    """A reply with more than text: finish reason and the first token's alternatives."""

    text: str
    finish_reason: str = "stop"
    #: (token, logprob) alternatives of the first generated token, most likely first
    top_logprobs: list[tuple[str, float]] = field(default_factory=list)


def echo(body: dict[str, Any]) -> str:
    return f"echo: {last_user_text(body.get('messages', []))}"


def _as_reply(value: Any) -> Reply:
    return value if isinstance(value, Reply) else Reply(text=str(value))


def _token_logprobs(reply: Reply, top_n: int) -> dict[str, Any]:
    tokens = reply.text.split(" ") if reply.text else []  # an empty reply has no tokens
    tokens = [token if index == 0 else f" {token}" for index, token in enumerate(tokens)]
    first = reply.top_logprobs or [
        (tokens[0] if tokens else "", math.log(0.9)),
        ("<alt>", math.log(0.05)),
    ]
    entries = []
    for index, token in enumerate(tokens):
        alternatives = first if index == 0 else [(token, -0.01)]
        chosen = alternatives[0][1] if index == 0 else -0.01
        entries.append(
            {
                "token": token,
                "logprob": chosen,
                "bytes": list(token.encode()),
                "top_logprobs": [
                    {"token": alt, "logprob": lp, "bytes": list(alt.encode())}
                    for alt, lp in alternatives[:top_n]
                ],
            }
        )
    return {"content": entries, "refusal": None}


class FakeOpenAIServer(StandInServer):
    model_name = "fake-model"
    #: seconds between two chunks of a streamed reply
    stream_delay_s = 0.0
    #: streams the client closed before their end
    closed_streams = 0

    @property
    def url(self) -> str:
        """The OpenAI ``base_url`` of this server (ends in ``/v1``)."""
        return f"{self.root}/v1"

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/chat/completions", self.chat_completions)
        app.router.add_get("/v1/models", self.list_models)

    async def list_models(self, _: web.Request) -> web.Response:
        return web.json_response(
            {"object": "list", "data": [{"id": self.model_name, "object": "model"}]}
        )

    async def chat_completions(self, request: web.Request) -> web.StreamResponse:
        try:
            body = await request.json()
        except json.JSONDecodeError:
            return web.json_response({"error": {"message": "invalid JSON"}}, status=400)
        fault = await self.begin(body)
        if fault is not None and fault.kind == "hang":
            return web.json_response({"error": {"message": "hung"}}, status=504)
        if fault is not None and fault.kind == "malformed":
            return web.Response(text='{"id": "x", "choices": [', content_type="application/json")
        if fault is not None and fault.kind == "status":
            return self.fault_response(fault)
        # ``n`` choices, as OpenAI writes them: the responder is asked once for each
        replies = [_as_reply(self.reply_for(body, echo)) for _ in range(int(body.get("n") or 1))]
        if fault is not None and fault.kind == "refuse":
            replies = [Reply(text="", finish_reason="content_filter")] * len(replies)
        if body.get("stream"):
            return await self.stream(request, body, replies)
        return web.json_response(self.completion(body, *replies))

    async def stream(
        self, request: web.Request, body: dict[str, Any], replies: list[Reply]
    ) -> web.StreamResponse:
        """The replies as OpenAI streams them: a word of every sample a chunk, in turn."""
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        pieces = [re.findall(r"\s*\S+", reply.text) for reply in replies]
        try:
            for step in range(max(map(len, pieces), default=0)):
                for index, words in enumerate(pieces):
                    if step < len(words):
                        await self._event(
                            response, {"index": index, "delta": {"content": words[step]}}
                        )
                await asyncio.sleep(self.stream_delay_s)
            for index, reply in enumerate(replies):
                await self._event(
                    response, {"index": index, "delta": {}, "finish_reason": reply.finish_reason}
                )
            if (body.get("stream_options") or {}).get("include_usage"):
                usage = self.completion(body, *replies)["usage"]
                await response.write(
                    f"data: {json.dumps({'choices': [], 'usage': usage})}\n\n".encode()
                )
            await response.write(b"data: [DONE]\n\n")
        except (ConnectionResetError, asyncio.CancelledError):
            self.closed_streams += 1
            raise
        return response

    @staticmethod
    async def _event(response: web.StreamResponse, choice: dict[str, Any]) -> None:
        chunk = {"object": "chat.completion.chunk", "choices": [choice]}
        await response.write(f"data: {json.dumps(chunk)}\n\n".encode())

    def completion(self, body: dict[str, Any], *replies: Reply) -> dict[str, Any]:
        prompt_tokens = sum(
            count_words(str(message.get("content", ""))) for message in body.get("messages", [])
        )
        choices: list[dict[str, Any]] = []
        for index, reply in enumerate(replies):
            choice: dict[str, Any] = {
                "index": index,
                "message": {"role": "assistant", "content": reply.text},
                "finish_reason": reply.finish_reason,
                "logprobs": None,
            }
            if body.get("logprobs"):
                choice["logprobs"] = _token_logprobs(reply, int(body.get("top_logprobs") or 0))
            choices.append(choice)
        # the prompt is read once for every choice
        completion_tokens = sum(count_words(reply.text) for reply in replies if reply.text)
        return {
            "id": f"chatcmpl-fake-{self.call_count}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model") or self.model_name,
            "choices": choices,
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }


if __name__ == "__main__":
    serve_forever(FakeOpenAIServer(), "Stand-in OpenAI-compatible chat-completions server")
