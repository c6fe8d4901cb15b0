from __future__ import annotations

import math
import re

import msgspec
import pytest

from steadfast.services.verify.domain.judge import Judge
from steadfast.services.verify.domain.pipeline import verify
from steadfast.services.verify.domain.semantic import EmbeddingCheck, NliCheck, as_embedded
from steadfast.shared.contracts.gateway import GenerateRequest, GenerateResponse, ModelCalls, Usage
from steadfast.shared.contracts.verify import VerifyRequest, VerifyStages, VerifyThresholds
from steadfast.shared.http_client import ServiceCallError
from tests.unit.verify.fakes import (
    BagOfWordsEmbedder,
    FakeGateway,
    gateway_error,
    response,
    user_text,
)

ORIGINAL = "How many apples does Tom have after buying five more?"


def _judge_yes_unless(word: str) -> FakeGateway:
    def answer(request: GenerateRequest) -> str:
        return "NO" if word in user_text(request) else "YES"

    return FakeGateway(answer)


def _request(candidates: list[str], **options) -> VerifyRequest:  # type: ignore[no-untyped-def]
    return VerifyRequest(original=ORIGINAL, candidates=candidates, **options)


async def test_stages_run_cheapest_first_and_stop_at_the_first_rejection() -> None:
    gateway = _judge_yes_unless("pears")
    embedder = BagOfWordsEmbedder()
    candidates = [
        "How many apples does Tom have after buying five more?!",  # lexical: overlap 1.0
        "Tom buys five more apples; what is his apple count now?",  # accepted
        "Tom buys five more pears; what is his apple count now?",  # judge says no
        "What unrelated words are here, five?",  # semantic: cosine 0
        "Tom buys six more apples; what is his apple count now?",  # numbers: five is gone
        "Tom has eight apples after buying five more.",  # form: a statement, it answers
    ]
    result = await verify(
        _request(candidates, thresholds=VerifyThresholds(embedding=0.2)),
        judge=Judge(gateway, "local"),
        semantic=EmbeddingCheck(embedder),
    )
    stages = [(r.accepted, r.deciding_stage) for r in result.results]
    assert stages == [
        (False, "lexical"),
        (True, None),
        (False, "judge"),
        (False, "semantic"),
        (False, "numbers"),
        (False, "form"),
    ]
    assert result.stages_run == ["form", "direction", "lexical", "numbers", "semantic", "judge"]
    assert result.semantic_check == "embedding"
    assert result.results[0].overlap == 1.0 and result.results[0].semantic is None
    # only the two candidates that passed the cheaper stages reached the judge: the accepted one
    # in both orders, the rejected one in one (its "no" fails it whatever the other order says)
    assert len(gateway.requests) == 3
    # the embedder saw the original and the three candidates that passed lexical and numbers
    assert embedder.calls == [[as_embedded(t, "en") for t in (ORIGINAL, *candidates[1:4])]]
    assert result.results[5].reason == (
        "a statement, not a question or a request (it may answer the question)"
    )
    accepted = result.results[1]
    assert accepted.judge_verdict == "yes" and accepted.semantic is not None
    assert accepted.semantic_check == "embedding"


async def test_explain_all_scores_every_stage_but_keeps_the_first_rejection() -> None:
    gateway = _judge_yes_unless("pears")
    candidates = ["How many apples does Tom have after buying five more", "pears pears five?"]
    result = await verify(
        _request(candidates, explain_all=True, thresholds=VerifyThresholds(embedding=0.2)),
        judge=Judge(gateway, "local"),
        semantic=EmbeddingCheck(BagOfWordsEmbedder()),
    )
    first, second = result.results
    assert first.deciding_stage == "lexical" and first.judge_verdict == "yes"
    assert first.semantic == pytest.approx(1.0)
    assert second.deciding_stage == "semantic" and second.judge_verdict == "no"
    assert len(gateway.requests) == 4


async def test_the_second_order_is_asked_only_when_it_could_change_the_verdict() -> None:
    """At 0.7 a first P(YES) below 0.4 cannot make a mean of two reach the threshold: its
    candidate is rejected on one call, and says so; from 0.4 up the other order is asked.
    ``explain_all`` (every stage's scores) always asks both."""
    first_order = {"low": 0.3, "edge": 0.41, "high": 0.9}

    def answer(request: GenerateRequest) -> GenerateResponse:
        text = user_text(request)
        # the original first: the candidate, which names its word, is the second question
        original_first = text.index("<question_b>") < max(text.find(f"({w})") for w in first_order)
        word = next(w for w in first_order if f"({w})" in text)
        p = first_order[word] if original_first else 0.95
        return response("YES", [("YES", math.log(p)), ("NO", math.log(1 - p))])

    candidates = [
        f"Tom buys five more apples ({w}); what is his apple count now?" for w in first_order
    ]
    gateway = FakeGateway(answer)
    stages = VerifyStages(lexical=False, form=False, direction=False)
    result = await verify(
        _request(candidates, stages=stages, thresholds=VerifyThresholds(judge_p_yes=0.7)),
        judge=Judge(gateway, "local"),
        semantic=None,
    )
    low, edge, high = result.results
    assert [len(r.judge_votes or []) for r in result.results] == [1, 2, 2]
    assert len(gateway.requests) == 5
    assert not low.accepted and low.judge_p_yes == pytest.approx(0.3)
    assert "the other order was not asked" in (low.reason or "")
    assert not edge.accepted and edge.judge_p_yes == pytest.approx((0.41 + 0.95) / 2)
    assert high.accepted

    everything = FakeGateway(answer)
    explained = await verify(
        _request(
            candidates,
            stages=stages,
            thresholds=VerifyThresholds(judge_p_yes=0.7),
            explain_all=True,
        ),
        judge=Judge(everything, "local"),
        semantic=None,
    )
    assert [len(r.judge_votes or []) for r in explained.results] == [2, 2, 2]
    assert explained.results[0].judge_p_yes == pytest.approx((0.3 + 0.95) / 2)


