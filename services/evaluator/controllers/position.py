"""``POST /v1/position-bias``: a thin handler over the positional-bias protocol."""

from __future__ import annotations

from litestar import Controller, post
from litestar.datastructures import State
from litestar.params import JSONBody

from services.evaluator.domain.pipeline import UpstreamError
from services.evaluator.domain.position import (
    evaluate_position_bias,
    order_count,
    validate,
    with_items,
)
from services.evaluator.settings import EvaluatorSettings
from shared.contracts.position import PositionBiasEvaluate, PositionBiasEvaluation
from shared.problems import ProblemError


class PositionBiasController(Controller):
    path = "/v1/position-bias"
    tags = ["position-bias"]  # noqa: RUF012

    @post(
        "",
        operation_id="evaluatePositionBias",
        summary="Ask each item with its options in every order: PF, PC and the mitigations",
        status_code=200,
    )
    async def evaluate(
        self, data: JSONBody[PositionBiasEvaluate], state: State
    ) -> PositionBiasEvaluation:
        settings: EvaluatorSettings = state.settings
        data = await with_items(data, state.datasets)
        validate(data)
        needed = order_count(data)
        if needed > settings.max_sync_variants:
            raise ProblemError(
                413,
                "Request too large",
                f"up to {needed} answers (option orders × conditions × models) exceed the "
                f"synchronous limit of {settings.max_sync_variants}; send fewer items (`limit`)",
                field="items",
            )
        try:
            return await evaluate_position_bias(data, state.upstream, state.retry)
        except UpstreamError as error:
            raise ProblemError(502, "Upstream failure", error.reason) from error
