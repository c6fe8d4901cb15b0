"""The round logic of METHOD.md §1.1 with a stand-in gateway and verify service."""

from __future__ import annotations

import re
import time

import msgspec
import pytest

from services.perturb.domain.paraphrasing import (
    ParaphraseBuilder,
    UnknownRouteError,
    VerifyRejectedError,
    targets,
)
from services.perturb.domain.prompts import HINTS, PARAPHRASE_PROMPT_VERSION, TONES
from shared.backoff import Backoff
from shared.contracts.base import Problem
from shared.contracts.gateway import GenerateRequest, GenerateResponse, ModelCalls, Usage
from shared.contracts.perturb import ParaphraseRequest
from shared.http_client import ServiceCallError
from tests.unit.perturb.fakes import FakeVerifier
from tests.unit.verify.fakes import FakeGateway, gateway_error, response, user_text

QUESTION = "How many apples does Tom have after buying five more?"


def _instruction(request: GenerateRequest) -> str:
    match = re.search(r"Style: (.*)", user_text(request))
    assert match
    return match.group(1)


def _distinct(request: GenerateRequest) -> str:
    """A different candidate for every request, naming its kind."""
    kind = "toned" if " tone (" in _instruction(request) else "plain"
    return f"{kind} rewording number {request.sample_index}"


def _builder(responder=_distinct, accept=lambda _: True, latency_s=0.0):  # type: ignore[no-untyped-def]
    gateway = FakeGateway(responder, latency_s)
    verifier = FakeVerifier(accept)
    return ParaphraseBuilder(gateway, verifier), gateway, verifier


def test_targets_round_up() -> None:
    assert targets(10, 0.7, 0.4) == (7, 4)
    assert targets(3, 0.7, 0.4) == (3, 2)
    assert targets(1, 0.7, 0.4) == (1, 1)


async def test_one_round_yields_first_seven_plain_plus_toned_cut_to_k() -> None:
    builder, gateway, verifier = _builder()
    result = await builder.build(ParaphraseRequest(question=QUESTION, k=10, seed=1))
    assert result.complete and result.incomplete_reason is None
    assert result.rounds == 1
    # a round asks for 14 plain and 8 toned candidates
    assert result.candidates_generated == 22 and len(gateway.requests) == 22
    kinds = [p.kind for p in result.accepted]
    assert kinds == ["plain"] * 7 + ["toned"] * 3
    assert len(result.surplus) == 12
    for paraphrase in result.accepted:
        assert paraphrase.prompt_version == PARAPHRASE_PROMPT_VERSION
        assert paraphrase.generator == "local"
        assert (paraphrase.hint in HINTS) == (paraphrase.kind == "plain")
        assert (paraphrase.tone in TONES) == (paraphrase.kind == "toned")
    # the judge defaults to the generator's route; one verify call per round
    assert len(verifier.requests) == 1 and verifier.requests[0].judge_model == "local"


async def test_rounds_continue_until_k_are_accepted_and_ask_only_for_what_is_missing() -> None:
    # only every third candidate survives verification
    builder, _, verifier = _builder(accept=lambda text: int(text.split()[-1]) % 3 == 0)
    result = await builder.build(ParaphraseRequest(question=QUESTION, k=10, seed=3))
    assert result.complete
    assert result.rounds >= 2
    assert [p.kind for p in result.accepted].count("plain") == 7
    assert len(result.rejected) == result.candidates_generated - len(result.accepted) - len(
        result.surplus
    )
    assert all(r.stage == "judge" for r in result.rejected)
    # later rounds compare against the paraphrases accepted before
    assert verifier.requests[-1].accepted


async def test_a_round_asks_only_for_the_kind_still_missing() -> None:
    # round 1: every plain candidate passes, no toned one does; round 2 asks for toned only
    toned_ok = {"first": False}

    def accept(text: str) -> bool:
        return text.startswith("plain") or toned_ok["first"]

    builder, gateway, verifier = _builder(accept=accept)
    original_verify = verifier.verify

    async def verify_then_relent(request):  # type: ignore[no-untyped-def]
        response = await original_verify(request)
        toned_ok["first"] = True
        return response

    verifier.verify = verify_then_relent  # type: ignore[method-assign]
    result = await builder.build(ParaphraseRequest(question=QUESTION, k=10, seed=5))
    assert result.complete and result.rounds == 2
    second_round = gateway.requests[22:]
    assert len(second_round) == 8
    assert all(" tone (" in _instruction(r) for r in second_round)
    assert [p.kind for p in result.accepted] == ["plain"] * 7 + ["toned"] * 3


