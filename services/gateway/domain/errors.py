"""Typed failures of the gateway. None of them knows about HTTP; the controllers map them."""

from __future__ import annotations

from steadfast.shared.contracts.gateway import Outcome
from steadfast.shared.redaction import redact

#: outcomes worth another attempt (5xx upstream errors too, see ``BackendError.retryable``)
RETRYABLE_OUTCOMES: frozenset[str] = frozenset({"rate_limited", "timeout"})
#: the Retry-After of a model server that could not be reached (restarting, a network blip):
#: callers then know the failure is for now, not for good (a wrong key, an unknown model)
UNREACHABLE_RETRY_AFTER_S = 5.0


class GatewayError(Exception):
    """Base of every error ``ModelGateway.generate`` raises."""

    #: the request was at fault (a 4xx other than 429), not the model behind it
    caller_error = False


class UnknownRoute(GatewayError):
    """No route of that name; ``field`` is the request's field that named it."""

    caller_error = True

    def __init__(self, name: str, known: list[str], field: str = "model") -> None:
        super().__init__(f"unknown model route {name!r}; known routes: {', '.join(known)}")
        self.name = name
        self.field = field


class UnsupportedParameter(GatewayError):
    """The route's backend cannot honour a parameter (e.g. ``top_logprobs`` on Gemini)."""

    caller_error = True

    def __init__(self, field: str, detail: str) -> None:
        super().__init__(detail)
        self.field = field
        self.detail = detail


class BackendError(Exception):
    """One failed attempt, as a backend adapter reports it."""

    def __init__(
        self,
        outcome: Outcome,
        detail: str,
        *,
        status: int | None = None,
        retry_after_s: float | None = None,
        retryable: bool | None = None,
    ) -> None:
        # an upstream's error body may echo the request's headers, an exception a URL with its
        # password: neither reaches callers, logs or stored errors
        detail = redact(detail)
        super().__init__(f"{outcome}: {detail}")
        self.outcome: Outcome = outcome
        self.detail = detail
        self.status = status
        self.retry_after_s = retry_after_s
        self._retryable = retryable

    @property
    def retryable(self) -> bool:
        if self._retryable is not None:
            return self._retryable
        if self.outcome in RETRYABLE_OUTCOMES:
            return True
        return self.outcome == "upstream_error" and (self.status is None or self.status >= 500)


class GenerationFailed(GatewayError):
    """The final failure of one generate request, after every attempt it was allowed."""

    def __init__(
        self,
        outcome: Outcome,
        detail: str,
        *,
        route: str,
        attempts: int,
        retry_after_s: float | None = None,
    ) -> None:
        super().__init__(f"{route}: {outcome} after {attempts} attempt(s): {detail}")
        self.outcome: Outcome = outcome
        #: a request the model cannot take is the caller's to shorten
        self.caller_error = outcome == "too_large"
        self.detail = detail
        self.route = route
        self.attempts = attempts
        self.retry_after_s = retry_after_s

    @classmethod
    def from_backend(cls, error: BackendError, route: str, attempts: int) -> GenerationFailed:
        retry_after_s = error.retry_after_s
        if retry_after_s is None and error.outcome == "unavailable" and error.retryable:
            retry_after_s = UNREACHABLE_RETRY_AFTER_S
        return cls(
            error.outcome,
            error.detail,
            route=route,
            attempts=attempts,
            retry_after_s=retry_after_s,
        )
