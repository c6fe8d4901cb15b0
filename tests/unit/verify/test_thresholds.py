"""The judge's threshold (calibrated, configured, METHOD's default) and the audit's question."""

from __future__ import annotations

import math

import pytest

from steadfast.services.verify.adapters.thresholds import GatewayThresholds
from steadfast.services.verify.domain.judge import Judge, JudgeUnavailable
from steadfast.services.verify.domain.pipeline import verify
from steadfast.services.verify.domain.prompts import AUDIT, EQUIVALENCE
from steadfast.shared.contracts.gateway import GenerateRequest
from steadfast.shared.contracts.verify import VerifyRequest, VerifyStages, VerifyThresholds
from tests.unit.verify.fakes import FakeGateway, gateway_error, response, user_text

ORIGINAL = "Who wrote the play Romeo and Juliet?"
NO_CHEAP_STAGES = VerifyStages(
    form=False, direction=False, lexical=False, numbers=False, semantic="off"
)


def _p_yes_by_candidate(scores: dict[str, float], audit: dict[str, float] | None = None):  # type: ignore[no-untyped-def]
    """A judge whose P(YES) depends on the candidate, and on the prompt for the audit."""

    def answer(request: GenerateRequest):  # type: ignore[no-untyped-def]
        table = (
            audit if audit is not None and request.messages[0].content == AUDIT.system else scores
        )
        text = user_text(request)
        p = next(value for candidate, value in table.items() if candidate in text)
        return response(
            "YES" if p >= 0.5 else "NO", [("YES", math.log(p)), ("NO", math.log(1 - p))]
        )

    return answer


async def test_the_routes_calibrated_threshold_decides_and_is_reported() -> None:
    gateway = FakeGateway(_p_yes_by_candidate({"composed": 0.45, "translated": 0.3}))
    gateway.thresholds[("local", EQUIVALENCE.version)] = 0.4
    request = VerifyRequest(
        original=ORIGINAL,
        candidates=["Who composed Romeo and Juliet?", "Who translated Romeo and Juliet?"],
        stages=NO_CHEAP_STAGES,
    )
    result = await verify(
        request, judge=Judge(gateway, "local"), semantic=None, thresholds=GatewayThresholds(gateway)
    )
    assert [r.accepted for r in result.results] == [True, False]
    assert result.judge_threshold is not None
    assert (result.judge_threshold.value, result.judge_threshold.source) == (0.4, "calibrated")
    assert result.results[1].reason == "judge: mean P(yes) 0.300 < 0.4"
    # at METHOD's 0.5 the first would have been rejected too
    plain = await verify(request, judge=Judge(gateway, "local"), semantic=None)
    assert plain.judge_threshold is not None and plain.judge_threshold.source == "method_default"
    assert [r.accepted for r in plain.results] == [False, False]


async def test_a_threshold_in_the_request_is_configured_and_no_lookup_is_made() -> None:
    gateway = FakeGateway(_p_yes_by_candidate({"composed": 0.45}))
    gateway.thresholds[("local", EQUIVALENCE.version)] = 0.9
    request = VerifyRequest(
        original=ORIGINAL,
        candidates=["Who composed Romeo and Juliet?"],
        stages=NO_CHEAP_STAGES,
        thresholds=VerifyThresholds(judge_p_yes=0.4),
    )
    result = await verify(
        request, judge=Judge(gateway, "local"), semantic=None, thresholds=GatewayThresholds(gateway)
    )
    assert result.results[0].accepted
    assert result.judge_threshold is not None
    assert (result.judge_threshold.source, result.judge_threshold.origin) == (
        "configured",
        "the request",
    )
    assert gateway.threshold_lookups == []


async def test_thresholds_are_read_once_per_route_and_prompt_within_their_lifetime() -> None:
    gateway = FakeGateway(_p_yes_by_candidate({"composed": 0.9}))
    thresholds = GatewayThresholds(gateway, ttl_s=60)
    request = VerifyRequest(
        original=ORIGINAL, candidates=["Who composed Romeo and Juliet?"], stages=NO_CHEAP_STAGES
    )
    for _ in range(3):
        await verify(request, judge=Judge(gateway, "local"), semantic=None, thresholds=thresholds)
    assert gateway.threshold_lookups == [("local", EQUIVALENCE.version, None)]


