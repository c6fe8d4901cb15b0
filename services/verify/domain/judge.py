"""LLM-judge stage (docs/method.md §1.1): one-token YES/NO at temperature 0, both orders; the
mean P(YES) over the orders is held to the route's threshold."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Literal

import msgspec

from steadfast.services.verify.domain.prompts import (
    EQUIVALENCE,
    JudgePrompt,
    answer_fit_messages,
    judge_messages,
)
from steadfast.shared.contracts.gateway import (
    ChatMessage,
    GenerateRequest,
    GenerateResponse,
    gateway_outcome,
)
from steadfast.shared.contracts.verify import JudgeVote
from steadfast.shared.http_client import ServiceCallError
from steadfast.shared.judging import p_yes_from, reply_verdict
from steadfast.shared.metering import MeteredCaller, ModelCaller

Order = Literal["original_first", "candidate_first"]


class UnknownModelError(Exception):
    """The gateway has no route of this name."""

    def __init__(self, model: str, detail: str | None) -> None:
        super().__init__(f"unknown model route {model!r}: {detail or ''}".strip())
        self.model = model


class JudgeUnavailable(Exception):
    """The judge's model (or the gateway) is down for now: no verdict can be given now, and
    a rejection "because the judge failed" would be taken as final by whoever asked."""


@dataclass(frozen=True)
class JudgeOutcome:
    """The judge's votes for a candidate, one per order asked, or why it could not judge."""

    votes: list[JudgeVote]
    error: str | None = None
    #: both orders were wanted, but the first already failed the candidate
    settled_early: bool = False

    @property
    def replies_yes(self) -> bool:
        return bool(self.votes) and all(v.verdict == "yes" for v in self.votes)

    @property
    def p_yes(self) -> float | None:
        """The mean P(YES) over the orders asked; None unless every order has one."""
        values = [vote.p_yes for vote in self.votes]
        if not values or any(value is None for value in values):
            return None
        return sum(value for value in values if value is not None) / len(values)

    def passes(self, threshold: float) -> bool:
        """docs/method.md §1.1: the mean P(YES) is at least ``threshold`` where the backend gives
        logprobs; else every reply starts with "Y"."""
        if self.error is not None:
            return False
        p_yes = self.p_yes
        return self.replies_yes if p_yes is None else p_yes >= threshold

    def verdict(self, threshold: float) -> Literal["yes", "no"]:
        return "yes" if self.passes(threshold) else "no"


