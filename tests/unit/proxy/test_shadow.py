"""Shadow checks with an in-test model: agreement with the caller's answer, paraphrases that
change a number left out, failures counted, a full queue dropping and counting, and a route's
shadow calls held to their share of its concurrency."""

from __future__ import annotations

import asyncio

import pytest
from prometheus_client import REGISTRY

from steadfast.services.gateway.domain.routes import Route
from steadfast.services.gateway.strategies.grouping import AnswerGrouper
from steadfast.services.gateway.strategies.question import AnswerSettings, Question
from steadfast.services.gateway.strategies.shadow import ShadowChecker, ShadowJob, ShadowSettings
from steadfast.shared.contracts.gateway import GenerateRequest, GenerateResponse
from steadfast.shared.contracts.proxy import ShadowDisagreement
from tests.unit.proxy.test_strategies import (
    PARAPHRASES,
    QUESTION,
    WordingModel,
    by_wording,
    failure,
)
from tests.unit.verify.fakes import response


def checks(route: str, outcome: str) -> float:
    labels = {"route": route, "outcome": outcome}
    return REGISTRY.get_sample_value("steadfast_shadow_checks_total", labels) or 0.0


class Kept:
    def __init__(self) -> None:
        self.disagreements: list[ShadowDisagreement] = []

    async def add(self, disagreement: ShadowDisagreement) -> None:
        self.disagreements.append(disagreement)


def checker(
    model: object, route: str, *, rate: float = 1.0, store: bool = False, **settings: object
) -> tuple[ShadowChecker, Kept]:
    routes = {route: Route(name=route, backend="openai", model="m", shadow_store=store)}
    kept = Kept()
    shadow = ShadowChecker(
        model,  # type: ignore[arg-type]
        routes,
        ShadowSettings(rate=rate, **settings),  # type: ignore[arg-type]
        AnswerGrouper(),
        store=kept,
    )
    return shadow, kept


def job(route: str, answer: str = "24") -> ShadowJob:
    return ShadowJob(Question(text=QUESTION), AnswerSettings(route=route), response(answer))


async def test_paraphrases_answered_as_the_caller_was_agree() -> None:
    model = WordingModel(lambda _: "24")
    shadow, kept = checker(model, "agreeing", k=3)
    before = checks("agreeing", "agree")
    result = await shadow.run(job("agreeing"))
    assert (result.outcome, result.agreement) == ("agree", 1.0)
    assert checks("agreeing", "agree") == before + 1
    # one call for the paraphrases, one per paraphrase; the caller's answer is not asked again
    assert len(model.requests) == 1 + 3 and QUESTION not in model.answered()
    assert kept.disagreements == []
    labels = {"route": "agreeing"}
    assert REGISTRY.get_sample_value("steadfast_shadow_agreement_ratio_count", labels) == 1


async def test_a_paraphrase_answered_otherwise_is_a_disagreement_kept_where_asked() -> None:
    model = WordingModel(by_wording({PARAPHRASES[1]: "18"}, "24"))
    shadow, kept = checker(model, "storing", store=True, k=3)
    result = await shadow.run(job("storing"))
    assert result.outcome == "disagree" and result.agreement == 2 / 3
    [stored] = kept.disagreements
    assert (stored.route, stored.question, stored.answer) == ("storing", QUESTION, "24")
    assert [v.agrees for v in stored.variants] == [True, False, True]

    quiet, nothing = checker(model, "not-storing", k=3)
    assert (await quiet.run(job("not-storing"))).outcome == "disagree"
    assert nothing.disagreements == []  # shadow_store is off by default


async def test_paraphrases_that_change_a_number_are_not_asked() -> None:
    model = WordingModel(lambda _: "24", paraphrases=["How many legs do 4 spiders have?"])
    shadow, _ = checker(model, "numbers", k=1)
    before = checks("numbers", "no_paraphrase")
    assert (await shadow.run(job("numbers"))).outcome == "no_paraphrase"
    assert checks("numbers", "no_paraphrase") == before + 1
    assert len(model.requests) == 1  # only the paraphrase call


async def test_failed_calls_are_a_failed_check() -> None:
    model = WordingModel(lambda _: failure())
    shadow, _ = checker(model, "failing", k=2)
    before = checks("failing", "failed")
    assert (await shadow.run(job("failing"))).outcome == "failed"
    assert checks("failing", "failed") == before + 1