async def test_the_threshold_is_the_one_for_the_requests_task() -> None:
    gateway = FakeGateway(_p_yes_by_candidate({"composed": 0.45}))
    gateway.thresholds[("local", EQUIVALENCE.version)] = 0.6
    gateway.thresholds[("local", EQUIVALENCE.version, "math")] = 0.4
    thresholds = GatewayThresholds(gateway, ttl_s=60)
    verdicts = {}
    for task in ("math", "factual", None):
        request = VerifyRequest(
            original=ORIGINAL,
            candidates=["Who composed Romeo and Juliet?"],
            stages=NO_CHEAP_STAGES,
            task=task,
        )
        result = await verify(
            request, judge=Judge(gateway, "local"), semantic=None, thresholds=thresholds
        )
        assert result.judge_threshold is not None
        verdicts[task] = (result.judge_threshold.value, result.results[0].accepted)
    assert verdicts == {"math": (0.4, True), "factual": (0.6, False), None: (0.6, False)}
    # each task's threshold is read once and kept apart from the others
    assert gateway.threshold_lookups == [
        ("local", EQUIVALENCE.version, "math"),
        ("local", EQUIVALENCE.version, "factual"),
        ("local", EQUIVALENCE.version, None),
    ]


async def test_a_threshold_that_cannot_be_read_fails_the_stage_with_its_reason() -> None:
    gateway = FakeGateway(_p_yes_by_candidate({"composed": 0.9}))

    async def broken(route: str, prompt: object, task: object) -> object:
        raise gateway_error(500, detail="calibration table unreadable")

    request = VerifyRequest(
        original=ORIGINAL, candidates=["Who composed Romeo and Juliet?"], stages=NO_CHEAP_STAGES
    )
    result = await verify(
        request,
        judge=Judge(gateway, "local"),
        semantic=None,
        thresholds=broken,  # type: ignore[arg-type]
    )
    (verdict,) = result.results
    assert not verdict.accepted and verdict.deciding_stage == "judge"
    assert verdict.error and "calibration table unreadable" in verdict.error
    assert gateway.requests == []  # no judge call without its threshold


async def test_a_gateway_down_for_now_is_no_rejection_but_a_failure_for_now() -> None:
    # a candidate rejected "because the judge failed" would be final to whoever asked
    gateway = FakeGateway(_p_yes_by_candidate({"composed": 0.9}))

    async def restarting(route: str, prompt: object, task: object) -> object:
        raise gateway_error(503, detail="gateway restarting")

    request = VerifyRequest(
        original=ORIGINAL, candidates=["Who composed Romeo and Juliet?"], stages=NO_CHEAP_STAGES
    )
    with pytest.raises(JudgeUnavailable, match="gateway restarting"):
        await verify(
            request,
            judge=Judge(gateway, "local"),
            semantic=None,
            thresholds=restarting,  # type: ignore[arg-type]
        )
    down = FakeGateway(lambda _: gateway_error(503, "unavailable", "refused", retry_after_s=5.0))
    with pytest.raises(JudgeUnavailable, match="down for now"):
        await verify(
            request,
            judge=Judge(down, "local"),
            semantic=None,
            thresholds=GatewayThresholds(down),
        )


async def test_the_audit_asks_a_second_differently_worded_question_of_its_own_route() -> None:
    gateway = FakeGateway(
        _p_yes_by_candidate(
            {"composed": 0.8, "symbol": 0.8},  # the first question lets both through
            audit={"composed": 0.7, "symbol": 0.2},  # the second catches the changed one
        )
    )
    gateway.thresholds[("strict", AUDIT.version)] = 0.6
    request = VerifyRequest(
        original=ORIGINAL,
        candidates=["Who composed Romeo and Juliet?", "What does the symbol Romeo stand for?"],
        stages=NO_CHEAP_STAGES,
        audit=True,
        audit_judge_model="strict",
    )
    result = await verify(
        request,
        judge=Judge(gateway, "local"),
        semantic=None,
        audit_judge=Judge(gateway, "strict", prompt=AUDIT),
        thresholds=GatewayThresholds(gateway),
    )
    kept, audited_out = result.results
    assert kept.accepted and kept.audit_verdict == "yes"
    assert not audited_out.accepted and audited_out.deciding_stage == "audit"
    assert audited_out.judge_verdict == "yes" and audited_out.audit_p_yes is not None
    assert result.stages_run == ["judge", "audit"]
    assert result.audit_judge_model == "strict" and result.audit_prompt_version == AUDIT.version
    assert result.audit_threshold is not None and result.audit_threshold.value == 0.6
    audit_calls = [r for r in gateway.requests if r.messages[0].content == AUDIT.system]
    assert len(audit_calls) == 4 and {r.model for r in audit_calls} == {"strict"}
    assert result.model_calls.calls == len(gateway.requests) == 8
