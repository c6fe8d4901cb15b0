"""The round logic of docs/method.md §1.1 with a stand-in gateway and verify service: several
candidates a generator call, verified as each call answers, a round stopped once the set is
full, and the reasons of a round's rejections told to the next round."""

from __future__ import annotations

import asyncio
import re
import time

import msgspec
import pytest

from steadfast.services.perturb.domain.errors import (
    UnknownRouteError,
    UpstreamUnavailable,
    VerifyRejectedError,
)
from steadfast.services.perturb.domain.paraphrase_rounds import (
    CallSpec,
    Progress,
    feedback_of,
    next_temperature,
    rejected_candidate,
    targets,
)
from steadfast.services.perturb.domain.paraphrasing import ParaphraseBuilder
from steadfast.services.perturb.domain.prompts import (
    FEEDBACK,
    HINTS,
    MOST_ACCEPTED_SHOWN,
    PARAPHRASE_PROMPT_VERSION,
    TONES,
    paraphrase_messages,
)
from steadfast.services.perturb.domain.words_to_replace import words_to_replace
from steadfast.shared.backoff import Backoff
from steadfast.shared.contracts.base import Problem
from steadfast.shared.contracts.gateway import GenerateRequest, GenerateResponse, ModelCalls, Usage
from steadfast.shared.contracts.perturb import GivenParaphrase, ParaphraseRequest
from steadfast.shared.contracts.verify import (
    CandidateVerdict,
    VerifyOptions,
    VerifyRequest,
    VerifyResponse,
    VerifyThresholds,
)
from steadfast.shared.http_client import ServiceCallError
from tests.unit.perturb.fakes import FakeVerifier
from tests.unit.verify.fakes import FakeGateway, gateway_error, response, user_text

QUESTION = "How many apples does Tom have after buying five more?"


def _instruction(request: GenerateRequest) -> str:
    match = re.search(r"Style: (.*)", user_text(request))
    assert match
    return match.group(1)


def _count(request: GenerateRequest) -> int:
    match = re.search(r"Rewordings: (\d+)", user_text(request))
    assert match
    return int(match.group(1))


def _is_toned(request: GenerateRequest) -> bool:
    return " tone (" in _instruction(request)


def _distinct(request: GenerateRequest) -> str:
    """The numbered list asked for: a different candidate on every line, naming its kind,
    its call and its line (``plain rewording 3 2``)."""
    kind = "toned" if _is_toned(request) else "plain"
    lines = (
        f"{n}. {kind} rewording {request.sample_index} {n}" for n in range(1, _count(request) + 1)
    )
    return "\n".join(lines)


def _builder(responder=_distinct, accept=lambda _: True, latency_s=0.0, **options):  # type: ignore[no-untyped-def]
    gateway = FakeGateway(responder, latency_s)
    verifier = FakeVerifier(accept)
    return ParaphraseBuilder(gateway, verifier, **options), gateway, verifier


def _candidates(verifier: FakeVerifier) -> list[str]:
    return [text for request in verifier.requests for text in request.candidates]


def test_targets_round_up() -> None:
    assert targets(10, 0.7, 0.4) == (7, 4)
    assert targets(3, 0.7, 0.4) == (3, 2)
    assert targets(1, 0.7, 0.4) == (1, 1)


async def test_a_call_writes_several_candidates_and_the_round_stops_once_the_set_is_full() -> None:
    builder, gateway, verifier = _builder()
    result = await builder.build(ParaphraseRequest(question=QUESTION, k=10, seed=1))
    assert result.complete and result.incomplete_reason is None and result.rounds == 1
    # 14 plain and 8 toned candidates, five a call: calls of 5, 5, 4 plain and 5, 3 toned
    assert [_count(r) for r in gateway.requests] == [5, 5, 4, 5, 3]
    assert [_is_toned(r) for r in gateway.requests] == [False] * 3 + [True] * 2
    assert result.generator_calls == 5
    # the set was full after the first toned call: the last call's candidates were never
    # verified, and each call was verified on its own, as it answered
    assert len(verifier.requests) == 4 and all(len(r.candidates) <= 5 for r in verifier.requests)
    assert result.candidates_generated == 19
    kinds = [p.kind for p in result.accepted]
    assert kinds == ["plain"] * 7 + ["toned"] * 3
    for paraphrase in result.accepted:
        assert paraphrase.prompt_version == PARAPHRASE_PROMPT_VERSION == "paraphrase-v9"
        assert paraphrase.generator == "local"
        assert (paraphrase.hint in HINTS) == (paraphrase.kind == "plain")
        assert (paraphrase.tone in TONES) == (paraphrase.kind == "toned")
        call, line = map(int, paraphrase.text.split()[-2:])
        assert (paraphrase.sample_index, paraphrase.line) == (call, line)
    # the judge defaults to the generator's route; later calls are checked against earlier ones
    assert {r.judge_model for r in verifier.requests} == {"local"}
    assert verifier.requests[1].accepted == [f"plain rewording 0 {n}" for n in range(1, 6)]


