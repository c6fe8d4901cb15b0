"""Shadow checks of live proxy traffic: a sampled plain chat completion is, after its answer was
sent, paraphrased and asked again in the background, and the answers compared as paraphrase-vote
compares them. The share of the paraphrases answered as the caller was answered is a live
reliability signal per route, with no labelled data.

Never in the caller's way: :meth:`ShadowChecker.offer` only puts the check on a bounded queue
(full: dropped and counted), a few workers run the checks, a check waits (up to ``defer_s``) for
a moment with no live request being served, so a burst is answered first and checked after, and
a route's shadow calls take at most a share of its concurrency. No question text reaches the
metrics or the logs; disagreements are stored only for a route that asks for it
(``shadow_store``)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import random
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Literal, Protocol

from steadfast.services.gateway.domain.errors import GatewayError
from steadfast.services.gateway.domain.routes import Route
from steadfast.services.gateway.strategies.grouping import AnswerGrouper
from steadfast.services.gateway.strategies.metrics import SHADOW_AGREEMENT, SHADOW_CHECKS
from steadfast.services.gateway.strategies.paraphrase_vote import (
    answer_all,
    keep_quantities,
    read_ballots,
)
from steadfast.services.gateway.strategies.paraphrasers import ModelParaphraser
from steadfast.services.gateway.strategies.question import AnswerSettings, Question
from steadfast.shared.contracts.gateway import GenerateRequest, GenerateResponse
from steadfast.shared.contracts.proxy import ShadowDisagreement, ShadowVariant
from steadfast.shared.metering import MeteredCaller, ModelCaller

logger = logging.getLogger(__name__)

ShadowOutcome = Literal["agree", "disagree", "no_paraphrase", "dropped", "failed"]


@dataclass(frozen=True)
class ShadowSettings:
    """``rate``: the share of plain completions checked on a route without its own
    ``shadow_rate``; ``generator``: the route that writes the paraphrases (default: the
    answering route); ``share``: of a route's concurrency the shadow calls may take."""

    rate: float = 0.0
    k: int = 3
    queue_size: int = 100
    workers: int = 2
    share: float = 0.25
    generator: str | None = None
    #: a check waits at most this long for a moment with no live request being served
    defer_s: float = 2.0


@dataclass(frozen=True)
class ShadowJob:
    """A live completion to check in the background: its question, settings and answer."""

    question: Question
    settings: AnswerSettings
    answered: GenerateResponse


@dataclass
class CheckResult:
    """The outcome of a shadow check, with the paraphrases' agreement and answers."""

    outcome: ShadowOutcome
    agreement: float | None = None
    variants: list[ShadowVariant] = field(default_factory=list)


class DisagreementStore(Protocol):
    """Where disagreements of the routes with ``shadow_store`` are kept."""

    async def add(self, disagreement: ShadowDisagreement) -> None: ...


@dataclass
class _Limited:
    """A route's calls for shadow checks, at most ``limit`` at once."""

    caller: ModelCaller
    limit: asyncio.Semaphore

    async def generate(self, request: GenerateRequest) -> GenerateResponse:
        async with self.limit:
            return await self.caller.generate(request)


async def shadow_check(
    model: ModelCaller, job: ShadowJob, grouper: AnswerGrouper, k: int, generator: str | None
) -> CheckResult:
    """Paraphrase the question (numbers kept), answer each paraphrase, and compare each answer
    with the one the caller got: agreement is the share grouped with it."""
    metered = MeteredCaller(model)
    # asked now, not read from the response cache: the check is of the model as it answers
    # today, and a cache write would queue before live requests' reads on the database
    settings, question = replace(job.settings, cache=False), job.question
    parts = question.parts(None)
    writer = replace(settings, route=generator) if generator else settings
    written = await ModelParaphraser(metered, writer).paraphrase(parts.stem, k)
    faithful, _ = keep_quantities(parts, written.texts)
    if not faithful:
        return CheckResult("failed" if written.failed else "no_paraphrase")
    asked = await answer_all(metered, question, faithful, settings, None, False, parts.choices)
    ballots = read_ballots([job.answered, *asked], None, settings.route, parts.choices)
    grouped = await grouper.group(
        metered,
        judge_route=settings.route,
        question=question.text,
        task=ballots.task,
        keys=ballots.keys,
        answers=[reading.answer if reading else None for reading in ballots.readings],
        grouping="semantic",
        cache=settings.cache,
    )
    original, others = grouped.keys[0], grouped.keys[1:]
    answered = [key for key in others if key is not None]
    if original is None or not answered:
        return CheckResult("failed")
    agreement = sum(key == original for key in answered) / len(answered)
    variants = [
        ShadowVariant(
            question=wording,
            answer=reading.answer if reading else None,
            agrees=key is not None and key == original,
        )
        for wording, reading, key in zip(faithful, ballots.readings[1:], others, strict=True)
    ]
    return CheckResult("agree" if agreement == 1.0 else "disagree", agreement, variants)