async def test_without_toned_candidates_the_set_is_k_plain_and_stops_there() -> None:
    # one candidate in three survives; the set must not stop at the plain target (4 of 5) and
    # then spend the candidate cap on plain candidates that could never enter it
    builder, gateway, _ = _builder(accept=lambda text: int(text.split()[-1]) % 3 == 0)
    request = ParaphraseRequest(
        question=QUESTION, k=5, seed=2, plain_per_round=4, toned_per_round=0, max_candidates=40
    )
    result = await builder.build(request)
    assert result.complete and result.incomplete_reason is None
    assert [p.kind for p in result.accepted] == ["plain"] * 5
    # candidates 0, 3, 6, 9 and 12 are kept, 15 is the fourth round's surplus; no fifth round
    assert [p.sample_index for p in result.accepted] == [0, 3, 6, 9, 12]
    assert [p.sample_index for p in result.surplus] == [15]
    assert result.candidates_generated == len(gateway.requests) == 16
    assert all(" tone (" not in _instruction(r) for r in gateway.requests)


async def test_a_toned_share_of_zero_asks_for_plain_candidates_only() -> None:
    builder, gateway, _ = _builder()
    request = ParaphraseRequest(question=QUESTION, k=5, seed=2, toned_share=0.0)
    result = await builder.build(request)
    assert result.complete and [p.kind for p in result.accepted] == ["plain"] * 5
    assert all(" tone (" not in _instruction(r) for r in gateway.requests)


async def test_without_plain_candidates_the_set_is_k_toned() -> None:
    builder, gateway, _ = _builder()
    request = ParaphraseRequest(question=QUESTION, k=5, seed=2, plain_per_round=0)
    result = await builder.build(request)
    assert result.complete and [p.kind for p in result.accepted] == ["toned"] * 5
    assert all(" tone (" in _instruction(r) for r in gateway.requests)


async def test_the_candidate_cap_stops_with_a_reason() -> None:
    builder, gateway, _ = _builder(accept=lambda text: text.endswith(" 0"))
    result = await builder.build(ParaphraseRequest(question=QUESTION, k=5, max_candidates=30))
    assert not result.complete
    assert result.candidates_generated == 30 and len(gateway.requests) == 30
    assert result.rounds == 2  # 22, then the 8 left under the cap
    assert "candidate cap of 30" in (result.incomplete_reason or "")
    assert len(result.accepted) == 1


async def test_the_time_budget_stops_with_a_reason() -> None:
    builder, _, _ = _builder(accept=lambda _: False, latency_s=0.02)
    started = time.monotonic()
    request = ParaphraseRequest(
        question=QUESTION, k=3, time_budget_s=0.25, plain_per_round=4, toned_per_round=2
    )
    result = await builder.build(request)
    elapsed = time.monotonic() - started
    assert not result.complete and result.accepted == []
    assert "time budget of 0.25 s" in (result.incomplete_reason or "")
    assert result.rounds >= 2
    assert elapsed < 1.5  # stops near the budget, not after the candidate cap
    assert result.candidates_generated < 120


async def test_requests_still_running_at_the_budget_are_cancelled_and_counted() -> None:
    builder, gateway, _ = _builder(latency_s=1.0)
    result = await builder.build(ParaphraseRequest(question=QUESTION, k=3, time_budget_s=0.2))
    assert not result.complete and result.candidates_generated == 0
    assert "22 generation request(s) cancelled at the time budget" in result.generation_failures
    assert "time budget" in (result.incomplete_reason or "")
    # only the first four were sent; the others were dropped before reaching the gateway
    assert len(gateway.requests) == 4 and gateway.max_inflight == 4


async def test_generation_concurrency_bounds_the_requests_in_flight() -> None:
    gateway = FakeGateway(_distinct, latency_s=0.01)
    builder = ParaphraseBuilder(gateway, FakeVerifier(), generation_concurrency=2)
    result = await builder.build(ParaphraseRequest(question=QUESTION, k=3, seed=0))
    assert result.complete and len(gateway.requests) == 22
    assert gateway.max_inflight == 2