async def test_the_rate_draws_and_a_full_queue_drops_and_counts() -> None:
    model = WordingModel(lambda _: "24")
    draws = iter([0.05, 0.5, 0.05, 0.05, 0.05])
    routes = {"sampled": Route(name="sampled", backend="openai", model="m", shadow_rate=0.1)}
    shadow = ShadowChecker(
        model,
        routes,
        ShadowSettings(rate=0.0, queue_size=2),
        AnswerGrouper(),
        draw=lambda: next(draws),
    )
    assert shadow.rate("sampled") == 0.1 and shadow.rate("elsewhere") == 0.0
    assert not shadow.draws("elsewhere")  # rate 0: never drawn, no draw spent
    assert [shadow.draws("sampled") for _ in range(2)] == [True, False]
    before = checks("sampled", "dropped")
    queued = [
        shadow.offer(Question(text=QUESTION), AnswerSettings(route="sampled"), response("24"))
        for _ in range(3)
    ]
    assert queued == [True, True, False]  # no worker runs: the third finds the queue full
    assert checks("sampled", "dropped") == before + 1
    shadow.start()
    await asyncio.wait_for(shadow.drain(), 10)
    await shadow.stop()


class SlowModel(WordingModel):
    """Counts the calls in flight at once."""

    def __init__(self) -> None:
        super().__init__(lambda _: "24")
        self.in_flight = self.most = 0

    async def generate(self, request: GenerateRequest) -> GenerateResponse:
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        try:
            await asyncio.sleep(0.01)
            return await super().generate(request)
        finally:
            self.in_flight -= 1


async def test_shadow_calls_take_at_most_their_share_of_the_routes_concurrency() -> None:
    model = SlowModel()
    routes = {"busy": Route(name="busy", backend="openai", model="m", max_concurrency=8)}
    shadow = ShadowChecker(
        model, routes, ShadowSettings(rate=1.0, k=4, workers=4, share=0.25), AnswerGrouper()
    )
    shadow.start()
    for _ in range(4):
        assert shadow.offer(Question(text=QUESTION), AnswerSettings(route="busy"), response("24"))
    await asyncio.wait_for(shadow.drain(), 10)
    await shadow.stop()
    assert model.most == 2  # a quarter of 8, though four checks of four calls ran at once


class NoParaphraser(WordingModel):
    async def generate(self, request: GenerateRequest) -> GenerateResponse:
        if request.messages[0].content.startswith("You write paraphrases"):
            raise failure("unavailable")
        return await super().generate(request)


async def test_a_failed_paraphrase_call_is_a_failed_check_not_a_missing_paraphrase() -> None:
    shadow, _ = checker(NoParaphraser(lambda _: "24"), "unwritten", k=2)
    before = (checks("unwritten", "failed"), checks("unwritten", "no_paraphrase"))
    assert (await shadow.run(job("unwritten"))).outcome == "failed"
    assert (checks("unwritten", "failed"), checks("unwritten", "no_paraphrase")) == (
        before[0] + 1,
        before[1],
    )


async def test_a_check_waits_for_a_moment_without_live_requests_but_not_for_ever() -> None:
    model = WordingModel(lambda _: "24")
    shadow, _ = checker(model, "deferred", k=1, defer_s=5.0)
    shadow.start()
    with shadow.serving():
        assert shadow.offer(
            Question(text=QUESTION), AnswerSettings(route="deferred"), response("24")
        )
        await asyncio.sleep(0.2)
        assert model.requests == []  # a live request is being served: the check waits
    await asyncio.wait_for(shadow.drain(), 5)
    assert len(model.requests) == 2  # ran once the live request was done
    await shadow.stop()

    steady, _ = checker(model, "steady", k=1, defer_s=0.1)
    steady.start()
    with steady.serving():  # traffic that never stops: the check runs after defer_s
        assert steady.offer(Question(text=QUESTION), AnswerSettings(route="steady"), response("24"))
        await asyncio.wait_for(steady.drain(), 5)
    assert len(model.requests) == 4
    await steady.stop()


class Broken(WordingModel):
    async def generate(self, request: GenerateRequest) -> GenerateResponse:
        raise RuntimeError("a bug, or a database that went away")


async def test_an_unexpected_error_fails_the_check_and_the_worker_goes_on() -> None:
    shadow, _ = checker(Broken(lambda _: "24"), "buggy", k=1, workers=1, defer_s=0.0)
    before = checks("buggy", "failed")
    shadow.start()
    for _ in range(3):
        assert shadow.offer(Question(text=QUESTION), AnswerSettings(route="buggy"), response("24"))
        await asyncio.wait_for(shadow.drain(), 5)
    assert checks("buggy", "failed") == before + 3  # the one worker ran all three
    await shadow.stop()


class Unstorable(Kept):
    async def add(self, disagreement: ShadowDisagreement) -> None:
        raise OSError("disk full")


async def test_a_disagreement_that_cannot_be_stored_is_logged_and_the_check_counted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    model = WordingModel(by_wording({PARAPHRASES[0]: "18"}, "24"))
    routes = {"full": Route(name="full", backend="openai", model="m", shadow_store=True)}
    shadow = ShadowChecker(
        model, routes, ShadowSettings(rate=1.0, k=2), AnswerGrouper(), store=Unstorable()
    )
    before = checks("full", "disagree")
    assert (await shadow.run(job("full"))).outcome == "disagree"
    assert checks("full", "disagree") == before + 1
    assert "not stored: OSError" in caplog.text and QUESTION not in caplog.text
