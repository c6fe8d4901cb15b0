"""The positional-bias protocol's reading of replies and its mitigations (method §2.1, §2.3)."""

from __future__ import annotations

import math

import msgspec
import pytest

from steadfast.services.evaluator.domain.position import evaluate_position_bias
from steadfast.services.evaluator.domain.position_replies import (
    calibrated_choice,
    model_result,
    option_probabilities,
    read_reply,
)
from steadfast.services.evaluator.domain.position_requests import (
    asks_generator,
    order_count,
    position_item,
)
from steadfast.services.evaluator.errors import UpstreamError
from steadfast.services.evaluator.records import Generated
from steadfast.shared.backoff import Backoff
from steadfast.shared.contracts.evaluator import EvaluationItem
from steadfast.shared.contracts.gateway import GenerateRequest, TokenAlternative
from steadfast.shared.contracts.perturb import (
    DistractorRequest,
    DistractorResponse,
    OptionOrder,
    PermutationRequest,
    PermutationResponse,
)
from steadfast.shared.contracts.position import (
    Condition,
    OrderAnswer,
    PositionBiasEvaluate,
    PositionItem,
)
from steadfast.shared.contracts.scoring import PositionBiasRequest, PositionBiasResponse


def test_a_reply_is_read_strictly_and_mapped_to_the_option_it_stood_for() -> None:
    assert read_reply([2, 0, 1], " (b). ", None).chosen == 0
    expected = OrderAnswer(order=[1, 0], text="B", choice="B", chosen=0)
    assert read_reply([1, 0], "B", None) == expected
    invalid = read_reply([0, 1], "B. because", None)
    assert (invalid.choice, invalid.chosen, invalid.error) == (None, None, None)
    assert read_reply([0, 1], "C", None).choice is None  # not among two options
    failed = read_reply([0, 1], None, "gateway: timeout (after 3 attempts)")
    assert failed.error == "gateway: timeout (after 3 attempts)" and failed.text is None


def answers(*chosen: int | None) -> list[OrderAnswer]:
    return [OrderAnswer(order=[0, 1, 2], chosen=option) for option in chosen]


def test_swap_and_agree_needs_every_order_to_choose_the_same_option() -> None:
    agreed = model_result("m", answers(1, 1, 1))
    assert (agreed.consistent, agreed.agreed, agreed.vote) == (True, 1, 1)
    split = model_result("m", answers(1, 1, 2))
    assert (split.consistent, split.agreed, split.vote) == (False, None, 1)


def test_a_missing_reply_leaves_consistency_unknown_and_a_tie_has_no_vote() -> None:
    partial = model_result("m", answers(1, None, 1))
    assert (partial.consistent, partial.agreed, partial.vote) == (None, None, 1)
    tie = model_result("m", answers(0, 1, None))
    assert tie.vote is None
    assert model_result("m", answers(None, None, None)).vote is None


def test_option_probabilities_sum_the_tokens_that_name_each_letter() -> None:
    alternatives = [
        TokenAlternative(token=" B", logprob=math.log(0.5)),
        TokenAlternative(token="B.", logprob=math.log(0.1)),
        TokenAlternative(token="a", logprob=math.log(0.02)),  # the article, not option A
        TokenAlternative(token="A", logprob=math.log(0.3)),
        TokenAlternative(token="C", logprob=math.log(0.05)),  # not among two options
        TokenAlternative(token="Because", logprob=math.log(0.05)),
    ]
    # order [1, 0]: option 1 stands at A, option 0 at B
    assert option_probabilities([1, 0], alternatives) == pytest.approx([0.6, 0.3])


def test_calibration_averages_over_orders_and_refuses_a_tie() -> None:
    def scored(*probabilities: list[float] | None) -> list[OrderAnswer]:
        return [OrderAnswer(order=[0, 1], option_probabilities=p) for p in probabilities]

    assert calibrated_choice(scored([0.9, 0.1], [0.45, 0.55])) == 0
    # one order without probabilities: the other alone would lean to its own slots
    assert calibrated_choice(scored([0.9, 0.1], None)) is None
    assert calibrated_choice(scored([0.6, 0.4], [0.4, 0.6])) is None
    assert calibrated_choice(scored(None, None)) is None
    assert calibrated_choice(scored([0.0, 0.0])) is None


