"""``/v1/generate`` with a ``"<strategy>:<route>"`` model: the request's messages are the question
(its last user message; the others are context), the strategy answers it with its default options
and the request's ``task``, and its final reply comes back as an ordinary
:class:`GenerateResponse` — so anything that calls the gateway (the evaluator, say) can use a
strategy like any model route."""

from __future__ import annotations

from dataclasses import dataclass

from steadfast.services.gateway.domain.errors import (
    GatewayError,
    UnknownRoute,
    UnsupportedParameter,
)
from steadfast.services.gateway.domain.gateway import ModelGateway
from steadfast.services.gateway.strategies import metrics
from steadfast.services.gateway.strategies.question import AnswerSettings, Question
from steadfast.services.gateway.strategies.service import Run, SelfParaphraseService
from steadfast.shared.contracts.gateway import GenerateRequest, GenerateResponse
from steadfast.shared.contracts.proxy import StrategyOptions, split_model
from steadfast.shared.metering import MeteredCaller


class InvalidQuestion(GatewayError):
    """The request has no question a strategy could answer (no user message)."""

    caller_error = True

    def __init__(self, field: str, detail: str) -> None:
        super().__init__(detail)
        self.field = field
        self.detail = detail


@dataclass
class StrategyGateway:
    """``generate`` of the gateway, for plain routes and ``"<strategy>:<route>"`` names alike."""

    gateway: ModelGateway
    service: SelfParaphraseService

    async def generate(
        self, request: GenerateRequest, meter: MeteredCaller | None = None
    ) -> GenerateResponse:
        """``meter``: the caller's, counting every model call made for the request (a
        strategy's many, and those of a run that fails) for its key's usage."""
        strategy, route_name = split_model(request.model)
        if strategy is None:
            return await (meter or self.gateway).generate(request)
        try:
            question = self._question(request, route_name)
        except GatewayError:
            metrics.record_rejected(strategy)
            raise
        run = await self.service.run(
            strategy,
            question,
            answer_settings(request, route_name),
            StrategyOptions(task=request.task),
            meter,
        )
        return strategy_response(run, request.model, self.gateway, route_name)

    def _question(self, request: GenerateRequest, route_name: str) -> Question:
        """The question a strategy is to answer, once the request is one it can answer."""
        if route_name not in self.gateway.routes:
            raise UnknownRoute(request.model, sorted(self.gateway.routes))
        if request.top_logprobs is not None:
            raise UnsupportedParameter(
                "top_logprobs", f"strategy model {request.model!r} cannot return logprobs"
            )
        if request.n > 1:
            raise UnsupportedParameter(
                "n", f"strategy model {request.model!r} writes one answer, not {request.n} samples"
            )
        if request.time_limit_s is not None:
            raise UnsupportedParameter(
                "time_limit_s",
                f"strategy model {request.model!r} answers after all its calls, not at a limit",
            )
        try:
            return Question.from_messages(request.messages)
        except ValueError as exc:
            raise InvalidQuestion("messages", str(exc)) from exc


def answer_settings(request: GenerateRequest, route: str) -> AnswerSettings:
    """The decoding of the strategy's calls, as the chat-completions proxy takes it."""
    return AnswerSettings(
        route=route,
        temperature=request.temperature or 0.0,
        max_tokens=request.max_tokens,
        stop=request.stop,
        seed=request.seed,
        cache=request.cache,
        sample_index=request.sample_index,
    )


def strategy_response(
    run: Run, model: str, gateway: ModelGateway, route_name: str
) -> GenerateResponse:
    """The strategy's final reply (what the proxy shows as the message), usage summed over every
    call, ``cached`` only when no call went upstream."""
    route = gateway.route(route_name)
    return GenerateResponse(
        text=run.result.content,
        model=route.model,
        backend=route.backend,
        route=model,
        finish_reason=run.result.finish_reason,
        usage=run.meter.usage,
        latency_s=round(run.latency_s, 6),
        cached=run.meter.upstream_calls == 0,
        attempts=run.meter.upstream_calls,
    )