async def test_calls_still_writing_when_the_set_is_full_are_dropped() -> None:
    def responder(request: GenerateRequest) -> str:
        return _distinct(request)

    gateway = FakeGateway(responder)
    original = gateway.generate

    async def slow_after_the_first(request: GenerateRequest) -> GenerateResponse:
        if request.sample_index > 0:
            await asyncio.sleep(30)
        return await original(request)

    gateway.generate = slow_after_the_first  # type: ignore[method-assign]
    builder = ParaphraseBuilder(gateway, FakeVerifier())
    started = time.monotonic()
    request = ParaphraseRequest(question=QUESTION, k=3, seed=0, toned_per_round=0)
    result = await builder.build(request)
    assert result.complete and [p.sample_index for p in result.accepted] == [0, 0, 0]
    assert time.monotonic() - started < 10  # did not wait for the other calls
    assert result.generation_failures == []  # dropped because done, not failed


async def test_one_candidate_a_call_is_still_possible() -> None:
    builder, gateway, _ = _builder()
    request = ParaphraseRequest(question=QUESTION, k=3, seed=0, candidates_per_call=1)
    result = await builder.build(request)
    assert result.complete and all(_count(r) == 1 for r in gateway.requests)
    assert result.generator_calls == len(gateway.requests)


async def test_rounds_continue_until_k_are_accepted_and_ask_only_for_what_is_missing() -> None:
    # only the first line of every call survives verification
    builder, _, verifier = _builder(accept=lambda text: text.endswith(" 1"))
    result = await builder.build(ParaphraseRequest(question=QUESTION, k=10, seed=3))
    assert result.complete and result.rounds >= 2
    # three plain and two toned accepted a round: the toned ones fill what plain left
    assert sorted(p.kind for p in result.accepted) == ["plain"] * 6 + ["toned"] * 4
    assert all(p.text.endswith(" 1") for p in result.accepted)
    assert all(r.stage == "judge" for r in result.rejected)
    # later rounds compare against the paraphrases accepted before
    assert verifier.requests[-1].accepted


async def test_a_round_asks_only_for_the_kind_still_missing() -> None:
    toned_ok = {"yet": False}

    def accept(text: str) -> bool:
        return text.startswith("plain") or toned_ok["yet"]

    builder, gateway, verifier = _builder(accept=accept)
    original_verify = verifier.verify

    async def relent_after_the_first_round(request: VerifyRequest) -> VerifyResponse:
        reply = await original_verify(request)
        if len(verifier.requests) == 5:  # every call of round 1 verified
            toned_ok["yet"] = True
        return reply

    verifier.verify = relent_after_the_first_round  # type: ignore[method-assign]
    result = await builder.build(ParaphraseRequest(question=QUESTION, k=10, seed=5))
    assert result.complete and result.rounds == 2
    second_round = gateway.requests[5:]
    assert second_round and all(_is_toned(r) for r in second_round)
    assert [p.kind for p in result.accepted] == ["plain"] * 7 + ["toned"] * 3


async def test_the_rejections_of_a_round_are_told_to_the_next() -> None:
    rejected_first = {"round": True}

    def responder(request: GenerateRequest) -> str:
        return _distinct(request)

    class LexicalFirst(FakeVerifier):
        async def verify(self, request: VerifyRequest) -> VerifyResponse:
            self.requests.append(request)
            reject = rejected_first["round"]
            results = [
                CandidateVerdict(
                    text=text, accepted=False, deciding_stage="lexical", reason="overlap 0.9"
                )
                if reject
                else CandidateVerdict(text=text, accepted=True)
                for text in request.candidates
            ]
            if reject and len(self.requests) == 2:
                rejected_first["round"] = False
            return VerifyResponse(results=results, semantic_check="off")

    gateway = FakeGateway(responder)
    builder = ParaphraseBuilder(gateway, LexicalFirst())
    request = ParaphraseRequest(
        question=QUESTION, k=3, seed=0, plain_per_round=10, toned_per_round=0
    )
    result = await builder.build(request)
    assert result.complete and result.rounds == 2
    first, second = gateway.requests[:2], gateway.requests[2:]
    assert not any("rejected" in user_text(r) for r in first)
    told = f"Earlier rewordings were rejected: {FEEDBACK['lexical']}"
    assert second and all(told in user_text(r) for r in second)
    assert {p.feedback for p in result.accepted} == {FEEDBACK["lexical"]}
    # a request may turn it off
    quiet, quiet_gateway, _ = _builder(accept=lambda text: text.endswith(" 1"))
    await quiet.build(msgspec.structs.replace(request, feedback=False, k=4))
    assert not any("rejected" in user_text(r) for r in quiet_gateway.requests)


async def test_a_round_of_repeats_makes_the_next_round_hotter_up_to_the_cap() -> None:
    """Rounds of repeats (the same line again, caught without the verify service) raise the
    temperature by the step up to the cap; a round of fresh candidates keeps it."""

    def responder(request: GenerateRequest) -> str:
        if request.temperature < 1.0:  # a cool model writes one line again and again
            return "\n".join(f"{n}. Tom buys five more: how many now?" for n in range(1, 4))
        return _distinct(request)

    builder, gateway, _ = _builder(responder, accept=lambda text: text.endswith(" 1"))
    request = ParaphraseRequest(
        question=QUESTION,
        k=3,
        seed=0,
        plain_per_round=3,
        toned_per_round=0,
        candidates_per_call=3,
        temperature=0.7,
        temperature_step=0.2,
        max_temperature=1.0,
    )
    result = await builder.build(request)
    by_round = [round(r.temperature or 0, 3) for r in gateway.requests]
    assert by_round[:4] == [0.7, 0.9, 1.0, 1.0]  # the cap holds
    assert result.complete and {p.temperature for p in result.accepted} == {1.0}
    # a step of 0 keeps the temperature throughout
    still, still_gateway, _ = _builder(responder, accept=lambda text: text.endswith(" 1"))
    await still.build(msgspec.structs.replace(request, temperature_step=0.0, max_candidates=9))
    assert {r.temperature for r in still_gateway.requests} == {0.7}