async def test_a_seed_makes_hints_tones_and_sampling_reproducible() -> None:
    def choices(gateway: FakeGateway) -> list[tuple[str, int | None, int]]:
        return [(_instruction(r), r.seed, r.sample_index) for r in gateway.requests]

    runs = []
    for seed in (7, 7, 8):
        builder, gateway, _ = _builder()
        result = await builder.build(ParaphraseRequest(question=QUESTION, seed=seed))
        assert result.seed == seed
        runs.append(choices(gateway))
    assert runs[0] == runs[1] != runs[2]
    assert len({index for _, _, index in runs[0]}) == 22  # every request differs
    assert len({instruction for instruction, _, _ in runs[0]}) > 5


async def test_duplicates_and_empty_lines_are_rejected_without_verification() -> None:
    def responder(request: GenerateRequest) -> str:
        if request.sample_index == 0:
            return f'"{QUESTION.upper()}"'
        if request.sample_index in (1, 2):
            return "Tom buys five more apples: how many now?"
        if request.sample_index == 3:
            return "   "
        return _distinct(request)

    builder, _, verifier = _builder(responder)
    result = await builder.build(ParaphraseRequest(question=QUESTION, k=3, seed=0))
    stages = {r.sample_index: r.stage for r in result.rejected}
    assert stages == {0: "duplicate", 2: "duplicate", 3: "clean"}
    verified = verifier.requests[0].candidates
    assert QUESTION.upper() not in verified and len(verified) == 19


async def test_generator_failures_are_recorded_not_dropped() -> None:
    def responder(request: GenerateRequest):  # type: ignore[no-untyped-def]
        if request.sample_index % 2:
            return gateway_error(503, "rate_limited", "slow down")
        return _distinct(request)

    builder, _, _ = _builder(responder)
    result = await builder.build(ParaphraseRequest(question=QUESTION, k=3, seed=0))
    assert result.complete
    assert len(result.generation_failures) == 11
    assert "rate_limited" in result.generation_failures[0]
    assert result.candidates_generated == 11


async def test_a_generator_that_always_fails_stops_with_its_reason() -> None:
    builder, _, _ = _builder(lambda _: gateway_error(502, "upstream_error", "model crashed"))
    result = await builder.build(ParaphraseRequest(question=QUESTION, k=3))
    assert not result.complete and result.rounds == 1
    assert "upstream_error" in (result.incomplete_reason or "")


async def test_model_calls_sum_the_generators_calls_and_the_judges() -> None:
    def responder(request: GenerateRequest) -> GenerateResponse | ServiceCallError:
        if request.sample_index % 7 == 3:
            return gateway_error(503, "rate_limited", "slow down")
        text = _distinct(request)
        usage = Usage(input_tokens=len(user_text(request).split()), output_tokens=len(text.split()))
        reply = response(text)
        return msgspec.structs.replace(reply, usage=usage, cached=request.sample_index % 5 == 0)

    # only every third candidate passes, so it takes several rounds and verify calls
    builder, gateway, verifier = _builder(responder, lambda text: int(text.split()[-1]) % 3 == 0)
    request = ParaphraseRequest(question=QUESTION, k=10, seed=3, cache=False)
    result = await builder.build(request)
    answered = [r for r in gateway.requests if r.sample_index % 7 != 3]
    judged = [response.model_calls for response in verifier.responses]
    assert result.rounds >= 2 and len(answered) < len(gateway.requests)
    assert result.model_calls == ModelCalls(
        calls=len(gateway.requests) + sum(calls.calls for calls in judged),
        cached_calls=sum(r.sample_index % 5 == 0 for r in answered),
        usage=Usage(
            input_tokens=sum(len(user_text(r).split()) for r in answered)
            + sum(calls.usage.input_tokens for calls in judged),
            output_tokens=sum(len(_distinct(r).split()) for r in answered)
            + sum(calls.usage.output_tokens for calls in judged),
        ),
    )
    assert not any(r.cache for r in gateway.requests)
    assert not any(r.cache for r in verifier.requests)


async def test_the_response_cache_is_used_unless_turned_off() -> None:
    builder, gateway, verifier = _builder()
    await builder.build(ParaphraseRequest(question=QUESTION, k=3, seed=0))
    assert all(r.cache for r in gateway.requests) and all(r.cache for r in verifier.requests)


async def test_an_unknown_generator_route_is_the_callers_error() -> None:
    builder, _, _ = _builder(lambda _: gateway_error(404, detail="no route 'gpt-9'"))
    with pytest.raises(UnknownRouteError) as error:
        await builder.build(ParaphraseRequest(question=QUESTION, generator="gpt-9"))
    assert error.value.field == "generator"


