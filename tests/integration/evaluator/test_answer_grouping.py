"""The evaluator's per-question agreement on factual items whose answers say the same thing in
other words: one request (``/v1/evaluate``'s path) and a persisted job read back (SQLite and
PostgreSQL), grouped by meaning by default and by normalised text when asked."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from steadfast.services.evaluator.adapters.datasets import DatasetStore
from steadfast.services.evaluator.adapters.evaluations.store import EvaluationStore
from steadfast.services.evaluator.domain.engine import EngineSettings, JobEngine
from steadfast.services.evaluator.domain.evaluate import evaluate_now
from steadfast.services.evaluator.domain.evaluations import Evaluations
from steadfast.shared.backoff import Backoff
from steadfast.shared.contracts.evaluator import EvaluateRequest, EvaluationItem, EvaluationSettings
from steadfast.shared.db import create_engine, migrate
from tests.integration.evaluator.stand_ins import StandInUpstream, create_evaluation

CAPITAL = EvaluationItem(id="france", question="What is the capital of France?", answers=["Paris"])
AUSTRALIA = EvaluationItem(
    id="australia", question="What is the capital of Australia?", answers=["Canberra"]
)
#: the answer to each wording: the original, then "(variant 1)", "(variant 2)"
WORDINGS = {
    CAPITAL.question: ["Paris", "The capital of France is Paris.", "It's Paris."],
    AUSTRALIA.question: ["Canberra", "Canberra, in the ACT", "Sydney"],
}


def answerer(model: str, question: str) -> str:
    original, _, variant = question.partition(" (variant ")
    index = int(variant.rstrip(")")) if variant else 0
    return WORDINGS[original][index]


def upstream() -> StandInUpstream:
    stand_in = StandInUpstream(answerer)
    # the answer judge: the two Canberras are one answer, nothing else is
    stand_in.answer_judge = lambda pair: "YES" if pair.count("Canberra") == 2 else "NO"
    return stand_in


def agreements(items: list) -> dict[str, float | None]:  # type: ignore[type-arg]
    return {item.id: item.models[0].agreement for item in items}


async def test_one_request_groups_the_answers_by_meaning() -> None:
    stand_in = upstream()
    request = EvaluateRequest(model="m", k=2, items=[CAPITAL, AUSTRALIA], audit="off")
    response = await evaluate_now(request, stand_in, Backoff(attempts=1))
    assert agreements(response.items) == {"france": 1.0, "australia": pytest.approx(2 / 3)}
    grouping = response.answer_grouping
    assert grouping is not None and grouping.clustering == "semantic"
    # France: decided by the cheap steps; Australia: the ACT pair merged by the judge, Sydney
    # kept apart by a cheap step (another name)
    assert grouping.judge_calls == len(stand_in.answer_judged) == 1
    assert grouping.merged == 3  # two French sentences, one Canberra sentence
    plain = EvaluateRequest(
        model="m", k=2, items=[CAPITAL, AUSTRALIA], audit="off", grouping="normalized"
    )
    by_text = await evaluate_now(plain, upstream(), Backoff(attempts=1))
    assert agreements(by_text.items) == {
        "france": pytest.approx(1 / 3),
        "australia": pytest.approx(1 / 3),
    }


@pytest.fixture
async def store(database_url: str) -> AsyncIterator[EvaluationStore]:
    engine = create_engine(database_url)
    await migrate(engine, "evaluator")
    yield EvaluationStore(engine, lease_s=2.0)
    await engine.dispose()


async def test_a_job_groups_by_meaning_and_reads_back_the_same(store: EvaluationStore) -> None:
    settings = EvaluationSettings(model="m", k=2, audit="off")
    job, _ = await create_evaluation(
        store, settings=settings, items=[CAPITAL, AUSTRALIA], models=["m"], request_hash="grouping"
    )
    fast = EngineSettings(poll_s=0.05, retry=Backoff(attempts=2, base_delay_s=0.01))
    await JobEngine(store, upstream(), fast).run(job.id)
    evaluation = await store.get(job.id, results=True)
    assert evaluation is not None and evaluation.status == "succeeded", evaluation
    report = await Evaluations(store, DatasetStore(store.engine), upstream()).report(evaluation)
    assert agreements(report.items) == {"france": 1.0, "australia": pytest.approx(2 / 3)}
    assert report.answer_grouping is not None and report.answer_grouping.merged == 3
    # every answer shows the value it was counted with
    values = {a.value for v in report.items[0].variants for a in v.answers}
    assert values == {"paris"}
    summary = report.models[0]
    assert summary.mean_agreement == pytest.approx((1.0 + 2 / 3) / 2)