class Judge:
    """Asks a gateway route whether each candidate is interchangeable with the original.

    One judge serves every request to its route (they share its concurrency limit), so each
    request passes its own :meth:`meter` to count the calls made for it."""

    def __init__(
        self,
        caller: ModelCaller,
        model: str,
        *,
        concurrency: int = 16,
        prompt: JudgePrompt = EQUIVALENCE,
    ) -> None:
        self._caller = caller
        self.model = model
        self.prompt = prompt
        self._limit = asyncio.Semaphore(concurrency)
        self._logprobs_supported = True

    def meter(self) -> MeteredCaller:
        return MeteredCaller(self._caller)

    async def judge_all(
        self,
        meter: MeteredCaller,
        original: str,
        candidates: list[str],
        *,
        bidirectional: bool,
        logprobs: bool,
        cache: bool = True,
        threshold: float | None = None,
    ) -> list[JudgeOutcome]:
        return list(
            await asyncio.gather(
                *(
                    self.judge(meter, original, text, bidirectional, logprobs, cache, threshold)
                    for text in candidates
                )
            )
        )

    async def judge(
        self,
        meter: MeteredCaller,
        original: str,
        candidate: str,
        bidirectional: bool,
        logprobs: bool,
        cache: bool = True,
        threshold: float | None = None,
    ) -> JudgeOutcome:
        """Both orders at once; or, given the ``threshold`` the verdict is held to, the second
        order only when its answer could still change the verdict (a first P(YES) below
        ``2 * threshold - 1`` cannot reach the threshold as a mean of two, and a first "no" fails
        the reply rule)."""
        try:
            if not bidirectional:
                votes = [
                    await self._ask(meter, original, candidate, "original_first", logprobs, cache)
                ]
            elif threshold is None:
                votes = list(
                    await asyncio.gather(
                        *(
                            self._ask(meter, original, candidate, order, logprobs, cache)
                            for order in ("original_first", "candidate_first")
                        )
                    )
                )
            else:
                votes = [
                    await self._ask(meter, original, candidate, "original_first", logprobs, cache)
                ]
                if not settled_by(votes[0], threshold):
                    votes.append(
                        await self._ask(
                            meter, original, candidate, "candidate_first", logprobs, cache
                        )
                    )
        except ServiceCallError as exc:
            if exc.status == 404:
                raise UnknownModelError(self.model, exc.problem.detail) from exc
            outcome = gateway_outcome(exc.problem) or exc.status or "unreachable"
            if exc.transient:
                detail = (
                    f"judge {self.model!r} down for now ({outcome}): {exc.problem.detail or exc}"
                )
                raise JudgeUnavailable(detail) from exc
            return JudgeOutcome(
                votes=[], error=f"judge call failed ({outcome}): {exc.problem.detail or exc}"
            )
        return JudgeOutcome(votes=votes, settled_early=bidirectional and len(votes) == 1)

    async def _ask(
        self,
        meter: MeteredCaller,
        original: str,
        candidate: str,
        order: Order,
        logprobs: bool,
        cache: bool,
    ) -> JudgeVote:
        first, second = (
            (original, candidate) if order == "original_first" else (candidate, original)
        )
        messages = judge_messages(first, second, self.prompt)
        response = await self._generate(meter, messages, logprobs, cache)
        return JudgeVote(
            order=order,
            reply=response.text.strip()[:50],
            verdict=reply_verdict(response.text),
            p_yes=p_yes_from(response.logprobs),
        )

    async def fits(
        self, meter: MeteredCaller, question: str, answer: str, logprobs: bool, cache: bool
    ) -> float:
        """P(YES) that ``answer`` is a correct answer to ``question`` (1 or 0 by the reply
        where the route gives no logprobs); raises :class:`ServiceCallError` as the gateway
        does."""
        response = await self._generate(
            meter, answer_fit_messages(question, answer), logprobs, cache
        )
        p_yes = p_yes_from(response.logprobs)
        if p_yes is not None:
            return p_yes
        return 1.0 if reply_verdict(response.text) == "yes" else 0.0

    async def _generate(
        self, meter: MeteredCaller, messages: list[ChatMessage], logprobs: bool, cache: bool
    ) -> GenerateResponse:
        want_logprobs = logprobs and self._logprobs_supported
        request = GenerateRequest(
            model=self.model,
            messages=messages,
            temperature=0.0,
            max_tokens=2,
            top_logprobs=10 if want_logprobs else None,
            cache=cache,
        )
        async with self._limit:
            try:
                return await meter.generate(request)
            except ServiceCallError as exc:
                if not (want_logprobs and _logprobs_unsupported(exc)):
                    raise
            # the route cannot give logprobs: the reply's first letter decides
            self._logprobs_supported = False
            return await meter.generate(msgspec.structs.replace(request, top_logprobs=None))


def settled_by(first: JudgeVote, threshold: float) -> bool:
    """Whether one order's vote already fails the candidate whatever the other order says: the
    mean of two P(YES) cannot reach ``threshold`` when the first is below ``2 * threshold - 1``;
    without P(YES), one "no" fails the reply rule."""
    if first.p_yes is None:
        return first.verdict == "no"
    return first.p_yes < 2 * threshold - 1


def _logprobs_unsupported(error: ServiceCallError) -> bool:
    """The gateway refused ``top_logprobs`` for the route (a 422 naming that field) — not a
    refused answer, which is a 422 too but says nothing of the route's logprobs."""
    problem = error.problem
    return error.status == 422 and any(e.field == "top_logprobs" for e in problem.errors or [])
