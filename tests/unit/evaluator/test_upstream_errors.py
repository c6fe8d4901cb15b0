"""How a failed call to another service is read: retryable, and whether it was out of reach."""

from __future__ import annotations

import pytest

from steadfast.services.evaluator.adapters.upstream import upstream_error
from steadfast.services.evaluator.domain.pipeline import with_retries
from steadfast.services.evaluator.errors import UpstreamError
from steadfast.shared.backoff import Backoff
from steadfast.shared.contracts.gateway import GatewayProblem
from steadfast.shared.http_client import ServiceCallError


@pytest.mark.parametrize(
    ("status", "outcome", "retry_after_s", "unreachable", "retryable"),
    [
        (None, None, None, True, True),  # refused, reset, timed out: nobody answered
        (503, None, None, True, True),  # a proxy or the service itself says it is unavailable
        # the gateway could not reach the model's server (it says when to come back): waited
        # for like an unreachable service, or a 20 s outage would fail answers for good
        (503, "unavailable", 5.0, True, True),
        # the model's backend refused for good (a wrong key): retried as a failing call
        (503, "unavailable", None, False, True),
        (502, "upstream_error", None, False, True),
        (400, None, None, False, False),
    ],
)
def test_a_service_out_of_reach_is_told_from_a_failing_model(
    status: int | None,
    outcome: str | None,
    retry_after_s: float | None,
    unreachable: bool,
    retryable: bool,
) -> None:
    problem = GatewayProblem(
        title="failed",
        status=status or 503,
        outcome=outcome,  # type: ignore[arg-type]
        retry_after_s=retry_after_s,
    )
    error = upstream_error(ServiceCallError("gateway", status, problem, "http://127.0.0.1:1"))
    assert (error.unreachable, error.retryable) == (unreachable, retryable)


class Flaky:
    """Fails with ``errors`` in turn, then answers "ok"."""

    def __init__(self, *errors: Exception) -> None:
        self.errors = list(errors)
        self.calls = 0

    async def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


POLICY = Backoff(attempts=3, base_delay_s=0.001)


async def test_a_retryable_failure_is_tried_again_until_the_call_succeeds() -> None:
    flaky = Flaky(UpstreamError("busy"), UpstreamError("busy"))
    assert await with_retries(flaky, POLICY) == "ok" and flaky.calls == 3


async def test_the_last_failure_says_after_how_many_attempts_and_is_final() -> None:
    flaky = Flaky(*(UpstreamError("gateway: timeout") for _ in range(5)))
    with pytest.raises(UpstreamError) as raised:
        await with_retries(flaky, POLICY)
    assert raised.value.reason == "gateway: timeout (after 3 attempts)"
    assert not raised.value.retryable and flaky.calls == 3


async def test_a_failure_not_worth_retrying_ends_at_once() -> None:
    flaky = Flaky(UpstreamError("bad request", retryable=False))
    with pytest.raises(UpstreamError, match=r"bad request \(after 1 attempts\)"):
        await with_retries(flaky, POLICY)
    crashing = Flaky(KeyError("bug"))
    with pytest.raises(KeyError):
        await with_retries(crashing, POLICY)
    assert (flaky.calls, crashing.calls) == (1, 1)