async def test_overlap_threshold_rejects_at_exactly_point_eight() -> None:
    request = VerifyRequest(
        original="one two three four five",
        candidates=["one two three four six", "one two three six seven"],
        stages=VerifyStages(judge=False, semantic="off", numbers=False),
    )
    result = await verify(request, judge=None, semantic=None)
    assert [r.overlap for r in result.results] == [0.8, 0.6]
    assert [r.accepted for r in result.results] == [False, True]
    assert result.semantic_check == "off" and result.judge_model is None


async def test_candidates_are_compared_with_accepted_paraphrases_too() -> None:
    request = VerifyRequest(
        original="one two three four five",
        accepted=["six seven eight nine ten"],
        candidates=[
            "six seven eight nine eleven",  # 0.8 with an earlier accepted paraphrase
            "alpha beta gamma delta epsilon",  # accepted
            "alpha beta gamma delta zeta",  # 0.8 with the candidate accepted just before
            "alpha beta gamma delta zeta",  # compared with accepted ones only
        ],
        stages=VerifyStages(judge=False, semantic="off", numbers=False),
    )
    result = await verify(request, judge=None, semantic=None)
    assert [r.accepted for r in result.results] == [False, True, False, False]
    assert result.results[0].reason == (
        "overlap 0.80 >= 0.8 with the accepted paraphrase 'six seven eight nine ten'"
    )
    assert "accepted candidate" in (result.results[2].reason or "")


async def test_a_lexical_rejection_names_the_original_when_it_is_the_closest_text() -> None:
    request = VerifyRequest(
        original="one two three four five",
        accepted=["one two three six seven"],
        candidates=["one two three four eight"],
        stages=VerifyStages(judge=False, semantic="off", numbers=False),
    )
    result = await verify(request, judge=None, semantic=None)
    assert result.results[0].reason == "overlap 0.80 >= 0.8 with the original"


async def test_a_failed_judge_call_rejects_with_its_reason_and_the_rest_go_on() -> None:
    def answer(request: GenerateRequest):  # type: ignore[no-untyped-def]
        if "broken" in user_text(request):
            return gateway_error(502, "upstream_error", "model crashed")
        return "YES"

    result = await verify(
        _request(["Tom buys five more: apple total?", "broken wording of it, five?"]),
        judge=Judge(FakeGateway(answer), "local"),
        semantic=None,
    )
    ok, failed = result.results
    assert ok.accepted
    assert not failed.accepted and failed.deciding_stage == "judge"
    assert failed.error and "upstream_error" in failed.error and "model crashed" in failed.error


async def test_a_requests_judge_calls_are_counted_failed_and_cached_ones_too() -> None:
    def candidate_first(request: GenerateRequest, start: str) -> bool:
        return user_text(request).startswith(f"<question_a>\n{start}")

    def answer(request: GenerateRequest) -> GenerateResponse | ServiceCallError:
        if candidate_first(request, "broken"):
            return gateway_error(502, "upstream_error", "model crashed")
        usage = Usage(input_tokens=len(user_text(request).split()), output_tokens=1)
        return msgspec.structs.replace(
            response("YES"), usage=usage, cached=candidate_first(request, "Tom")
        )

    gateway = FakeGateway(answer)
    judge = Judge(gateway, "local")  # one judge serves every request to its route
    candidates = ["Tom buys five more apples; what is his apple count now?", "broken wording: 5?"]
    result = await verify(_request(candidates, cache=False), judge=judge, semantic=None)
    asked = list(gateway.requests)
    answered = [request for request in asked if not candidate_first(request, "broken")]
    assert len(asked) == 2 * len(candidates) and len(answered) < len(asked)
    assert result.model_calls == ModelCalls(
        calls=len(asked),
        cached_calls=sum(candidate_first(request, "Tom") for request in answered),
        usage=Usage(
            input_tokens=sum(len(user_text(request).split()) for request in answered),
            output_tokens=len(answered),
        ),
    )
    assert not any(request.cache for request in asked)
    # the next request through the same judge counts only its own calls, cached by default
    again = await verify(_request(candidates[:1]), judge=judge, semantic=None)
    assert again.model_calls.calls == 2 and all(r.cache for r in gateway.requests[len(asked) :])


