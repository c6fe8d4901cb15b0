"""``POST /v1/generate``, ``POST /v1/generate/batch`` and ``GET /v1/models``."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from litestar import Controller, Request, get, post
from litestar.di import NamedDependency
from litestar.params import JSONBody

from steadfast.services.gateway.controllers.callers import (
    CALLER_FORBIDDEN,
    CALLER_RATE_LIMITED,
    CALLER_SECURITY,
    CALLER_UNAUTHORIZED,
    FOR_SERVICES,
    charge_caller,
    require_caller,
)
from steadfast.services.gateway.controllers.problems import (
    GATEWAY_EXCEPTION_HANDLERS,
    GENERATE_ERROR_RESPONSES,
    problem_for,
    unexpected_problem,
)
from steadfast.services.gateway.domain.errors import GatewayError
from steadfast.services.gateway.domain.gateway import ModelGateway
from steadfast.services.gateway.domain.routes import Route
from steadfast.services.gateway.strategies.generate import StrategyGateway
from steadfast.shared.contracts.gateway import (
    GatewayProblem,
    GenerateBatchItem,
    GenerateBatchRequest,
    GenerateBatchResponse,
    GenerateRequest,
    GenerateResponse,
    ModelList,
    ModelRoute,
    OpenAIModel,
)
from steadfast.shared.contracts.proxy import STRATEGY_NAMES
from steadfast.shared.metering import MeteredCaller
from steadfast.shared.problems import problem_responses
from steadfast.shared.redaction import public_url
from steadfast.shared.request_context import current_request_id

logger = logging.getLogger(__name__)

#: how ``model`` names what answers
MODEL_NAMES = (
    "`model` is a route of `GET /v1/models`, or `<strategy>:<route>` (single-prompt, "
    "canonicalize, paraphrase-vote): the last user message is then the question (earlier "
    "messages are context), the strategy answers it with its default options (k=5) and the "
    "request's `task` (inferred from the replies when absent); `text` is its final reply, "
    "`route` the full name, `usage` summed over every model call, `cached` true only when no "
    "call went upstream. A strategy model cannot return `top_logprobs`."
)


class GenerateController(Controller):
    """``/v1/generate`` (one and batch) and ``/v1/models``: the gateway's own API for the
    other services."""

    path = "/v1"
    tags = ["models"]  # noqa: RUF012
    exception_handlers = GATEWAY_EXCEPTION_HANDLERS
    guards = [require_caller]  # noqa: RUF012

    @post(
        "/generate",
        operation_id="generateCompletion",
        opt={FOR_SERVICES: True},
        security=CALLER_SECURITY,
        summary="One chat completion by a named route (cached, limited, retried)",
        description=MODEL_NAMES,
        status_code=200,
        responses={
            **GENERATE_ERROR_RESPONSES,
            **problem_responses({401: CALLER_UNAUTHORIZED, 403: CALLER_FORBIDDEN}),
            **problem_responses({429: CALLER_RATE_LIMITED}, problem_type=GatewayProblem),
        },
    )
    async def generate(
        self,
        request: Request[Any, Any, Any],
        data: JSONBody[GenerateRequest],
        strategy_gateway: NamedDependency[StrategyGateway],
    ) -> GenerateResponse:
        meter = MeteredCaller(strategy_gateway.gateway)
        try:
            return await strategy_gateway.generate(data, meter)
        finally:  # a request that failed made calls too
            charge_caller(request, meter.calls, meter.usage)

    @post(
        "/generate/batch",
        operation_id="generateCompletionBatch",
        opt={FOR_SERVICES: True},
        security=CALLER_SECURITY,
        responses=problem_responses(
            {401: CALLER_UNAUTHORIZED, 403: CALLER_FORBIDDEN, 429: CALLER_RATE_LIMITED}
        ),
        summary="Many generate requests, answered in order, each with its result or its error",
        description=MODEL_NAMES,
        status_code=200,
    )
    async def generate_batch(
        self,
        request: Request[Any, Any, Any],
        data: JSONBody[GenerateBatchRequest],
        strategy_gateway: NamedDependency[StrategyGateway],
    ) -> GenerateBatchResponse:
        meter = MeteredCaller(strategy_gateway.gateway)
        try:
            items = await asyncio.gather(
                *(batch_item(strategy_gateway, item, meter) for item in data.requests)
            )
        finally:
            charge_caller(request, meter.calls, meter.usage)
        return GenerateBatchResponse(results=list(items))

    @get(
        "/models",
        operation_id="listModels",
        summary="The model routes (never their keys)",
        security=CALLER_SECURITY,
        responses=problem_responses(
            {401: CALLER_UNAUTHORIZED, 403: CALLER_FORBIDDEN, 429: CALLER_RATE_LIMITED}
        ),
    )
    async def list_models(self, model_gateway: NamedDependency[ModelGateway]) -> ModelList:
        routes = list(model_gateway.routes.values())
        names = [
            *(route.name for route in routes),
            *(f"{strategy}:{route.name}" for route in routes for strategy in STRATEGY_NAMES),
        ]
        return ModelList(
            models=[_listed(model_gateway, route) for route in routes],
            data=[OpenAIModel(id=name) for name in names],
        )


async def batch_item(
    gateway: StrategyGateway, request: GenerateRequest, meter: MeteredCaller
) -> GenerateBatchItem:
    """One request's result or its error, as it would have been alone: one item's failure,
    even an unexpected one, leaves the others' results standing."""
    try:
        return GenerateBatchItem(result=await gateway.generate(request, meter))
    except GatewayError as exc:
        problem = problem_for(exc)
    except Exception as exc:
        logger.exception("batch item for model %r failed unexpectedly", request.model)
        problem = unexpected_problem(exc)
    problem.request_id = current_request_id.get()
    return GenerateBatchItem(error=problem)


def _listed(gateway: ModelGateway, route: Route) -> ModelRoute:
    return ModelRoute(
        name=route.name,
        backend=route.backend,
        model=route.model,
        base_url=public_url(route.resolved_base_url()),
        max_concurrency=route.max_concurrency,
        requests_per_minute=route.requests_per_minute,
        timeout_s=route.timeout_s,
        max_retries=route.max_retries,
        supports_logprobs=gateway.supports_logprobs(route),
    )
