"""The answers an evaluation asks for, as the domain hands them to the store."""

from __future__ import annotations

from steadfast.services.evaluator.adapters.evaluations.rows import ItemRow
from steadfast.services.evaluator.domain.fan_out import new_evaluation, paraphrase_answers
from steadfast.services.evaluator.domain.pipeline import answer_request, grade_key, request_key
from steadfast.services.evaluator.records import ParaphraseSet
from steadfast.shared.contracts.evaluator import EvaluationItem, EvaluationSettings
from steadfast.shared.contracts.perturb import Paraphrase

MODELS = ["m1", "m2"]
SETTINGS = EvaluationSettings(models=MODELS, k=2)
CAPITAL = EvaluationItem(id="capital", question="What is the capital of France?", answer="Paris")
ITALIAN = EvaluationItem(question="Qual è la capitale d'Italia?", language="it")


def paraphrase_set(question: str, texts: list[str]) -> ParaphraseSet:
    return ParaphraseSet(
        id="ps-1",
        question=question,
        generator="g",
        k=len(texts),
        seed=0,
        prompt_version="v",
        semantic_check="embedding",
        complete=True,
        incomplete_reason=None,
        candidates_generated=len(texts),
        paraphrases=[Paraphrase(text=text, kind="plain") for text in texts],
    )


def test_every_model_is_asked_each_variant_in_the_language_of_its_item() -> None:
    reused = paraphrase_set(CAPITAL.question, ["France's capital?", "Capital of France?"])
    items, queued = new_evaluation(SETTINGS, [CAPITAL, ITALIAN], MODELS, {CAPITAL.question: reused})
    assert [(i.item_id, i.language, i.reused_set) for i in items] == [
        ("capital", "en", reused),
        ("item-2", "it", None),
    ]
    asked = [(a.position, a.variant, a.model, a.prompt) for a in queued.pending]
    assert asked == [
        (0, 0, "m1", CAPITAL.question),
        (0, 0, "m2", CAPITAL.question),
        (0, 1, "m1", "France's capital?"),
        (0, 1, "m2", "France's capital?"),
        (0, 2, "m1", "Capital of France?"),
        (0, 2, "m2", "Capital of France?"),
        (1, 0, "m1", ITALIAN.question),
        (1, 0, "m2", ITALIAN.question),
    ]
    italian = queued.pending[-1]
    assert italian.request_key == request_key(
        answer_request(SETTINGS, ITALIAN, "m2", ITALIAN.question, "it")
    )
    assert italian.request_key != request_key(
        answer_request(SETTINGS, ITALIAN, "m2", ITALIAN.question, "en")
    )
    assert not queued.fresh


def test_an_answer_is_graded_under_its_items_key_and_without_gold_not_at_all() -> None:
    _, queued = new_evaluation(SETTINGS, [CAPITAL, ITALIAN], MODELS, {})
    assert queued.grade_keys(0, "Paris") == grade_key(SETTINGS, CAPITAL, "Paris")
    assert queued.grade_keys(0, "Paris") != queued.grade_keys(0, "Lyon")
    assert queued.grade_keys(1, "Roma") is None


def test_a_new_set_asks_for_its_paraphrases_in_the_language_the_item_was_asked_in() -> None:
    row = ItemRow(
        row_id=7,
        position=3,
        item_id="q",
        item=ITALIAN,
        status="pending",
        paraphrase_set_id=None,
        error=None,
        attempts=0,
        unreachable_attempts=0,
        language="it",
    )
    fresh = EvaluationSettings(models=MODELS, k=1, fresh_answers=True)
    queued = paraphrase_answers(fresh, ["m1"], row, paraphrase_set(ITALIAN.question, ["Roma?"]))
    [answer] = queued.pending
    assert (answer.position, answer.variant, answer.prompt) == (3, 1, "Roma?")
    assert answer.request_key == request_key(answer_request(fresh, ITALIAN, "m1", "Roma?", "it"))
    assert queued.fresh