def test_a_round_mostly_of_fresh_candidates_keeps_the_temperature() -> None:
    request = ParaphraseRequest(question=QUESTION, temperature=0.8, temperature_step=0.2)
    progress = Progress(3, 3, 0, temperature=0.8)
    spec = CallSpec("plain", 3, 0, 0)
    close = rejected_candidate("x", spec, 1, "lexical", "overlap 0.9")
    judged = rejected_candidate("y", spec, 2, "judge", "no")
    assert next_temperature(request, progress, [close, judged], written=4) == 0.8
    assert next_temperature(request, progress, [close, close, judged], written=4) == 1.0
    assert next_temperature(request, progress, [], written=0) == 0.8
    # a caller's temperature above the cap is never lowered
    hot = msgspec.structs.replace(request, temperature=1.5)
    assert next_temperature(hot, Progress(3, 3, 0, temperature=1.5), [close], 1) == 1.5
    # off by default: the method's one temperature
    default = ParaphraseRequest(question=QUESTION)
    assert next_temperature(default, progress, [close, close], written=2) == 0.8


async def test_without_toned_candidates_the_set_is_k_plain_and_stops_there() -> None:
    builder, gateway, _ = _builder(accept=lambda text: text.endswith(" 1"))
    request = ParaphraseRequest(
        question=QUESTION, k=5, seed=2, plain_per_round=4, toned_per_round=0, max_candidates=40
    )
    result = await builder.build(request)
    assert result.complete and result.incomplete_reason is None
    assert [p.kind for p in result.accepted] == ["plain"] * 5
    # one call of four a round, one accepted each: five rounds, no sixth
    assert result.rounds == 5 and len(gateway.requests) == 5
    assert all(not _is_toned(r) for r in gateway.requests)


async def test_a_toned_share_of_zero_asks_for_plain_candidates_only() -> None:
    builder, gateway, _ = _builder()
    request = ParaphraseRequest(question=QUESTION, k=5, seed=2, toned_share=0.0)
    result = await builder.build(request)
    assert result.complete and [p.kind for p in result.accepted] == ["plain"] * 5
    assert all(not _is_toned(r) for r in gateway.requests)


async def test_without_plain_candidates_the_set_is_k_toned() -> None:
    builder, gateway, _ = _builder()
    request = ParaphraseRequest(question=QUESTION, k=5, seed=2, plain_per_round=0)
    result = await builder.build(request)
    assert result.complete and [p.kind for p in result.accepted] == ["toned"] * 5
    assert all(_is_toned(r) for r in gateway.requests)


async def test_the_candidate_cap_stops_with_a_reason() -> None:
    builder, gateway, _ = _builder(accept=lambda text: text.endswith("0 1"))
    result = await builder.build(ParaphraseRequest(question=QUESTION, k=5, max_candidates=30))
    assert not result.complete
    assert sum(_count(r) for r in gateway.requests) == 30
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


async def test_requests_still_waiting_for_a_slot_at_the_budget_are_not_sent_and_counted() -> None:
    builder, gateway, _ = _builder(latency_s=1.0, generation_concurrency=2)
    started = time.monotonic()
    result = await builder.build(ParaphraseRequest(question=QUESTION, k=3, time_budget_s=0.2))
    elapsed = time.monotonic() - started
    assert not result.complete
    expected = "3 generation request(s) not sent: the time budget ran out while they waited"
    assert any(failure.startswith(expected) for failure in result.generation_failures)
    assert "time budget" in (result.incomplete_reason or "")
    # of five, only the first two were sent, told to stop at the budget, and answered then
    assert len(gateway.requests) == 2 and gateway.max_inflight == 2
    assert all(0 < (r.time_limit_s or 0) <= 0.2 for r in gateway.requests)
    assert elapsed < 0.8


async def test_a_reply_cut_before_its_first_whole_line_is_no_rejection() -> None:
    builder, gateway, verifier = _builder(latency_s=2.0)
    request = ParaphraseRequest(question=QUESTION, k=3, seed=0, time_budget_s=0.05)
    result = await builder.build(request)
    assert gateway.requests and all(r.time_limit_s for r in gateway.requests)
    assert result.candidates_generated == 0 and verifier.requests == []
    assert [r for r in result.rejected if r.stage == "clean"] == []


