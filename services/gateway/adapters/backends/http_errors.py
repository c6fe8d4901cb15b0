"""Mapping of HTTP answers and transport errors to typed backend failures."""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime

import aiohttp

from steadfast.services.gateway.domain.errors import BackendError

_REFUSAL_MARKERS = ("content_filter", "content_policy", "safety")
#: how providers say a request is longer than the model takes (OpenAI, vLLM, llama.cpp)
TOO_LONG_MARKERS = (
    "context_length_exceeded",
    "maximum context length",
    "exceeds the context",
    "exceeds the available context",
)


def retry_after_s(headers: Mapping[str, str]) -> float | None:
    """Seconds from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date); a value
    that is no finite number ("inf", "nan") is no advice."""
    milliseconds = finite_number(headers.get("retry-after-ms"))
    if milliseconds is not None:
        return max(0.0, milliseconds / 1000)
    value = headers.get("Retry-After") or headers.get("retry-after")
    if not value:
        return None
    seconds = _number(value)
    if seconds is not None:
        return max(0.0, seconds) if math.isfinite(seconds) else None
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def finite_number(text: str | None) -> float | None:
    """The number ``text`` spells, unless it is none or not finite ("inf", "nan")."""
    value = _number(text)
    return value if value is not None and math.isfinite(value) else None


def _number(text: str | None) -> float | None:
    try:
        return float(text) if text else None
    except ValueError:
        return None


def error_for_status(status: int, body: str, headers: Mapping[str, str]) -> BackendError:
    detail = f"HTTP {status}: {body[:300]}"
    if status == 429:
        return BackendError(
            "rate_limited", detail, status=status, retry_after_s=retry_after_s(headers)
        )
    if status == 408:
        return BackendError("timeout", detail, status=status)
    too_long = status == 400 and any(marker in body.lower() for marker in TOO_LONG_MARKERS)
    if status == 413 or too_long:
        return BackendError("too_large", detail, status=status)
    if any(marker in body.lower() for marker in _REFUSAL_MARKERS) and status < 500:
        return BackendError("refused", detail, status=status)
    if status in (401, 403, 404):
        return BackendError("unavailable", detail, status=status)
    return BackendError(
        "upstream_error", detail, status=status, retry_after_s=retry_after_s(headers)
    )


def error_for_transport(exc: Exception, *, retry_timeouts: bool = True) -> BackendError:
    if isinstance(exc, TimeoutError | aiohttp.ServerTimeoutError):
        return BackendError("timeout", str(exc) or "timed out", retryable=retry_timeouts)
    if isinstance(exc, aiohttp.InvalidURL | aiohttp.ClientConnectorCertificateError):
        # the route's address or the server's certificate: asking again cannot help
        return BackendError("unavailable", f"{type(exc).__name__}: {exc}", retryable=False)
    if isinstance(exc, aiohttp.ClientConnectorError):
        # a server restarting (or a proxy before it) refuses for a moment: worth a retry
        return BackendError("unavailable", f"cannot connect: {exc}", retryable=True)
    # dropped connections and the like: worth a retry, like a 5xx
    return BackendError("upstream_error", f"{type(exc).__name__}: {exc}")
