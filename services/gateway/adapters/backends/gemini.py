"""Backend for Google's Gemini API through the ``google-genai`` SDK (async client).

``base_url`` of the route replaces Google's endpoint (a proxy, or a stand-in server in tests).
The SDK's own retries are switched off: the gateway retries.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

import aiohttp

from steadfast.services.gateway.adapters.backends import BackendContext
from steadfast.services.gateway.adapters.backends.http_errors import (
    error_for_status,
    error_for_transport,
    finite_number,
)
from steadfast.services.gateway.domain.backend import Completion, finish_reason
from steadfast.services.gateway.domain.errors import BackendError
from steadfast.services.gateway.domain.routes import Route
from steadfast.shared.contracts.gateway import GenerateRequest


class GeminiBackend:
    """Google Gemini routes, called through the ``google-genai`` SDK (no logprobs)."""

    name = "gemini"
    supports_logprobs = False
    retry_timeouts = True

    def __init__(self, route: Route, _: BackendContext | None = None) -> None:
        self.route = route
        self._client: Any = None

    def _sdk_client(self) -> Any:
        if self._client is None:
            genai, types = _sdk("genai"), _sdk("genai.types")

            options = types.HttpOptions(
                base_url=self.route.base_url,
                timeout=int(self.route.timeout_s * 1000),
                retry_options=types.HttpRetryOptions(attempts=1),
            )
            try:
                self._client = genai.Client(api_key=self._api_key(), http_options=options)
            except ValueError as exc:  # no key anywhere
                raise BackendError("unavailable", f"gemini client: {exc}") from exc
        return self._client

    def _api_key(self) -> str | None:
        if not self.route.api_key_env:
            return None  # the SDK reads GEMINI_API_KEY / GOOGLE_API_KEY itself
        key = os.environ.get(self.route.api_key_env)
        if not key:
            raise BackendError(
                "unavailable",
                f"environment variable {self.route.api_key_env} (api_key_env of route "
                f"{self.route.name!r}) is not set",
            )
        return key

    def max_samples(self, route: Route) -> int:
        return 1  # no n in its API: the gateway sends a request a sample

    async def complete(self, request: GenerateRequest, timeout_s: float) -> Completion:
        errors = _sdk("genai.errors")
        client = self._sdk_client()
        contents, config = _gemini_request(request)
        try:
            response = await client.aio.models.generate_content(
                model=self.route.model, contents=contents, config=config
            )
        except errors.APIError as exc:
            raise _api_error(exc) from exc
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            raise error_for_transport(exc) from exc
        except Exception as exc:
            raise _other_error(exc) from exc
        return _completion(response)

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aio.aclose()
            self._client = None


def _gemini_request(request: GenerateRequest) -> tuple[list[Any], Any]:
    types = _sdk("genai.types")
    system = [m.content for m in request.messages if m.role == "system"]
    contents = [
        types.Content(
            role="model" if m.role == "assistant" else "user", parts=[types.Part(text=m.content)]
        )
        for m in request.messages
        if m.role != "system"
    ]
    config = types.GenerateContentConfig(
        system_instruction="\n\n".join(system) or None,
        temperature=request.temperature,
        max_output_tokens=request.max_tokens,
        seed=request.seed,
        stop_sequences=request.stop,
    )
    return contents, config


def _sdk(module: str) -> Any:
    """A module of google-genai, imported on first use; its absence makes the route unavailable."""
    try:
        return importlib.import_module(f"google.{module}")
    except ImportError as exc:
        raise BackendError("unavailable", f"google-genai is not installed: {exc}") from exc


def _api_error(exc: Any) -> BackendError:
    headers = getattr(getattr(exc, "response", None), "headers", None) or {}
    error = error_for_status(int(exc.code or 500), f"{exc.status}: {exc.message}", headers)
    if error.retry_after_s is None:
        error.retry_after_s = _retry_delay_s(exc.details)
    return error


def _retry_delay_s(details: Any) -> float | None:
    """Gemini's wait for a 429 is in the body (``google.rpc.RetryInfo``, ``"34s"``), not in a
    Retry-After header."""
    body = details.get("error", details) if isinstance(details, dict) else {}
    for detail in body.get("details") or []:
        delay = detail.get("retryDelay") if isinstance(detail, dict) else None
        if isinstance(delay, str) and delay.endswith("s"):
            seconds = finite_number(delay[:-1])
            return max(0.0, seconds) if seconds is not None else None
    return None


def _other_error(exc: Exception) -> BackendError:
    """httpx (if the SDK uses it) and SDK parsing errors, told apart by name."""
    kind = type(exc).__name__
    if "Timeout" in kind:
        return BackendError("timeout", f"{kind}: {exc}")
    if "Connect" in kind:
        return BackendError("unavailable", f"{kind}: {exc}", retryable=True)
    return BackendError("bad_response", f"{kind}: {exc}")


def _completion(response: Any) -> Completion:
    feedback = getattr(response, "prompt_feedback", None)
    if feedback is not None and feedback.block_reason:
        raise BackendError("refused", f"prompt blocked: {feedback.block_reason}")
    if not response.candidates:
        raise BackendError("bad_response", "the response has no candidates")
    candidate = response.candidates[0]
    reason = finish_reason(getattr(candidate.finish_reason, "name", candidate.finish_reason))
    parts = candidate.content.parts if candidate.content and candidate.content.parts else []
    text = "".join(part.text for part in parts if part.text and not part.thought)
    usage = response.usage_metadata
    return Completion(
        text=text,
        finish_reason=reason,
        input_tokens=(usage.prompt_token_count or 0) if usage else 0,
        # thinking models bill their thoughts as output tokens, counted apart from the answer
        output_tokens=(usage.candidates_token_count or 0) + (usage.thoughts_token_count or 0)
        if usage
        else 0,
    )