class ShadowChecker:
    """The queue and workers of the shadow checks; one per gateway."""

    def __init__(
        self,
        gateway: ModelCaller,
        routes: Mapping[str, Route],
        settings: ShadowSettings,
        grouper: AnswerGrouper,
        store: DisagreementStore | None = None,
        draw: Callable[[], float] = random.random,
    ) -> None:
        self._gateway = gateway
        self._routes = routes
        self.settings = settings
        self._grouper = grouper
        self.store = store
        self._draw = draw
        self._queue: asyncio.Queue[ShadowJob] = asyncio.Queue(settings.queue_size)
        self._limits: dict[str, asyncio.Semaphore] = {}
        self._workers: list[asyncio.Task[None]] = []
        #: live requests being served now, and set while there are none
        self._live = 0
        self._idle = asyncio.Event()
        self._idle.set()

    @contextlib.contextmanager
    def serving(self) -> Iterator[None]:
        """Around a live request: checks wait for a moment without any."""
        self._live += 1
        self._idle.clear()
        try:
            yield
        finally:
            self._live -= 1
            if self._live == 0:
                self._idle.set()

    def rate(self, route: str) -> float:
        configured = self._routes[route].shadow_rate if route in self._routes else None
        return self.settings.rate if configured is None else configured

    def draws(self, route: str) -> bool:
        """Whether this answer of ``route`` is to be checked (its rate's draw)."""
        rate = self.rate(route)
        return rate > 0 and self._draw() < rate

    def offer(
        self, question: Question, settings: AnswerSettings, answered: GenerateResponse
    ) -> bool:
        """Queue a check of this answer; never waits: with the queue full it is dropped and
        counted. Whether it was queued."""
        try:
            self._queue.put_nowait(ShadowJob(question, settings, answered))
        except asyncio.QueueFull:
            SHADOW_CHECKS.labels(settings.route, "dropped").inc()
            return False
        return True

    def start(self) -> None:
        self._workers = [
            asyncio.create_task(self._work()) for _ in range(max(1, self.settings.workers))
        ]

    async def stop(self) -> None:
        for worker in self._workers:
            worker.cancel()
        await asyncio.gather(*self._workers, return_exceptions=True)
        self._workers = []

    async def drain(self) -> None:
        """Until every queued check has run (tests, benchmarks)."""
        await self._queue.join()

    async def _work(self) -> None:
        while True:
            job = await self._queue.get()
            try:
                with contextlib.suppress(TimeoutError):  # under steady traffic: run anyway
                    await asyncio.wait_for(self._idle.wait(), self.settings.defer_s)
                await self.run(job)
            finally:
                self._queue.task_done()

    async def run(self, job: ShadowJob) -> CheckResult:
        route = job.settings.route
        started = time.perf_counter()
        try:
            result = await shadow_check(
                _Limited(self._gateway, self._limit(route)),
                job,
                self._grouper,
                self.settings.k,
                self.settings.generator,
            )
        except Exception as error:  # a worker that died would leave every later check dropped
            # the reason's kind only: a model's message may quote the question
            expected = isinstance(error, GatewayError | ValueError)
            log = logger.warning if expected else logger.error
            log("shadow check on %s failed: %s", route, type(error).__name__)
            result = CheckResult("failed")
        SHADOW_CHECKS.labels(route, result.outcome).inc()
        if result.agreement is not None:
            SHADOW_AGREEMENT.labels(route).observe(result.agreement)
        if result.outcome == "disagree":
            await self._keep(job, result, time.perf_counter() - started)
        return result

    def _limit(self, route: str) -> asyncio.Semaphore:
        if route not in self._limits:
            concurrency = self._routes[route].max_concurrency if route in self._routes else 1
            self._limits[route] = asyncio.Semaphore(
                max(1, math.floor(concurrency * self.settings.share))
            )
        return self._limits[route]

    async def _keep(self, job: ShadowJob, result: CheckResult, elapsed_s: float) -> None:
        route = self._routes.get(job.settings.route)
        if self.store is None or route is None or not route.shadow_store:
            return
        disagreement = ShadowDisagreement(
            route=job.settings.route,
            question=job.question.text,
            answer=job.answered.text,
            agreement=result.agreement or 0.0,
            variants=result.variants,
            created_at=time.time(),
            elapsed_s=round(elapsed_s, 3),
        )
        try:
            await self.store.add(disagreement)
        except Exception as error:  # a lost record must not stop the checks, but is told
            logger.error(
                "shadow disagreement on %s not stored: %s", route.name, type(error).__name__
            )
