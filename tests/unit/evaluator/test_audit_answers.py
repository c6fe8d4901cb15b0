"""The audit removes a paraphrase of a factual item that states the item's answer, without
asking the judge: the demo accepted '… "The Mona Lisa" by Leonardo da Vinci?' for 'Who painted
the Mona Lisa?', which asks nothing any more and would hide a flip."""

from __future__ import annotations

from steadfast.services.evaluator.domain.audit import AuditedItem, run_audit
from steadfast.services.evaluator.records import AnswerRecord, ParaphraseSet
from steadfast.shared.backoff import Backoff
from steadfast.shared.contracts.evaluator import EvaluationItem, EvaluationSettings
from steadfast.shared.contracts.perturb import Paraphrase
from steadfast.shared.contracts.verify import CandidateVerdict, VerifyRequest, VerifyResponse

PARAPHRASES = [
    'What is the identity of the artist behind "The Mona Lisa" by Leonardo da Vinci?',
    "Which artist painted the Mona Lisa?",
    "Who is the painter of the Mona Lisa?",
]


class Judge:
    """Accepts every candidate and records what it was asked."""

    def __init__(self) -> None:
        self.asked: list[VerifyRequest] = []

    async def verify(self, request: VerifyRequest) -> VerifyResponse:
        self.asked.append(request)
        verdicts = [CandidateVerdict(text=t, accepted=True) for t in request.candidates]
        return VerifyResponse(results=verdicts, semantic_check="off")


def audited(item: EvaluationItem, labels: list[str]) -> AuditedItem:
    paraphrase_set = ParaphraseSet(
        id="ps-1", question=item.question, generator="g", k=3, seed=0, prompt_version="v",
        semantic_check="off", complete=True, incomplete_reason=None, candidates_generated=3,
        paraphrases=[Paraphrase(text=text, kind="plain") for text in PARAPHRASES],
    )  # fmt: skip
    answers = [
        AnswerRecord(0, "m", variant, "", "graded", text="x", label=label)
        for variant, label in enumerate(labels)
    ]
    return AuditedItem("mona", item, paraphrase_set, answers)


async def test_a_paraphrase_that_states_the_answer_is_removed_without_the_judge() -> None:
    item = EvaluationItem(question="Who painted the Mona Lisa?", answers=["Leonardo da Vinci"])
    judge = Judge()
    # the third paraphrase's answer disagrees: it alone goes to the judge
    outcome = await run_audit(
        judge,  # type: ignore[arg-type]
        EvaluationSettings(models=["m"]),
        [audited(item, ["correct", "correct", "correct", "incorrect"])],
        Backoff(attempts=1),
    )
    assert outcome.removed == {
        "mona": {1: "answer: the paraphrase states the answer ('leonardo da vinci')"}
    }
    assert [request.candidates for request in judge.asked] == [[PARAPHRASES[2]]]
    assert (outcome.summary.checked, outcome.summary.removed) == (2, 1)


async def test_an_answer_the_question_itself_names_is_no_reason() -> None:
    item = EvaluationItem(
        question="Did Leonardo da Vinci paint the Mona Lisa?", answers=["Leonardo da Vinci"]
    )
    outcome = await run_audit(
        Judge(),  # type: ignore[arg-type]
        EvaluationSettings(models=["m"]),
        [audited(item, ["correct"] * 4)],
        Backoff(attempts=1),
    )
    assert outcome.removed == {}


async def test_the_audit_switched_off_removes_nothing() -> None:
    item = EvaluationItem(question="Who painted the Mona Lisa?", answers=["Leonardo da Vinci"])
    outcome = await run_audit(
        Judge(),  # type: ignore[arg-type]
        EvaluationSettings(models=["m"], audit="off"),
        [audited(item, ["correct"] * 4)],
        Backoff(attempts=1),
    )
    assert outcome.removed == {}
