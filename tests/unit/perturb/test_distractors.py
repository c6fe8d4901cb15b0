from __future__ import annotations

from steadfast.services.perturb.domain.distractors import DistractorWriter, acceptable
from steadfast.shared.contracts.gateway import GenerateRequest
from steadfast.shared.contracts.perturb import DistractorRequest
from tests.unit.verify.fakes import FakeGateway, gateway_error, user_text


def test_acceptable_rejects_the_correct_answer_and_repeats() -> None:
    assert not acceptable("Paris", ["paris"], [])
    assert not acceptable("Paris, France", ["Paris"], [])
    assert not acceptable("The Lyon", ["Paris"], ["lyon"])
    assert not acceptable("  ", ["Paris"], [])
    assert acceptable("Lyon", ["Paris"], ["Marseille"])


def test_acceptable_rejects_every_correct_answer_and_the_same_number() -> None:
    assert not acceptable("John F. Kennedy", ["JFK", "John F. Kennedy"], [])
    assert not acceptable("18.0", ["18"], [])
    assert not acceptable("1,000", ["1000"], [])
    assert acceptable("19", ["18"], [])
    # the same number of another unit is another answer
    assert acceptable("14 days", ["14 hours"], [])


async def test_an_alias_of_the_correct_answer_is_never_a_distractor() -> None:
    replies = iter(["John F. Kennedy", "Richard Nixon"])
    request = DistractorRequest(
        question="Who was president in 1962?",
        correct_answer="JFK",
        also_correct=["John F. Kennedy"],
    )
    result = await DistractorWriter(FakeGateway(lambda _: next(replies))).write(request)
    assert result.distractors == ["Richard Nixon"]


async def test_distinct_wrong_answers_from_repeated_requests() -> None:
    replies = iter(["Paris", "1. Lyon", "Lyon", "Marseille", "Nice"])
    gateway = FakeGateway(lambda _: next(replies))
    result = await DistractorWriter(gateway).write(
        DistractorRequest(question="What is the capital of France?", correct_answer="Paris", n=3)
    )
    assert result.distractors == ["Lyon", "Marseille", "Nice"]
    assert result.complete and result.prompt_version == "distractor-v1"
    # later requests name what to avoid and sample, so they can differ
    assert "Do not repeat any of: Lyon" in user_text(gateway.requests[2])
    assert gateway.requests[0].temperature == 0.0 and gateway.requests[1].temperature > 0
    assert len({r.sample_index for r in gateway.requests}) == 5


async def test_gives_up_after_bounded_attempts_and_says_why() -> None:
    def answer(request: GenerateRequest):  # type: ignore[no-untyped-def]
        return gateway_error(503, "timeout", "slow") if request.sample_index == 1 else "Paris"

    gateway = FakeGateway(answer)
    result = await DistractorWriter(gateway).write(
        DistractorRequest(question="Capital of France?", correct_answer="Paris", n=2)
    )
    assert not result.complete and result.distractors == []
    assert len(gateway.requests) == 8
    assert "0 of 2" in (result.incomplete_reason or "")
    assert "timeout" in (result.incomplete_reason or "")


async def test_modes_context_and_language_reach_the_prompt() -> None:
    gateway = FakeGateway(lambda _: "Milano")
    await DistractorWriter(gateway).write(
        DistractorRequest(
            question="Qual è la capitale d'Italia?",
            correct_answer="Roma",
            context="Roma è la capitale della Repubblica italiana.",
            mode="out_of_context",
        )
    )
    system, user = gateway.requests[0].messages
    # an Italian question: the writer is asked in Italian
    assert "non abbia nulla a che fare con il contesto" in system.content
    assert user.content.startswith("Contesto: Roma è la capitale")
    assert "Domanda: Qual è la capitale d'Italia?\nRisposta corretta: Roma" in user.content
    french = FakeGateway(lambda _: "Lyon")
    await DistractorWriter(french).write(
        DistractorRequest(
            question="Quelle est la capitale de la France ?",
            correct_answer="Paris",
            language="fr",
        )
    )
    system, user = french.requests[0].messages
    assert "unrelated" not in system.content and "plausible" in system.content  # English
    assert user.content.endswith("Write the answer in French.")


async def test_failed_calls_and_the_seed_are_reported_even_when_complete() -> None:
    def answer(request: GenerateRequest):  # type: ignore[no-untyped-def]
        return gateway_error(503, "timeout", "slow") if request.sample_index == 0 else "Lyon"

    result = await DistractorWriter(FakeGateway(answer)).write(
        DistractorRequest(question="Capital of France?", correct_answer="Paris", n=1)
    )
    assert result.complete and result.distractors == ["Lyon"]
    assert len(result.generation_failures) == 1 and "timeout" in result.generation_failures[0]
    assert result.seed is not None
    again = await DistractorWriter(FakeGateway(answer)).write(
        DistractorRequest(question="Capital of France?", correct_answer="Paris", seed=result.seed)
    )
    assert again.seed == result.seed
