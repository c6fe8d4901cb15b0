"""Runs a strategy for one request: picks it by name, meters the calls, records the metrics."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass, field

from steadfast.services.gateway.domain.errors import GatewayError, GenerationFailed, UnknownRoute
from steadfast.services.gateway.strategies import metrics
from steadfast.services.gateway.strategies.canonicalize import canonicalize
from steadfast.services.gateway.strategies.grouping import AnswerGrouper
from steadfast.services.gateway.strategies.paraphrase_vote import paraphrase_vote
from steadfast.services.gateway.strategies.paraphrasers import (
    ModelParaphraser,
    ParaphraseClient,
    Paraphraser,
    PerturbParaphraser,
)
from steadfast.services.gateway.strategies.question import AnswerSettings, Question
from steadfast.services.gateway.strategies.result import StrategyResult
from steadfast.services.gateway.strategies.single_prompt import single_prompt
from steadfast.shared.contracts.gateway import ChatMessage, GenerateResponse
from steadfast.shared.contracts.proxy import StrategyName, StrategyOptions
from steadfast.shared.metering import MeteredCaller, ModelCaller

PASSTHROUGH = "passthrough"


@dataclass
class Run:
    """A strategy's result, the metered calls it made, and its latency."""

    result: StrategyResult
    meter: MeteredCaller
    latency_s: float


@dataclass
class Passthrough:
    """A plain route's completion, passed through unchanged, and its latency."""

    response: GenerateResponse
    latency_s: float


#: the options that name a gateway route
ROUTE_OPTIONS = ("generator", "judge_model")


@dataclass
class SelfParaphraseService:
    """Runs a self-paraphrase strategy, or passes a plain route through, metering its model
    calls: behind ``/v1/self-paraphrase`` and the chat-completions proxy."""

    gateway: ModelCaller
    #: the perturb service, for paraphrases by a ``generator`` route or verified ones
    perturb: Callable[[], ParaphraseClient] | None = None
    #: the gateway's route names, to refuse an unknown ``generator`` or ``judge_model`` before
    #: any call (unchecked when absent)
    routes: Collection[str] | None = None
    #: groups a vote's answers (its verdict cache serves every request)
    grouper: AnswerGrouper = field(default_factory=AnswerGrouper)

    async def run(
        self,
        strategy: StrategyName,
        question: Question,
        settings: AnswerSettings,
        options: StrategyOptions,
        meter: MeteredCaller | None = None,
    ) -> Run:
        """``meter``: the caller's, to count the calls of a run that fails too."""
        meter = meter or MeteredCaller(self.gateway)
        started = time.perf_counter()
        try:
            self._require_routes(settings, options)
            result = await self._dispatch(strategy, meter, question, settings, options)
        except GatewayError as error:
            _record_failure(strategy, error, meter.upstream_calls)
            raise
        degraded = bool(result.notes) or result.failed_variants > 0
        outcome = "degraded" if degraded else "ok"
        metrics.record(strategy, outcome, meter.upstream_calls, result.agreement)
        return Run(result=result, meter=meter, latency_s=time.perf_counter() - started)

    async def passthrough(
        self, settings: AnswerSettings, messages: list[ChatMessage]
    ) -> Passthrough:
        """A plain route: one call, unchanged."""
        started = time.perf_counter()
        try:
            response = await self.gateway.generate(settings.request(messages))
        except GenerationFailed as failure:
            if failure.outcome == "refused":  # the model's answer (a content filter), not a fault
                metrics.record(PASSTHROUGH, "refused", 1)
            else:
                _record_failure(PASSTHROUGH, failure, 1)
            raise
        except GatewayError as error:
            _record_failure(PASSTHROUGH, error, 1)
            raise
        metrics.record(PASSTHROUGH, "ok", 0 if response.cached else 1)
        return Passthrough(response=response, latency_s=time.perf_counter() - started)

    def _require_routes(self, settings: AnswerSettings, options: StrategyOptions) -> None:
        """Every route the request names, known before any call: the answering one first, as
        a paraphrase service asked for a set would only report it as its own generator."""
        if self.routes is None:
            return
        named = [("model", settings.route), *((f, getattr(options, f)) for f in ROUTE_OPTIONS)]
        for option, name in named:
            if name is not None and name not in self.routes:
                raise UnknownRoute(name, sorted(self.routes), field=option)

    def _dispatch(
        self,
        strategy: StrategyName,
        meter: MeteredCaller,
        question: Question,
        settings: AnswerSettings,
        options: StrategyOptions,
    ) -> Awaitable[StrategyResult]:
        if strategy == "single-prompt":
            return single_prompt(meter, question, settings, options)
        if strategy == "canonicalize":
            return canonicalize(meter, question, settings, options)
        paraphraser = self._paraphraser(meter, settings, options)
        return paraphrase_vote(meter, question, settings, options, paraphraser, self.grouper)

    def _paraphraser(
        self, meter: MeteredCaller, settings: AnswerSettings, options: StrategyOptions
    ) -> Paraphraser:
        if options.generator is None and options.verify is False:
            return ModelParaphraser(meter, settings)
        if self.perturb is None:
            raise ValueError("paraphrases by a generator or verified ones need the perturb service")
        return PerturbParaphraser(
            client=self.perturb(),
            generator=options.generator or settings.route,
            verify=options.verify,
            task=options.task,
            seed=settings.seed,
            cache=settings.cache,
        )


def _record_failure(strategy: str, error: GatewayError, calls: int) -> None:
    if error.caller_error:
        metrics.record_rejected(strategy)
    else:
        metrics.record(strategy, "failed", calls)
