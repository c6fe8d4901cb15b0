"""Stand-in Gemini REST server (``POST /{version}/models/{model}:generateContent``).

Driven through the real ``google-genai`` client::

    with FakeGeminiServer(responder=lambda body: "Paris") as fake:
        client = genai.Client(api_key="k", http_options=types.HttpOptions(base_url=fake.url))

``responder(body) -> str`` gets the REST body (``contents``, ``systemInstruction``,
``generationConfig``); the default echoes the last user text. Faults as in
:mod:`tests.fakes.stand_in`; ``Fault.refuse()`` blocks the prompt for safety.

As a process: ``python -m tests.fakes.gemini_server --port N [--latency-ms 50]``.
"""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from tests.fakes.stand_in import Fault, StandInServer, count_words, serve_forever

__all__ = ["FakeGeminiServer", "Fault"]

_STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


def last_user_text(body: dict[str, Any]) -> str:
    for content in reversed(body.get("contents", [])):
        if content.get("role", "user") == "user":
            return "".join(part.get("text", "") for part in content.get("parts", []))
    return ""


def echo(body: dict[str, Any]) -> str:
    return f"echo: {last_user_text(body)}"


class FakeGeminiServer(StandInServer):
    #: a thinking model's thoughts, sent as a thought part before the answer and counted in
    #: ``thoughtsTokenCount`` (None: not a thinking model)
    thoughts: str | None = None

    @property
    def url(self) -> str:
        """The ``base_url`` for ``google.genai.types.HttpOptions``."""
        return self.root

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post("/{version}/models/{model_action}", self.generate_content)

    def fault_response(self, fault: Fault) -> web.Response:
        headers = {}
        if fault.retry_after_s is not None:
            headers["Retry-After"] = f"{fault.retry_after_s:g}"
        status_name = _STATUS_NAMES.get(fault.status, "UNKNOWN")
        body = fault.body or json.dumps(
            {"error": {"code": fault.status, "message": "injected", "status": status_name}}
        )
        return web.Response(
            status=fault.status, text=body, content_type="application/json", headers=headers
        )

    async def generate_content(self, request: web.Request) -> web.StreamResponse:
        model, _, action = request.match_info["model_action"].partition(":")
        if action != "generateContent":
            return web.json_response({"error": {"code": 404, "message": action}}, status=404)
        body = await request.json()
        body["_model"] = model
        body["_api_key"] = request.headers.get("x-goog-api-key", "")
        fault = await self.begin(body)
        if fault is not None and fault.kind == "hang":
            return self.fault_response(Fault.error(504))
        if fault is not None and fault.kind == "malformed":
            return web.Response(text="<html>not json", content_type="application/json")
        if fault is not None and fault.kind == "status":
            return self.fault_response(fault)
        if fault is not None and fault.kind == "refuse":
            return web.json_response(
                {"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": {}}
            )
        return web.json_response(self.answer(body, str(self.reply_for(body, echo))))

    def answer(self, body: dict[str, Any], text: str) -> dict[str, Any]:
        prompt = " ".join(
            part.get("text", "")
            for content in body.get("contents", [])
            for part in content.get("parts", [])
        )
        limit = body.get("generationConfig", {}).get("maxOutputTokens")
        words = text.split(" ")
        truncated = limit is not None and len(words) > limit
        text = " ".join(words[:limit]) if truncated else text
        parts: list[dict[str, Any]] = [{"text": text}]
        usage = {
            "promptTokenCount": count_words(prompt),
            "candidatesTokenCount": count_words(text),
            "totalTokenCount": count_words(prompt) + count_words(text),
        }
        if self.thoughts is not None:
            parts.insert(0, {"text": self.thoughts, "thought": True})
            usage["thoughtsTokenCount"] = count_words(self.thoughts)
            usage["totalTokenCount"] += count_words(self.thoughts)
        return {
            "candidates": [
                {
                    "content": {"role": "model", "parts": parts},
                    "finishReason": "MAX_TOKENS" if truncated else "STOP",
                    "index": 0,
                }
            ],
            "usageMetadata": usage,
            "modelVersion": body["_model"],
        }


if __name__ == "__main__":
    serve_forever(FakeGeminiServer(), "Stand-in Gemini REST server")
