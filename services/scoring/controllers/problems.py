"""Scoring's own failures as problem details, in one exception handler for the whole service
(its refusals, :mod:`steadfast.shared.errors`, are mapped by the handlers every service has)."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response

from steadfast.services.scoring.domain.errors import DependencyFailed, ScoringError
from steadfast.shared.contracts.base import FieldError, Problem
from steadfast.shared.problems import problem_response


def status_of(exc: ScoringError) -> int:
    """A dependency down for now is a 503, one that answered with an error a 502."""
    if isinstance(exc, DependencyFailed):
        return 503 if exc.unavailable else 502
    return 500


def problem_for(exc: ScoringError) -> Problem:
    """The problem details of ``exc``, naming the request's field it is about when it has one."""
    errors = [FieldError(field=exc.field, message=exc.detail)] if exc.field else None
    return Problem(title=exc.title, status=status_of(exc), detail=exc.detail, errors=errors)


def scoring_error_response(_: Request[Any, Any, Any], exc: ScoringError) -> Response[Any]:
    return problem_response(problem_for(exc))


#: the scoring app's handlers of its own failures (the shared ones handle the rest)
SCORING_EXCEPTION_HANDLERS: dict[Any, Any] = {ScoringError: scoring_error_response}