async def test_a_failing_verify_service_leaves_the_candidates_unverified_with_the_reason() -> None:
    problem = Problem(title="verify unreachable", status=503, detail="connection refused")
    gateway = FakeGateway(_distinct)
    verifier = FakeVerifier(error=ServiceCallError("verify", None, problem, "http://verify"))
    builder = ParaphraseBuilder(gateway, verifier, verify_retry=Backoff(base_delay_s=0.01))
    result = await builder.build(ParaphraseRequest(question=QUESTION, k=3))
    assert not result.complete and result.accepted == []
    assert len(result.rejected) == 22 and {r.stage for r in result.rejected} == {"unverified"}
    assert "connection refused (after 3 attempts)" in (result.incomplete_reason or "")
    assert len(verifier.requests) == 3  # asked again, with back-off, before giving up
    assert result.semantic_check == ""  # "auto" names no check: none ran


async def test_a_judge_that_fails_on_every_candidate_stops_the_set() -> None:
    # the judge's route is down: rejecting every candidate "on its merits" would spend the cap
    verifier = FakeVerifier(judge_error="judge call failed: unavailable")
    builder = ParaphraseBuilder(FakeGateway(_distinct), verifier)
    result = await builder.build(ParaphraseRequest(question=QUESTION, k=3))
    assert not result.complete and result.rounds == 1 and result.candidates_generated == 22
    assert result.incomplete_reason == (
        "verification failed on every candidate of a round: judge call failed: unavailable"
    )
    # rejected because the judge failed, not on their merits
    assert {r.stage for r in result.rejected} == {"unverified"}
    assert {r.reason for r in result.rejected} == {"judge call failed: unavailable"}


async def test_a_round_with_one_judged_candidate_goes_on() -> None:
    builder, _, _ = _builder(accept=lambda text: text.endswith(" 0"))
    result = await builder.build(ParaphraseRequest(question=QUESTION, k=3, max_candidates=44))
    assert result.incomplete_reason is not None and "candidate cap" in result.incomplete_reason


async def test_verify_is_not_asked_again_past_the_time_budget() -> None:
    problem = Problem(title="verify unreachable", status=503, detail="connection refused")
    verifier = FakeVerifier(error=ServiceCallError("verify", 503, problem, "http://verify"))
    retry = Backoff(base_delay_s=60.0)  # a back-off that would end past the budget
    builder = ParaphraseBuilder(FakeGateway(_distinct), verifier, verify_retry=retry)
    request = ParaphraseRequest(question=QUESTION, k=3, time_budget_s=5.0)
    result = await builder.build(request)
    assert not result.complete and len(verifier.requests) == 1
    assert "connection refused (after 1 attempt)" in (result.incomplete_reason or "")


@pytest.mark.parametrize("status", [503, 429, None])
async def test_a_verify_service_that_recovers_verifies_the_round(status: int | None) -> None:
    problem = Problem(title="verify busy", status=status or 503, detail="try again")
    error = ServiceCallError("verify", status, problem, "http://verify")
    verifier = FakeVerifier(error=error, fail_first=2)
    builder = ParaphraseBuilder(
        FakeGateway(_distinct), verifier, verify_retry=Backoff(base_delay_s=0.01)
    )
    result = await builder.build(ParaphraseRequest(question=QUESTION, k=3))
    assert result.complete and len(result.accepted) == 3
    assert len(verifier.requests) == 3 and not result.generation_failures


async def test_verify_refusing_the_settings_is_the_callers_error() -> None:
    problem = Problem(title="Unknown judge model", status=422, detail="no route")
    verifier = FakeVerifier(error=ServiceCallError("verify", 422, problem, "http://verify"))
    with pytest.raises(VerifyRejectedError):
        await ParaphraseBuilder(FakeGateway(_distinct), verifier).build(
            ParaphraseRequest(question=QUESTION)
        )


async def test_an_italian_question_is_paraphrased_in_italian() -> None:
    builder, gateway, _ = _builder()
    result = await builder.build(
        ParaphraseRequest(question="Quanti anni aveva Garibaldi quando è morto?", k=2)
    )
    assert result.language == "it"
    assert all("Write the rewritten question in Italian." in user_text(r) for r in gateway.requests)
    english, gateway_en, _ = _builder()
    await english.build(ParaphraseRequest(question=QUESTION, k=2))
    assert all(
        "Write the rewritten question in English." in user_text(r) for r in gateway_en.requests
    )