async def test_a_request_the_judge_did_not_call_for_reports_no_model_calls() -> None:
    gateway = _judge_yes_unless("pears")
    judge = Judge(gateway, "local")
    used = await verify(_request(["Tom buys five more: apple total?"]), judge=judge, semantic=None)
    assert used.model_calls.calls == 2
    # the same judge, every candidate rejected before its stage: nothing asked, nothing counted
    result = await verify(_request([ORIGINAL, "   "]), judge=judge, semantic=None)
    assert [r.deciding_stage for r in result.results] == ["lexical", "lexical"]
    assert len(gateway.requests) == 2 and result.model_calls == ModelCalls()
    without_judge = await verify(
        _request(["Tom buys five more: apple total?"]), judge=None, semantic=None
    )
    assert without_judge.model_calls == ModelCalls() and without_judge.stages_run[-1] != "judge"


async def test_empty_candidates_are_rejected() -> None:
    result = await verify(_request(["   "]), judge=None, semantic=None)
    assert result.results[0].deciding_stage == "lexical"
    assert result.results[0].reason == "empty candidate"


class _FakeNli:
    def __init__(self) -> None:
        self.pairs: list[tuple[str, str]] = []

    async def entailment(self, pairs: list[tuple[str, str]]) -> list[float]:
        self.pairs.extend(pairs)
        # entailment holds one way only for the candidate that adds a constraint
        return [0.3 if re.search("red", hyp) else 0.95 for _, hyp in pairs]


async def test_nli_uses_the_mean_of_both_directions() -> None:
    nli = _FakeNli()
    request = _request(
        ["Tom buys five more: apple total?", "Tom buys five more red ones: apple total?"],
        stages=VerifyStages(lexical=False, judge=False, semantic="nli"),
    )
    result = await verify(request, judge=None, semantic=NliCheck(nli))
    assert result.semantic_check == "nli"
    assert [r.semantic for r in result.results] == [pytest.approx(0.95), pytest.approx(0.625)]
    assert [r.accepted for r in result.results] == [True, False]
    assert ("Tom buys five more: apple total?", ORIGINAL) in nli.pairs
    assert (ORIGINAL, "Tom buys five more: apple total?") in nli.pairs


async def test_the_numbers_stage_rejects_changed_quantities() -> None:
    request = VerifyRequest(
        original="Ann has 3 pens and buys 4 more. How many pens does she have?",
        candidates=[
            "After buying four more pens, how many does Ann own if she had three?",
            "Ann has 5 pens and buys 4 more. How many pens does she have?",
            "Ann has some pens and buys 4 more. How many does she have?",
        ],
        stages=VerifyStages(lexical=False, judge=False, semantic="off"),
    )
    result = await verify(request, judge=None, semantic=None)
    assert result.stages_run == ["form", "direction", "numbers"]
    assert [r.accepted for r in result.results] == [True, False, False]
    assert result.results[1].reason == 'numbers differ from the original: missing "3"; added "5"'
    assert result.results[2].reason == 'numbers differ from the original: missing "3"'


class _BrokenNli:
    async def entailment(self, pairs: list[tuple[str, str]]) -> list[float]:
        raise ValueError("NLI endpoint gave no entailment label: ['LABEL_0']")


async def test_a_failing_semantic_check_rejects_with_its_reason() -> None:
    request = _request(["Tom buys five more: apple total?"], stages=VerifyStages(semantic="nli"))
    gateway = _judge_yes_unless("never")
    result = await verify(request, judge=Judge(gateway, "local"), semantic=NliCheck(_BrokenNli()))
    (verdict,) = result.results
    assert not verdict.accepted and verdict.deciding_stage == "semantic"
    assert verdict.error and "no entailment label" in verdict.error
    assert gateway.requests == []  # stopped before the judge


async def test_the_embedding_check_compares_numbers_in_digits_and_one_question_mark() -> None:
    embedder = BagOfWordsEmbedder()
    check = EmbeddingCheck(embedder)
    scores = await check.scores(
        "who won the world cup in 2014", ["Who won the World Cup in twenty fourteen?"]
    )
    assert embedder.calls == [["who won the world cup in 2014?", "Who won the World Cup in 2014?"]]
    assert scores[0] == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("how many moons does mars have", "how many moons does mars have?"),
        ("State how many euros she paid.", "State how many euros she paid?"),
        ("Why??  ", "Why?"),
        ("What is 10!", "What is 10!?"),  # a factorial stays
        ("Quanti anni ha Anna? ", "Quanti anni ha Anna?"),
    ],
)
def test_a_question_is_embedded_with_one_question_mark(text: str, expected: str) -> None:
    assert as_embedded(text, "en") == expected
