"""How a failed call to another service is read: retryable, and whether it was out of reach."""

from __future__ import annotations

import pytest

from services.evaluator.adapters.upstream import upstream_error
from shared.contracts.base import Problem
from shared.http_client import ServiceCallError


@pytest.mark.parametrize(
    ("status", "outcome", "unreachable", "retryable"),
    [
        (None, None, True, True),  # refused, reset, timed out: nobody answered
        (503, None, True, True),  # a proxy or the service itself says it is unavailable
        (503, "unavailable", False, True),  # the gateway answered: a model's backend is down
        (502, "upstream_error", False, True),
        (400, None, False, False),
    ],
)
def test_a_service_out_of_reach_is_told_from_a_failing_model(
    status: int | None, outcome: str | None, unreachable: bool, retryable: bool
) -> None:
    problem = Problem(title="failed", status=status or 503, outcome=outcome)  # type: ignore[arg-type]
    error = upstream_error(ServiceCallError("gateway", status, problem, "http://127.0.0.1:1"))
    assert (error.unreachable, error.retryable) == (unreachable, retryable)
