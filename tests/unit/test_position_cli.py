"""``steadfast position-bias`` waiting for a job: a passing outage of the evaluator ends no wait."""

from __future__ import annotations

from typing import Any

import pytest

from steadfast.position import evaluated
from steadfast.shared.contracts.base import Problem
from steadfast.shared.contracts.position import (
    PositionBiasEvaluate,
    PositionBiasEvaluation,
    PositionBiasJob,
)
from steadfast.shared.http_client import ServiceCallError

REQUEST = PositionBiasEvaluate(model="m")
RESULT = PositionBiasEvaluation(trials=[], skipped=[], notes=["done"])


def job(status: str, result: PositionBiasEvaluation | None = None) -> PositionBiasJob:
    return PositionBiasJob(
        id="pb-1", status=status, order_count=4, created_at="now", result=result, error="boom"
    )  # type: ignore[arg-type]


def unavailable(status: int | None) -> ServiceCallError:
    problem = Problem(title="down", status=status or 503, detail="restarting")
    return ServiceCallError("evaluator", status, problem, "http://evaluator")


class Evaluator:
    def __init__(self, statuses: list[Any]) -> None:
        self.statuses = statuses
        self.asked = 0
        self.keys: list[str | None] = []

    async def create_position_job(
        self, request: PositionBiasEvaluate, idempotency_key: str | None = None
    ) -> PositionBiasJob:
        self.keys.append(idempotency_key)
        return job("queued")

    async def position_job(self, job_id: str) -> PositionBiasJob:
        self.asked += 1
        status = self.statuses.pop(0)
        if isinstance(status, Exception):
            raise status
        return status  # type: ignore[no-any-return]


async def test_an_outage_while_waiting_is_waited_out() -> None:
    statuses = [unavailable(503), unavailable(None), job("running"), job("succeeded", RESULT)]
    client = Evaluator(statuses)
    result = await evaluated(client, REQUEST, job=True, poll_s=0)  # type: ignore[arg-type]
    assert result == RESULT and client.asked == 4
    # submitted with a key of its own, so a retry along the way cannot make a second job
    assert len(client.keys) == 1 and client.keys[0]


async def test_a_refusal_or_a_failed_job_ends_the_wait() -> None:
    refusing, failed = Evaluator([unavailable(404)]), Evaluator([job("failed")])
    with pytest.raises(ServiceCallError):
        await evaluated(refusing, REQUEST, job=True, poll_s=0)  # type: ignore[arg-type]
    with pytest.raises(SystemExit, match="job pb-1 failed: boom"):
        await evaluated(failed, REQUEST, job=True, poll_s=0)  # type: ignore[arg-type]
