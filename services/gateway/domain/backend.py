"""The one interface every model backend implements."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from steadfast.services.gateway.domain.routes import Route
from steadfast.shared.contracts.gateway import FinishReason, GenerateRequest, TokenAlternative


@dataclass(frozen=True)
class Completion:
    """What one successful upstream call produced."""

    text: str
    finish_reason: FinishReason
    input_tokens: int = 0
    output_tokens: int = 0
    #: alternatives of the first generated token, when asked for
    logprobs: list[TokenAlternative] | None = field(default=None)
    #: every sample's text when the request asked for more than one (``text`` is the first)
    samples: tuple[str, ...] | None = None


class Backend(Protocol):
    """A model backend bound to one route.

    ``complete`` makes exactly one upstream attempt within ``timeout_s`` and raises
    :class:`services.gateway.domain.errors.BackendError` with a typed outcome on failure; the
    gateway does the retrying, limiting and caching.
    """

    name: str
    supports_logprobs: bool
    #: False where a retry after a timeout would only take as long again (local inference on
    #: the same CPU, where a timed-out generation also takes up to a second to stop)
    retry_timeouts: bool

    def max_samples(self, route: Route) -> int:
        """The most samples one upstream request writes (``n``); beyond, the gateway sends a
        request a sample."""
        ...

    async def complete(self, request: GenerateRequest, timeout_s: float) -> Completion: ...

    async def close(self) -> None: ...


def nothing_written(samples: int) -> Completion:
    """The reply of a request whose time limit passed before anything was asked upstream."""
    return Completion(
        text="", finish_reason="time_limit", samples=("",) * samples if samples > 1 else None
    )


def finish_reason(value: object) -> FinishReason:
    """Normalise a backend's finish reason to the contract's vocabulary."""
    text = str(value or "").lower()
    if text in ("stop", "eos", "end_turn", "stop_sequence"):
        return "stop"
    if text in ("length", "max_tokens"):
        return "length"
    if text in (
        "content_filter",
        "safety",
        "blocklist",
        "prohibited_content",
        "spii",
        "recitation",
    ):
        return "content_filter"
    if text == "time_limit":
        return "time_limit"
    return "unknown"