async def test_a_list_still_being_written_at_the_budget_keeps_its_whole_lines() -> None:
    # each call writes its list evenly over 1 s and is stopped at 0.5 s, halfway through
    builder, gateway, verifier = _builder(latency_s=1.0, accept=lambda _: False)
    request = ParaphraseRequest(
        question=QUESTION,
        k=3,
        seed=0,
        time_budget_s=0.5,
        plain_per_round=6,
        toned_per_round=0,
        candidates_per_call=6,
    )
    started = time.monotonic()
    result = await builder.build(request)
    elapsed = time.monotonic() - started
    assert elapsed < 0.9 and len(gateway.requests) == 1
    written = _distinct(gateway.requests[0])
    half = written[: len(written) // 2]
    whole_lines = [line.split(". ", 1)[1] for line in half.splitlines()[:-1]]
    assert len(whole_lines) >= 2
    # the whole lines were verified; the line cut in the middle was not
    assert _candidates(verifier) == whole_lines
    assert result.candidates_generated == len(whole_lines)
    assert not any(failure for failure in result.generation_failures)


async def test_a_set_out_of_time_says_so_even_when_its_requests_reached_the_cap() -> None:
    # one round asks for every candidate the cap allows; its calls are still out at the budget
    builder, _, _ = _builder(latency_s=1.0)
    request = ParaphraseRequest(
        question=QUESTION, k=3, time_budget_s=0.2, max_candidates=10, candidates_per_call=5
    )
    result = await builder.build(request)
    assert result.candidates_generated == 0
    assert "time budget of 0.2 s" in (result.incomplete_reason or ""), result.incomplete_reason


async def test_what_was_written_by_the_time_budget_is_still_verified() -> None:
    gateway = FakeGateway(_distinct)
    original = gateway.generate

    async def first_call_hangs(request: GenerateRequest) -> GenerateResponse:
        if request.sample_index == 0:
            await asyncio.sleep(30)
        return await original(request)

    gateway.generate = first_call_hangs  # type: ignore[method-assign]
    verifier = FakeVerifier()
    request = ParaphraseRequest(question=QUESTION, k=10, seed=0, time_budget_s=0.3)
    builder = ParaphraseBuilder(gateway, verifier, generation_concurrency=8)
    result = await builder.build(request)
    assert "1 generation request(s) cancelled at the time budget" in result.generation_failures
    # calls 1 and 2 (plain) and 3 (toned) filled the set; call 4 was not needed
    assert {p.sample_index for p in result.accepted + result.surplus} == {1, 2, 3}
    assert result.complete


async def test_generation_concurrency_bounds_the_requests_in_flight() -> None:
    builder, gateway, _ = _builder(latency_s=0.01, generation_concurrency=2)
    result = await builder.build(ParaphraseRequest(question=QUESTION, k=10, seed=0))
    assert result.complete and gateway.max_inflight == 2


async def test_a_seed_makes_hints_tones_and_sampling_reproducible() -> None:
    def choices(gateway: FakeGateway) -> list[tuple[str, int | None, int]]:
        return [(_instruction(r), r.seed, r.sample_index) for r in gateway.requests]

    runs = []
    for seed in (7, 7, 8, 9):
        builder, gateway, _ = _builder(accept=lambda text: text.endswith(" 1"))
        result = await builder.build(ParaphraseRequest(question=QUESTION, k=6, seed=seed))
        assert result.seed == seed
        runs.append(choices(gateway))
    assert runs[0] == runs[1] != runs[2]
    assert len({index for _, _, index in runs[0]}) == len(runs[0])  # every call differs
    assert len({instruction for run in runs for instruction, _, _ in run}) > 5


async def test_duplicates_and_empty_replies_are_rejected_without_verification() -> None:
    def responder(request: GenerateRequest) -> str:
        if request.sample_index == 0:
            return f'1. "{QUESTION.upper()}"\n2. Tom buys five more apples: how many now?'
        if request.sample_index == 1:
            return "Here they are:\n1. Tom buys five more apples: how many now?"
        if request.sample_index == 2:
            return "   "
        return _distinct(request)

    builder, _, verifier = _builder(responder)
    result = await builder.build(ParaphraseRequest(question=QUESTION, k=10, seed=0))
    stages = sorted((r.sample_index, r.stage) for r in result.rejected)
    assert stages == [(0, "duplicate"), (1, "duplicate"), (2, "clean")]
    verified = _candidates(verifier)
    assert QUESTION.upper() not in verified and "Here they are:" not in verified
    assert verified[0] == "Tom buys five more apples: how many now?"


async def test_generator_failures_are_recorded_not_dropped() -> None:
    def responder(request: GenerateRequest):  # type: ignore[no-untyped-def]
        if request.sample_index % 2:
            return gateway_error(503, "rate_limited", "slow down")
        return _distinct(request)

    builder, _, _ = _builder(responder)
    result = await builder.build(ParaphraseRequest(question=QUESTION, k=10, seed=0))
    assert result.complete
    assert len(result.generation_failures) >= 2
    assert all("rate_limited" in failure for failure in result.generation_failures)


@pytest.mark.parametrize(
    "failure",
    [
        ServiceCallError("gateway", None, Problem(title="unreachable", status=503), "http://g"),
        gateway_error(503, "unavailable", "cannot connect: refused", retry_after_s=5.0),
    ],
    ids=["gateway unreachable", "model server unreachable"],
)
async def test_a_generator_down_for_now_is_no_incomplete_set_but_a_failure_for_now(
    failure: ServiceCallError,
) -> None:
    builder, _, _ = _builder(lambda _: failure)
    with pytest.raises(UpstreamUnavailable, match="generator failed on every request"):
        await builder.build(ParaphraseRequest(question=QUESTION, k=3))


async def test_a_generator_refused_for_good_stops_the_set_with_its_reason() -> None:
    # "unavailable" without a Retry-After: a wrong key or model name, which waiting cannot mend
    builder, _, _ = _builder(lambda _: gateway_error(503, "unavailable", "HTTP 401: bad key"))
    result = await builder.build(ParaphraseRequest(question=QUESTION, k=3))
    assert not result.complete and "bad key" in (result.incomplete_reason or "")


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

    builder, gateway, verifier = _builder(responder, lambda text: text.endswith(" 1"))
    request = ParaphraseRequest(question=QUESTION, k=10, seed=3, cache=False)
    result = await builder.build(request)
    answered = [r for r in gateway.requests if r.sample_index % 7 != 3]
    judged = [reply.model_calls for reply in verifier.responses]
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


async def test_a_verify_service_out_of_reach_is_no_incomplete_set_but_a_failure_for_now() -> None:
    # an incomplete set would be stored as final by an evaluation: its answers lost for good
    problem = Problem(title="verify unreachable", status=503, detail="connection refused")
    gateway = FakeGateway(_distinct)
    verifier = FakeVerifier(error=ServiceCallError("verify", None, problem, "http://verify"))
    builder = ParaphraseBuilder(gateway, verifier, verify_retry=Backoff(base_delay_s=0.01))
    with pytest.raises(UpstreamUnavailable, match=r"connection refused \(after 3 attempts\)"):
        await builder.build(ParaphraseRequest(question=QUESTION, k=3))
    assert len(verifier.requests) == 3  # asked again, with back-off, before giving up


async def test_a_failing_verify_service_leaves_the_candidates_unverified_with_the_reason() -> None:
    problem = Problem(title="Internal Server Error", status=500, detail="a bug")
    gateway = FakeGateway(_distinct)
    verifier = FakeVerifier(error=ServiceCallError("verify", 500, problem, "http://verify"))
    builder = ParaphraseBuilder(gateway, verifier, verify_retry=Backoff(base_delay_s=0.01))
    result = await builder.build(ParaphraseRequest(question=QUESTION, k=3))
    assert not result.complete and result.accepted == []
    assert len(result.rejected) == 5 and {r.stage for r in result.rejected} == {"unverified"}
    assert "a bug (after 3 attempts)" in (result.incomplete_reason or "")
    assert len(verifier.requests) == 3  # asked again, with back-off, before giving up
    assert result.semantic_check == ""  # "auto" names no check: none ran


async def test_a_judge_that_fails_on_every_candidate_stops_the_set() -> None:
    verifier = FakeVerifier(judge_error="judge call failed: unavailable")
    builder = ParaphraseBuilder(FakeGateway(_distinct), verifier)
    result = await builder.build(ParaphraseRequest(question=QUESTION, k=3))
    assert not result.complete and result.rounds == 1 and result.candidates_generated == 22
    assert result.incomplete_reason == (
        "verification failed on every candidate of a round: judge call failed: unavailable"
    )
    assert {r.stage for r in result.rejected} == {"unverified"}
    assert {r.reason for r in result.rejected} == {"judge call failed: unavailable"}


async def test_verify_is_not_asked_again_past_the_time_budget() -> None:
    problem = Problem(title="verify unreachable", status=503, detail="connection refused")
    verifier = FakeVerifier(error=ServiceCallError("verify", 503, problem, "http://verify"))
    retry = Backoff(base_delay_s=60.0)  # a back-off that would end past the budget
    builder = ParaphraseBuilder(FakeGateway(_distinct), verifier, verify_retry=retry)
    request = ParaphraseRequest(question=QUESTION, k=3, time_budget_s=5.0)
    with pytest.raises(UpstreamUnavailable, match=r"connection refused \(after 1 attempt\)"):
        await builder.build(request)
    assert len(verifier.requests) == 1


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
    assert all("Write the rewordings in Italian." in user_text(r) for r in gateway.requests)
    english, gateway_en, _ = _builder()
    await english.build(ParaphraseRequest(question=QUESTION, k=2))
    assert all("Write the rewordings in English." in user_text(r) for r in gateway_en.requests)


# ---- paraphrases given with the request ----------------------------------------------------

GIVEN = [
    "After buying five more apples, how many does Tom have?",
    GivenParaphrase(
        text="Tom buys five more apples: how many has he now?", kind="toned", tone="casual"
    ),
    "How many pears does Tom have after buying five more?",
]


async def test_given_paraphrases_are_verified_and_used_instead_of_generated_ones() -> None:
    builder, gateway, verifier = _builder(accept=lambda text: "pears" not in text)
    request = ParaphraseRequest(question=QUESTION, k=10, given=GIVEN, seed=3)
    result = await builder.build(request)
    assert gateway.requests == []  # nothing generated
    assert result.generator_calls == result.candidates_generated == result.rounds == 0
    # one verify call with every given paraphrase; the one that changes the fruit fails
    assert [r.candidates for r in verifier.requests] == [
        [GIVEN[0], GIVEN[1].text, GIVEN[2]]  # type: ignore[union-attr]
    ]
    assert [(p.text, p.kind, p.tone, p.line) for p in result.accepted] == [
        (GIVEN[0], "plain", None, 1),
        (GIVEN[1].text, "toned", "casual", 2),  # type: ignore[union-attr]
    ]
    assert all(p.provenance == "given" and p.generator == "" for p in result.accepted)
    assert [(r.text, r.stage, r.provenance) for r in result.rejected] == [
        (GIVEN[2], "judge", "given")
    ]
    # k does not apply: the set is the given paraphrases that pass, and says one failed
    assert not result.complete
    assert result.incomplete_reason == "1 of 3 given paraphrases rejected"
    assert result.verification is not None and result.verification.provenance == "given"
    assert result.model_calls.calls == 6  # the judge's: two orders a candidate


async def test_given_paraphrases_that_all_pass_make_a_complete_set_in_their_order() -> None:
    builder, _, _ = _builder()
    given = ["Tom buys five more apples; how many has he?", "After five more, Tom has how many?"]
    result = await builder.build(ParaphraseRequest(question=QUESTION, k=1, given=given))
    assert result.complete and result.incomplete_reason is None
    assert [p.text for p in result.accepted] == given


async def test_given_paraphrases_may_be_taken_unverified_but_repeats_are_still_dropped() -> None:
    builder, gateway, verifier = _builder(accept=lambda _: False)
    given = ["How many pears does Tom have?", QUESTION, "How many pears does Tom have?"]
    request = ParaphraseRequest(question=QUESTION, given=given, verify_given=False)
    result = await builder.build(request)
    assert gateway.requests == verifier.requests == []
    assert [p.text for p in result.accepted] == ["How many pears does Tom have?"]
    assert [r.stage for r in result.rejected] == ["duplicate", "duplicate"]
    assert result.verification is not None
    assert (result.verification.provenance, result.verification.stages) == ("given", [])
    assert result.incomplete_reason == "2 of 3 given paraphrases rejected"


async def test_given_paraphrases_the_verify_service_cannot_check_are_unverified_rejections() -> (
    None
):
    problem = Problem(title="Bad Gateway", status=502, detail="down")
    verifier = FakeVerifier(error=ServiceCallError("verify", 502, problem, "http://verify"))
    builder = ParaphraseBuilder(
        FakeGateway(_distinct), verifier, verify_retry=Backoff(attempts=2, base_delay_s=0.01)
    )
    result = await builder.build(ParaphraseRequest(question=QUESTION, given=GIVEN[:1]))
    assert result.accepted == [] and [r.stage for r in result.rejected] == ["unverified"]
    assert result.incomplete_reason is not None
    assert result.incomplete_reason.startswith("verification failed: verify (502)")
    assert len(verifier.requests) == 2  # asked again before giving up


def test_a_round_of_form_rejections_tells_the_next_round_to_ask_the_question_itself() -> None:
    spec = CallSpec(kind="plain", count=3, sample_index=0, seed=0, hint=HINTS[0])
    rejected = [
        rejected_candidate("How can I find it?", spec, 1, "form", "asks how to find the answer"),
        rejected_candidate("Where could one look it up?", spec, 2, "form", "asks where"),
        rejected_candidate("What is it, Tom?", spec, 3, "lexical", "overlap 0.9"),
    ]
    told = feedback_of(rejected)
    assert told == f"{FEEDBACK['form']}; {FEEDBACK['lexical']}"
    assert "how or where to find the answer" in FEEDBACK["form"]
    assert feedback_of([]) is None


def test_direction_and_numbers_feedback_names_the_words_at_fault() -> None:
    """The most frequent reason of a stage whose reasons name words is told as it is, so the
    generator learns what to keep ("capital"), not only that the meaning changed."""
    spec = CallSpec(kind="plain", count=3, sample_index=0, seed=0, hint=HINTS[0])
    city = "asks 'largest city' where the original asks 'capital'"
    rejected = [
        rejected_candidate("What is the largest city in Australia?", spec, 1, "direction", city),
        rejected_candidate("Which is Australia's largest city?", spec, 2, "direction", city),
        rejected_candidate("What is the capital of the country?", spec, 3, "direction", "drops"),
        rejected_candidate(
            "How hot is boiling water?",
            spec,
            4,
            "numbers",
            'numbers differ from the original: drops the answer\'s unit "degrees Celsius"',
        ),
    ]
    assert feedback_of(rejected) == (
        f"{FEEDBACK['direction']} (one rewording: {city}); {FEEDBACK['numbers']} (one "
        'rewording: drops the answer\'s unit "degrees Celsius")'
    )


def test_the_generator_is_told_the_count_first_and_the_question_last() -> None:
    """After a message ending "Rewordings: 3" the local model sometimes replied "3" alone;
    every user message, the example's too, ends with the question instead."""
    messages = paraphrase_messages(
        "Who wrote Hamlet?",
        count=3,
        hint="compress slightly",
        tone=None,
        language="Italian",
        feedback="too close to the original's words",
    )
    users = [m.content for m in messages if m.role == "user"]
    assert len(users) == 2
    assert all(text.startswith("Rewordings: 3\nStyle: ") for text in users)
    assert users[-1].endswith("\nQuestion to rewrite: Who wrote Hamlet?")
    assert "rejected: too close" in users[-1] and "in Italian." in users[-1]


async def test_a_later_call_names_the_paraphrases_already_accepted() -> None:
    """New rewordings must differ from the accepted ones as from the question (METHOD's
    lexical filter): each call is told the set's paraphrases so far."""
    builder, gateway, _ = _builder(accept=lambda text: text.endswith(" 1"))
    request = ParaphraseRequest(
        question=QUESTION, k=3, seed=2, plain_per_round=4, toned_per_round=0, max_candidates=40
    )
    result = await builder.build(request)
    assert result.complete and len(gateway.requests) == 3  # one accepted a call
    first, second, third = (user_text(r) for r in gateway.requests)
    assert "Already accepted" not in first
    one, two, _ = (paraphrase.text for paraphrase in result.accepted)
    assert f'"{one}"' in second and two not in second
    assert f'"{one}"; "{two}"' in third


def test_only_the_latest_accepted_paraphrases_are_named() -> None:
    accepted = [f"Rewording number {n}?" for n in range(1, 7)]
    messages = paraphrase_messages(
        QUESTION, count=3, hint="compress slightly", tone=None, language=None, accepted=accepted
    )
    request = messages[-1].content
    shown = [text for text in accepted if f'"{text}"' in request]
    assert shown == accepted[-MOST_ACCEPTED_SHOWN:]


async def test_the_words_to_replace_follow_the_requests_overlap_threshold() -> None:
    builder, gateway, _ = _builder()
    strict = VerifyOptions(thresholds=VerifyThresholds(overlap=0.5))
    request = ParaphraseRequest(question=QUESTION, k=1, seed=0, verify=strict)
    await builder.build(request)
    named = words_to_replace(QUESTION, 0.5)
    assert len(named) > len(words_to_replace(QUESTION, 0.8))
    listed = ", ".join(f'"{word}"' for word in named)
    assert all(
        f"keeping every name and number: {listed}\n" in user_text(r) for r in gateway.requests
    )


def _sampled(request: GenerateRequest) -> GenerateResponse:
    """Each of the request's ``n`` samples a distinct numbered list (``plain sample 0 1 2``:
    kind, request, sample, line)."""
    kind = "toned" if _is_toned(request) else "plain"
    samples = [
        "\n".join(
            f"{n}. {kind} sample {request.sample_index} {s} {n}"
            for n in range(1, _count(request) + 1)
        )
        for s in range(request.n)
    ]
    return msgspec.structs.replace(response(samples[0]), samples=samples if request.n > 1 else None)


async def test_calls_of_one_kind_go_as_one_request_of_several_samples() -> None:
    builder, gateway, verifier = _builder(_sampled)
    request = ParaphraseRequest(question=QUESTION, k=10, seed=1, samples_per_request=3)
    result = await builder.build(request)
    # 14 plain, five a call: two calls as one request of 2 samples, then 4 alone; 8 toned: 5, 3
    shapes = [(_count(r), r.n, _is_toned(r)) for r in gateway.requests]
    assert shapes == [(5, 2, False), (4, 1, False), (5, 1, True), (3, 1, True)]
    # five calls (lists) in four requests; a request of two samples takes two call indexes
    assert result.generator_calls == 5 and result.rounds == 1
    assert [r.sample_index for r in gateway.requests] == [0, 2, 3, 4]
    assert [r.seed for r in gateway.requests] == [1, 3, 4, 5]
    # both samples of the first request were verified together, numbered on through them
    assert verifier.requests[0].candidates == [
        f"plain sample 0 {s} {n}" for s in (0, 1) for n in range(1, 6)
    ]
    first_request = [p for p in result.accepted if p.sample_index == 0]
    assert [p.line for p in first_request] == list(range(1, 8))[: len(first_request)]
    assert len({p.hint for p in first_request}) == 1  # one prompt, one style
    assert result.complete and result.candidates_generated == 10 + 4 + 5


async def test_the_demo_round_is_two_requests_with_samples() -> None:
    builder, gateway, _ = _builder(_sampled)
    request = ParaphraseRequest(
        question=QUESTION,
        k=3,
        seed=1,
        plain_per_round=6,
        toned_per_round=3,
        candidates_per_call=3,
        samples_per_request=3,
    )
    result = await builder.build(request)
    assert [(_count(r), r.n) for r in gateway.requests] == [(3, 2), (3, 1)]
    assert result.complete and result.generator_calls == 3


async def test_an_empty_sample_is_recorded_and_the_others_are_kept() -> None:
    def one_empty(request: GenerateRequest) -> GenerateResponse:
        written = _sampled(request)
        if request.n == 1:
            return written
        samples = ["", *(written.samples or [])[1:]]
        return msgspec.structs.replace(written, text=samples[0], samples=samples)

    builder, _, _ = _builder(one_empty)
    request = ParaphraseRequest(
        question=QUESTION, k=3, seed=1, toned_per_round=0, samples_per_request=2
    )
    result = await builder.build(request)
    assert result.complete
    assert [p.text for p in result.accepted] == [f"plain sample 0 1 {n}" for n in (1, 2, 3)]
    empty = [r for r in result.rejected if r.stage == "clean"]
    assert [(r.text, r.reason) for r in empty] == [("", "no candidate in the reply")]


ROMEO = "Who wrote the play Romeo and Juliet?"


def _naming_the_answer(request: GenerateRequest) -> str:
    """The first call names the answer in its first line (as the local model did in a demo
    run: "What person wrote the work of Shakespeare's Romeo and Juliet?"); the others do not."""
    lines = [
        f"{n}. Whose pen gave us Romeo and Juliet, version {request.sample_index} {n}?"
        for n in range(1, _count(request) + 1)
    ]
    if request.sample_index == 0:
        lines[0] = "1. What person wrote the work of Shakespeare's Romeo and Juliet?"
    return "\n".join(lines)


async def test_a_candidate_stating_one_of_the_answers_is_rejected_before_verification() -> None:
    builder, _, verifier = _builder(_naming_the_answer)
    request = ParaphraseRequest(
        question=ROMEO, k=3, seed=1, answers=["William Shakespeare", "Shakespeare"]
    )
    result = await builder.build(request)
    leak = "What person wrote the work of Shakespeare's Romeo and Juliet?"
    assert result.complete and len(result.accepted) == 3
    assert leak not in [p.text for p in result.accepted]
    assert leak not in _candidates(verifier)  # no judge call spent on it
    [rejected] = [r for r in result.rejected if r.text == leak]
    assert rejected.stage == "states_answer"
    assert rejected.reason == "states the answer ('shakespeare'): it gives the answer away"
    # the same candidate without the answers to screen for is verified, and accepted
    builder, _, _ = _builder(_naming_the_answer)
    unscreened = await builder.build(ParaphraseRequest(question=ROMEO, k=3, seed=1))
    assert leak in [p.text for p in unscreened.accepted]


async def test_an_answer_the_question_itself_names_or_a_number_is_not_screened_for() -> None:
    question = "Which city, Canberra or Sydney, is the capital of Australia? Give 1 name."
    given = ["Of Canberra and Sydney, which is Australia's capital? Name 1 city."]
    builder, _, verifier = _builder()
    request = ParaphraseRequest(question=question, given=given, answers=["Canberra", "1"])
    result = await builder.build(request)
    assert [p.text for p in result.accepted] == given and result.rejected == []
    assert _candidates(verifier) == given


async def test_given_paraphrases_are_screened_for_the_answers_unless_taken_unverified() -> None:
    given = ["Who is the author of Romeo and Juliet?", "Did Shakespeare write Romeo and Juliet?"]
    builder, _, verifier = _builder()
    request = ParaphraseRequest(question=ROMEO, given=given, answers=["Shakespeare"])
    result = await builder.build(request)
    assert [p.text for p in result.accepted] == given[:1]
    assert [(r.text, r.stage) for r in result.rejected] == [(given[1], "states_answer")]
    assert _candidates(verifier) == given[:1]
    taken = await _builder()[0].build(msgspec.structs.replace(request, verify_given=False))
    assert [p.text for p in taken.accepted] == given


def test_an_answer_told_as_feedback_names_the_stage() -> None:
    rejected = [
        rejected_candidate(
            "Did Shakespeare write it?", CallSpec("plain", 3, 0, 0), 1, "states_answer", "states it"
        )
    ]
    assert feedback_of(rejected) == "one named the answer; never name or hint at the answer"


def test_a_repeat_of_a_rejected_rewording_is_told_as_that_rejection() -> None:
    """A generator that writes one refused rewording again and again (fifteen times in a demo
    run) is told why it was refused, not only that it repeats itself."""
    spec = CallSpec(kind="plain", count=3, sample_index=0, seed=0, hint=HINTS[0])
    unit = 'numbers differ from the original: drops the answer\'s unit "degrees Celsius"'
    dropped = "What temperature does water boil at sea level?"
    earlier = [rejected_candidate(dropped, spec, 1, "numbers", unit)]
    repeat = "same as the original or an earlier candidate"
    this_round = [
        rejected_candidate(dropped, spec, 1, "duplicate", repeat),
        rejected_candidate(dropped.upper(), spec, 2, "duplicate", repeat),
        rejected_candidate("What is it?", spec, 3, "lexical", "overlap 0.9"),
        rejected_candidate("What is that?", spec, 4, "lexical", "overlap 0.9"),
        rejected_candidate(QUESTION, spec, 5, "duplicate", repeat),  # of the question
    ]
    assert feedback_of(this_round, earlier) == (
        f'{FEEDBACK["numbers"]} (one rewording: drops the answer\'s unit "degrees Celsius"); '
        f"{FEEDBACK['lexical']}"
    )
    # without the earlier rounds they are repeats, as before
    assert feedback_of(this_round) == f"{FEEDBACK['duplicate']}; {FEEDBACK['lexical']}"


async def test_a_repeat_names_why_its_first_copy_was_rejected_and_the_next_round_hears_it() -> None:
    refused = "Tom buys five more apples: how many now?"

    def responder(request: GenerateRequest) -> str:
        return f"1. {refused}\n2. plain rewording {request.sample_index}"

    builder, gateway, _ = _builder(responder, accept=lambda text: text != refused)
    request = ParaphraseRequest(
        question=QUESTION, k=4, seed=0, plain_per_round=2, toned_per_round=0
    )
    result = await builder.build(request)
    repeats = [r for r in result.rejected if r.stage == "duplicate"]
    assert repeats, "the refused rewording was written again"
    assert all(
        r.reason == "same as the original or an earlier candidate, rejected at stage judge: "
        "judge answered no"
        for r in repeats
    )
    later = [user_text(r) for r in gateway.requests[1:]]
    assert later and all(f"rejected: {FEEDBACK['judge']}" in text for text in later)
    assert not any(FEEDBACK["duplicate"] in text for text in later)
