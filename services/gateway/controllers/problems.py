"""Gateway errors as problem-details: the typed outcome, attempts and Retry-After."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request, Response
from litestar.exceptions import HTTPException, ValidationException
from litestar.openapi import ResponseSpec
from litestar.types import ExceptionHandler

from steadfast.services.gateway.domain.errors import (
    GatewayError,
    GenerationFailed,
    UnknownRoute,
    UnsupportedParameter,
)
from steadfast.services.gateway.strategies import metrics
from steadfast.services.gateway.strategies.generate import InvalidQuestion
from steadfast.services.gateway.strategies.paraphrasers import ParaphraseOptionsRefused
from steadfast.shared.contracts.base import FieldError
from steadfast.shared.contracts.gateway import GatewayProblem
from steadfast.shared.problems import (
    handle_http,
    handle_unexpected,
    handle_validation,
    internal_error,
    is_unread_body,
    problem_response,
    problem_responses,
)

#: HTTP status of each typed outcome
OUTCOME_STATUS: dict[str, int] = {
    "rate_limited": 429,
    "timeout": 504,
    "upstream_error": 502,
    "bad_response": 502,
    "refused": 422,
    "unavailable": 503,
    "too_large": 413,
}


def _field_problem(title: str, status: int, field: str, detail: str) -> GatewayProblem:
    return GatewayProblem(
        title=title,
        status=status,
        detail=detail,
        errors=[FieldError(field=field, message=detail)],
    )


def problem_for(exc: GatewayError) -> GatewayProblem:
    if isinstance(exc, UnknownRoute):
        return GatewayProblem(
            title="Unknown model route",
            status=404,
            detail=str(exc),
            errors=[FieldError(field=exc.field, message=str(exc))],
        )
    if isinstance(exc, UnsupportedParameter):
        return _field_problem("Unsupported parameter", 422, exc.field, exc.detail)
    if isinstance(exc, InvalidQuestion):
        return _field_problem("Invalid request", 400, exc.field, exc.detail)
    if isinstance(exc, ParaphraseOptionsRefused):
        return _field_problem("Paraphrase options refused", exc.status, exc.field, exc.detail)
    if isinstance(exc, GenerationFailed):
        return GatewayProblem(
            title=f"Model call failed: {exc.outcome}",
            status=OUTCOME_STATUS[exc.outcome],
            detail=f"route {exc.route!r}: {exc.detail}",
            outcome=exc.outcome,
            attempts=exc.attempts,
            retry_after_s=exc.retry_after_s,
        )
    return GatewayProblem(title="Gateway error", status=500, detail=str(exc))


def unexpected_problem(exc: Exception) -> GatewayProblem:
    """:func:`~steadfast.shared.problems.internal_error` as the gateway's problem type."""
    return GatewayProblem(**msgspec.structs.asdict(internal_error(exc)))


def retry_after_headers(problem: GatewayProblem) -> dict[str, str] | None:
    """``Retry-After`` (whole seconds, at least 1) when the problem carries a wait."""
    if problem.retry_after_s is None:
        return None
    return {"Retry-After": str(max(1, round(problem.retry_after_s)))}


def gateway_error_response(_: Request[Any, Any, Any], exc: GatewayError) -> Response[Any]:
    problem = problem_for(exc)
    return problem_response(problem, headers=retry_after_headers(problem))


#: exception handlers for controllers that call ``ModelGateway``
GATEWAY_EXCEPTION_HANDLERS: dict[Any, Any] = {GatewayError: gateway_error_response}

#: OpenAPI documentation of the error answers of a generate call
GENERATE_ERROR_RESPONSES: dict[int, ResponseSpec] = problem_responses(
    {
        400: "Invalid request (a strategy model needs a user message: the question)",
        404: "Unknown model route, strategy route or generator route",
        413: "More than the model takes (the body or the context is too long): not retried",
        422: "Parameter unsupported by the route's backend, or the answer was refused",
        429: "Rate limited upstream after every retry (Retry-After set)",
        502: "Upstream error or malformed upstream answer",
        503: "Backend unavailable",
        504: "Timed out",
    },
    problem_type=GatewayProblem,
)


def counting_unread_rejections(handler: ExceptionHandler) -> ExceptionHandler:
    """``handler``, counting each request whose body could not be read as a request (so whose
    strategy is unknown) as a rejected proxy request; other errors are counted where raised."""

    def counted(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
        if is_unread_body(exc):
            metrics.record_rejected(metrics.UNKNOWN_STRATEGY)
        return handler(request, exc)

    return counted


#: exception handlers of the proxy's endpoints: their rejections all count, unread bodies too
STRATEGY_EXCEPTION_HANDLERS: dict[Any, Any] = GATEWAY_EXCEPTION_HANDLERS | {
    ValidationException: counting_unread_rejections(handle_validation),
    HTTPException: counting_unread_rejections(handle_http),
    RecursionError: counting_unread_rejections(handle_unexpected),
}
