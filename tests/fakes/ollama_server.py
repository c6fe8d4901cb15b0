"""Stand-in Ollama server (``POST /api/chat``, non-streaming; ``GET /api/tags``).

``responder(body) -> str``; the default echoes the last user message. Faults as in
:mod:`tests.fakes.stand_in`. ``fake.url`` is the route's ``base_url``.

As a process: ``python -m tests.fakes.ollama_server --port N [--latency-ms 50]``.
"""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from tests.fakes.stand_in import Fault, StandInServer, count_words, last_user_text, serve_forever

__all__ = ["FakeOllamaServer", "Fault"]


def echo(body: dict[str, Any]) -> str:
    return f"echo: {last_user_text(body.get('messages', []))}"


class FakeOllamaServer(StandInServer):
    @property
    def url(self) -> str:
        return self.root

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post("/api/chat", self.chat)
        app.router.add_get("/api/tags", self.tags)

    def fault_response(self, fault: Fault) -> web.Response:
        headers = {}
        if fault.retry_after_s is not None:
            headers["Retry-After"] = f"{fault.retry_after_s:g}"
        body = fault.body or json.dumps({"error": f"injected {fault.status}"})
        return web.Response(
            status=fault.status, text=body, content_type="application/json", headers=headers
        )

    async def tags(self, _: web.Request) -> web.Response:
        return web.json_response({"models": [{"name": "fake:latest"}]})

    async def chat(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        fault = await self.begin(body)
        if fault is not None and fault.kind == "hang":
            return self.fault_response(Fault.error(504))
        if fault is not None and fault.kind == "malformed":
            return web.Response(text='{"model": "x", "message": ', content_type="application/json")
        if fault is not None and fault.kind == "status":
            return self.fault_response(fault)
        text = str(self.reply_for(body, echo))
        limit = body.get("options", {}).get("num_predict")
        words = text.split(" ")
        truncated = limit is not None and len(words) > limit
        text = " ".join(words[:limit]) if truncated else text
        prompt = " ".join(str(m.get("content", "")) for m in body.get("messages", []))
        return web.json_response(
            {
                "model": body.get("model"),
                "created_at": "2026-01-01T00:00:00Z",
                "message": {"role": "assistant", "content": text},
                "done": True,
                "done_reason": "length" if truncated else "stop",
                "prompt_eval_count": count_words(prompt),
                "eval_count": count_words(text),
            }
        )


if __name__ == "__main__":
    serve_forever(FakeOllamaServer(), "Stand-in Ollama server")
