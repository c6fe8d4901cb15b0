"""Prompts in the item's language: the model under test is asked, and the distractor writer
writes, in Italian for Italian items (docs/method.md §1.2, §2.1); replies are read the same."""

from __future__ import annotations

import pytest

from steadfast.services.evaluator.domain.pipeline import answer_request
from steadfast.services.evaluator.domain.position import evaluate_position_bias
from steadfast.services.evaluator.domain.position_replies import read_reply
from steadfast.services.evaluator.domain.prompts import (
    ANSWER_TEMPLATES,
    answer_messages,
    item_language,
    prompt_language,
)
from steadfast.services.evaluator.records import Generated
from steadfast.services.evaluator.samples import sample_items
from steadfast.services.perturb.domain.prompts import DISTRACTOR_TEMPLATES, distractor_messages
from steadfast.shared.answers import parse_choice_letter
from steadfast.shared.backoff import Backoff
from steadfast.shared.contracts.evaluator import EvaluationItem, EvaluationSettings
from steadfast.shared.contracts.gateway import GenerateRequest
from steadfast.shared.contracts.perturb import (
    DistractorRequest,
    DistractorResponse,
    OptionOrder,
    PermutationRequest,
    PermutationResponse,
)
from steadfast.shared.contracts.position import PositionBiasEvaluate, PositionItem
from steadfast.shared.contracts.scoring import PositionBiasRequest, PositionBiasResponse

TASKS = ("factual", "math", "choice")


@pytest.mark.parametrize("language", sorted(ANSWER_TEMPLATES))
def test_every_answer_template_is_complete(language: str) -> None:
    template = ANSWER_TEMPLATES[language]
    assert set(template.instructions) == set(TASKS)
    assert all(template.instructions[task].strip() for task in TASKS)
    assert "\\boxed{}" in template.instructions["math"]  # the answer format does not change
    assert template.question and template.problem and template.context


@pytest.mark.parametrize("language", sorted(DISTRACTOR_TEMPLATES))
def test_every_distractor_template_is_complete(language: str) -> None:
    template = DISTRACTOR_TEMPLATES[language]
    assert set(template.system) == {"plausible", "out_of_context"}
    assert template.context and template.question and template.correct_answer and template.avoid


def test_the_language_is_named_or_detected_and_english_stands_in_for_the_rest() -> None:
    assert prompt_language(None, "Quando è iniziata la crisi petrolifera del 1973?") == "it"
    assert prompt_language(None, "When did the 1973 oil crisis begin?") == "en"
    assert prompt_language("it", "When did the 1973 oil crisis begin?") == "it"  # named wins
    assert prompt_language("fr", "Quand la crise pétrolière a-t-elle commencé ?") == "en"
    assert prompt_language(None, "12 + 7") == "en"  # nothing to detect
    item = EvaluationItem(question="Who?", language="it")
    assert item_language(item, None) == "it"
    assert (
        item_language(EvaluationItem(question="Chi ha scritto la Divina Commedia?"), None) == "it"
    )
    assert item_language(EvaluationItem(question="Who wrote it?"), "it") == "it"  # the evaluation's


def test_an_italian_squad_item_is_asked_in_italian() -> None:
    item = sample_items("squad_it")[0]
    request = answer_request(EvaluationSettings(models=["m"]), item, "m", item.question)
    (message,) = request.messages
    assert message.content == (
        f"Contesto:\n{item.context}\n\n"
        "Rispondi alla domanda in modo conciso, con la sola risposta. Se la domanda è ambigua o "
        'senza risposta, o se non conosci la risposta, scrivi "Non lo so".\n\n'
        "Domanda: Quando è iniziata la crisi petrolifera del 1973?"
    )


def test_english_messages_are_unchanged() -> None:
    item = EvaluationItem(question="What is 6 times 7?", answer="42")
    (message,) = answer_messages("math", item.question, item)
    assert message.content == (
        "Solve the problem. Reason step by step, then put the final answer in \\boxed{}.\n\n"
        "Problem: What is 6 times 7?"
    )


def test_italian_choice_and_system_instruction() -> None:
    item = EvaluationItem(question="Qual è la capitale?", options=["Roma", "Milano"])
    system, user = answer_messages("choice", item.question, item, "Sii breve.", "system", "it")
    assert system.content == (
        "Sii breve.\n\nRispondi solo con la lettera dell'opzione corretta, nient'altro."
    )
    assert user.content == "Domanda: Qual è la capitale?\nA. Roma\nB. Milano"


@pytest.mark.parametrize(
    ("reply", "letter"),
    [("B", "B"), (" b. ", "B"), ("(A)", "A"), ("La risposta è B", None), ("B, perché", None)],
)
def test_italian_replies_are_read_by_the_strict_letter_rule(reply: str, letter: str | None) -> None:
    assert parse_choice_letter(reply, 2) == letter
    assert read_reply([0, 1], reply, None).choice == letter