def test_a_dataset_item_becomes_a_protocol_item() -> None:
    factual = EvaluationItem(id="q1", question="Who?", answers=["Ada", "Ada Lovelace"], context="c")
    expected = PositionItem(
        id="q1", question="Who?", answer="Ada", also_correct=["Ada Lovelace"], context="c"
    )
    assert position_item(factual) == expected
    # every accepted answer is kept, the preferred one first and once
    both = EvaluationItem(question="Who?", answer="Lovelace", answers=["Ada", "Lovelace"])
    assert (position_item(both).answer, position_item(both).also_correct) == ("Lovelace", ["Ada"])
    # a dataset's answers have no limits, a request has: the item still makes a valid request
    many = EvaluationItem(question="Who?", answers=["x" * 6000, *(f"a{n}" for n in range(150))])
    mapped = msgspec.convert(msgspec.to_builtins(position_item(many)), PositionItem)
    assert mapped.answer == "a0" and len(mapped.also_correct) == 100
    choice = EvaluationItem(question="Which?", options=["x", "y"], correct_option="B", answer="y")
    mapped = position_item(choice)
    assert (mapped.options, mapped.correct_option, mapped.answer) == (["x", "y"], "B", None)


def test_the_answer_count_covers_only_the_conditions_an_item_can_run() -> None:
    choice = PositionItem(question="q", options=["w", "x", "y", "z"], correct_option="A")
    bare = PositionItem(question="q", answer="a")
    with_context = PositionItem(question="q", answer="a", context="c")
    request = PositionBiasEvaluate(models=["m1", "m2"], items=[choice, bare, with_context])
    # choice: medium, 4 orders; bare: medium + high; with context: low + medium + high
    assert order_count(request) == (4 + 2 * 2 + 3 * 2) * 2
    only_high = msgspec.structs.replace(request, conditions=["high"])
    assert order_count(only_high) == (2 + 2) * 2


class ScoringDown:
    """Gateway and perturb answer; scoring keeps failing."""

    def __init__(self) -> None:
        self.scoring_calls = 0

    async def generate_batch(self, requests: list[GenerateRequest]) -> list[Generated]:
        return [Generated(text="A") for _ in requests]

    async def permutations(self, request: PermutationRequest) -> PermutationResponse:
        orders = [
            OptionOrder(options=[], positions=[], order=[0, 1]),
            OptionOrder(options=[], positions=[], order=[1, 0]),
        ]
        return PermutationResponse(scheme=request.scheme, orders=orders)

    async def position_bias(self, request: PositionBiasRequest) -> PositionBiasResponse:
        self.scoring_calls += 1
        raise UpstreamError("scoring: unavailable")

    async def logprob_routes(self) -> set[str]:
        return set()


async def test_replies_are_returned_when_scoring_fails() -> None:
    upstream = ScoringDown()
    request = PositionBiasEvaluate(
        model="m",
        items=[PositionItem(question="q", answer="yes", distractor="no")],
        conditions=["medium"],
    )
    result = await evaluate_position_bias(
        request,
        upstream,
        Backoff(attempts=2, base_delay_s=0),  # type: ignore[arg-type]
    )
    assert upstream.scoring_calls == 2
    assert [a.choice for a in result.trials[0].models[0].answers] == ["A", "A"]
    assert result.models == {} and result.notes == [
        "no metrics: scoring: unavailable (after 2 attempts)"
    ]


class CountingWriter(ScoringDown):
    """Writes every distractor asked for, and counts the asks; scoring still fails (the
    metrics do not matter here)."""

    def __init__(self) -> None:
        super().__init__()
        self.asked = 0

    async def distractors(self, request: DistractorRequest) -> DistractorResponse:
        self.asked += 1
        texts = [f"decoy {n}" for n in range(request.n)]
        return DistractorResponse(
            distractors=texts, mode=request.mode, generator=request.generator, complete=True
        )


ITEM_SHAPES = {
    "choice": PositionItem(question="q", options=["w", "x"], correct_option="A"),
    "given": PositionItem(question="q", answer="a", distractor="d"),
    "given+context": PositionItem(question="q", answer="a", distractor="d", context="c"),
    "bare": PositionItem(question="q", answer="a"),
    "bare+context": PositionItem(question="q", answer="a", context="c"),
}
CONDITION_SETS: list[list[Condition] | None] = [
    None,
    ["low"],
    ["medium"],
    ["high"],
    ["low", "medium"],
]


@pytest.mark.parametrize("conditions", CONDITION_SETS)
@pytest.mark.parametrize("shape", list(ITEM_SHAPES))
async def test_the_writer_is_said_to_be_asked_exactly_when_the_plan_asks_it(
    shape: str, conditions: list[Condition] | None
) -> None:
    # the route check of the writer (asks_generator) must follow the plan's own rule
    request = PositionBiasEvaluate(model="m", items=[ITEM_SHAPES[shape]], conditions=conditions)
    upstream = CountingWriter()
    await evaluate_position_bias(request, upstream, Backoff(attempts=1, base_delay_s=0))  # type: ignore[arg-type]
    assert (upstream.asked > 0) == asks_generator(request)
