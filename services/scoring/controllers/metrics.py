"""``POST /v1/metrics/consistency`` and ``POST /v1/metrics/position-bias``."""

from __future__ import annotations

import asyncio

from litestar import Controller, post
from litestar.params import JSONBody

from steadfast.services.scoring.domain import consistency, position
from steadfast.services.scoring.metrics import METRIC_RECORDS
from steadfast.shared.contracts.scoring import (
    ConsistencyRequest,
    ConsistencyResponse,
    PositionBiasRequest,
    PositionBiasResponse,
)
from steadfast.shared.problems import problem_responses


def _consistency(data: ConsistencyRequest) -> ConsistencyResponse:
    columns = consistency.columns_from_records(data.records)
    return consistency.consistency_metrics(columns, data.options)


def _position(data: PositionBiasRequest) -> PositionBiasResponse:
    columns = position.columns_from_records(data.records)
    return position.position_bias_metrics(columns, data.options)


class MetricsController(Controller):
    """``/v1/metrics``: consistency and positional-bias metrics with bootstrap intervals."""

    path = "/v1/metrics"
    tags = ["metrics"]  # noqa: RUF012

    @post(
        "/consistency",
        operation_id="computeConsistencyMetrics",
        summary=(
            "Paraphrase-consistency metrics per model with bootstrap intervals"
            " (docs/method.md §1.4)"
        ),
        status_code=200,
        responses=problem_responses({422: "A record repeats another's (item_id, model, variant)"}),
    )
    async def consistency_metrics(self, data: JSONBody[ConsistencyRequest]) -> ConsistencyResponse:
        response = await asyncio.to_thread(_consistency, data)
        METRIC_RECORDS.labels("consistency").inc(len(data.records))
        return response

    @post(
        "/position-bias",
        operation_id="computePositionBiasMetrics",
        summary="Positional-bias metrics per model and condition (docs/method.md §2.2)",
        status_code=200,
        responses=problem_responses({422: "A letter beyond its item's options"}),
    )
    async def position_bias_metrics(
        self, data: JSONBody[PositionBiasRequest]
    ) -> PositionBiasResponse:
        response = await asyncio.to_thread(_position, data)
        METRIC_RECORDS.labels("position_bias").inc(len(data.records))
        return response