def test_the_distractor_writer_is_asked_in_italian() -> None:
    system, user = distractor_messages(
        mode="plausible",
        question="Quando è stata la seconda crisi petrolifera?",
        correct_answer="1979",
        context=None,
        avoid=["1985"],
        language="it",
    )
    assert system.content.startswith("Scrivi risposte sbagliate per domande di un quiz.")
    assert user.content == (
        "Domanda: Quando è stata la seconda crisi petrolifera?\n"
        "Risposta corretta: 1979\n"
        "Non ripetere nessuna di queste: 1985"
    )
    _, french = distractor_messages(
        mode="plausible", question="Q", correct_answer="A", context=None, avoid=[], language="fr"
    )
    assert french.content.endswith("Write the answer in French.")


class RecordingUpstream:
    """Records every request of the position protocol; answers "A"; scoring is down."""

    def __init__(self) -> None:
        self.generated: list[GenerateRequest] = []
        self.distractor_requests: list[DistractorRequest] = []

    async def generate_batch(self, requests: list[GenerateRequest]) -> list[Generated]:
        self.generated += requests
        return [Generated(text="A") for _ in requests]

    async def distractors(self, request: DistractorRequest) -> DistractorResponse:
        self.distractor_requests.append(request)
        texts = [f"esca {n}" for n in range(request.n)]
        return DistractorResponse(
            distractors=texts, mode=request.mode, generator=request.generator, complete=True
        )

    async def permutations(self, request: PermutationRequest) -> PermutationResponse:
        orders = [
            OptionOrder(options=[], positions=[], order=[0, 1]),
            OptionOrder(options=[], positions=[], order=[1, 0]),
        ]
        return PermutationResponse(scheme=request.scheme, orders=orders)

    async def position_bias(self, request: PositionBiasRequest) -> PositionBiasResponse:
        from steadfast.services.evaluator.errors import UpstreamError

        raise UpstreamError("scoring: unavailable")

    async def logprob_routes(self) -> set[str]:
        return set()


async def test_squad_it_items_are_asked_in_italian_in_every_condition() -> None:
    sample = sample_items("squad_it")[1]
    item = PositionItem(question=sample.question, answer="1979", context=sample.context)
    upstream = RecordingUpstream()
    request = PositionBiasEvaluate(model="m", items=[item])
    result = await evaluate_position_bias(request, upstream, Backoff(attempts=1, base_delay_s=0))  # type: ignore[arg-type]
    assert result.languages == {"it": 1}
    assert {trial.language for trial in result.trials} == {"it"}
    shown_context = [
        asked
        for asked in upstream.generated
        if asked.messages[0].content.startswith(f"Contesto:\n{sample.context}\n\n")
    ]
    assert len(shown_context) == 2  # the low condition's two orders
    for asked in upstream.generated:
        (message,) = asked.messages
        assert "Rispondi solo con la lettera dell'opzione corretta, nient'altro." in message.content
        assert "\n\nDomanda: Quando è stata la seconda crisi petrolifera?\nA. " in message.content
        assert "Answer with the letter" not in message.content
    assert len(upstream.generated) == 6  # three conditions, two orders each
    # the writer is told the language only when it was named; it detects it otherwise
    assert [r.language for r in upstream.distractor_requests] == [None, None]
    named = PositionBiasEvaluate(model="m", items=[item], language="it")
    upstream = RecordingUpstream()
    await evaluate_position_bias(named, upstream, Backoff(attempts=1, base_delay_s=0))  # type: ignore[arg-type]
    assert {r.language for r in upstream.distractor_requests} == {"it"}


@pytest.mark.parametrize("language", [None, "en", "fr"])
def test_the_english_distractor_messages_are_distractor_v1s(language: str | None) -> None:
    system, user = distractor_messages(
        mode="plausible",
        question="Capital of France?",
        correct_answer="Paris",
        context="France is a country.",
        avoid=["Lyon"],
        language=language,
    )
    assert system.content == (
        "You write wrong answers for quiz questions. Given a question, maybe its context, and "
        "its correct answer, write one answer that sounds plausible for the question but is "
        "wrong. Match the correct answer's type and length. Reply with the answer only, on one "
        "line."
    )
    named = {
        None: [],
        "en": ["Write the answer in English."],
        "fr": ["Write the answer in French."],
    }
    assert user.content.split("\n") == [
        "Context: France is a country.",
        "Question: Capital of France?",
        "Correct answer: Paris",
        "Do not repeat any of: Lyon",
        *named[language],
    ]
