"""The answers an evaluation asks for: every model's answer to every variant of an item, each
keyed by its exact request (an identical request answered before gives its answer), with the
key of an answer's grading (an identical grading before gives its label). The evaluation
store keeps them as they are made here."""

from __future__ import annotations

from collections.abc import Mapping

from steadfast.services.evaluator.adapters.evaluations.rows import (
    GradeKeys,
    ItemRow,
    NewAnswers,
    NewItem,
    PendingAnswer,
)
from steadfast.services.evaluator.domain.pipeline import (
    answer_request,
    grade_key,
    item_id,
    request_key,
)
from steadfast.services.evaluator.domain.prompts import item_language
from steadfast.services.evaluator.records import ParaphraseSet
from steadfast.shared.contracts.evaluator import EvaluationItem, EvaluationSettings

#: a variant to ask: its index (0: the original question) and its text
Prompt = tuple[int, str]


def new_evaluation(
    settings: EvaluationSettings,
    items: list[EvaluationItem],
    models: list[str],
    reuse_sets: Mapping[str, ParaphraseSet],
) -> tuple[list[NewItem], NewAnswers]:
    """The items of a new evaluation and the answers it asks for at once: each item's
    question and, for an item that takes a set made earlier (``reuse_sets``, by question),
    that set's paraphrases."""
    new_items: list[NewItem] = []
    pending: list[PendingAnswer] = []
    for position, item in enumerate(items):
        reused = reuse_sets.get(item.question)
        language = item_language(item, settings.language)
        new_items.append(NewItem(item, item_id(item, position), language, reused))
        prompts = [(0, item.question), *_paraphrase_prompts(reused)]
        pending += pending_answers(settings, position, item, models, prompts, language)
    return new_items, _queued(settings, dict(enumerate(items)), pending)


def paraphrase_answers(
    settings: EvaluationSettings, models: list[str], row: ItemRow, paraphrase_set: ParaphraseSet
) -> NewAnswers:
    """The answers to the paraphrases an item's set brought."""
    prompts = _paraphrase_prompts(paraphrase_set)
    pending = pending_answers(settings, row.position, row.item, models, prompts, row.asked_in)
    return _queued(settings, {row.position: row.item}, pending)


def pending_answers(
    settings: EvaluationSettings,
    position: int,
    item: EvaluationItem,
    models: list[str],
    prompts: list[Prompt],
    language: str,
) -> list[PendingAnswer]:
    """Every model's answer to every prompt of the item at ``position``, asked in
    ``language``."""
    return [
        PendingAnswer(
            position=position,
            model=model,
            variant=variant,
            prompt=prompt,
            request_key=request_key(answer_request(settings, item, model, prompt, language)),
        )
        for variant, prompt in prompts
        for model in models
    ]


def grade_keys(settings: EvaluationSettings, items: Mapping[int, EvaluationItem]) -> GradeKeys:
    """The grade key of an answer text to the item at a position (see ``grade_key``)."""
    return lambda position, text: grade_key(settings, items[position], text)


def _paraphrase_prompts(paraphrase_set: ParaphraseSet | None) -> list[Prompt]:
    paraphrases = paraphrase_set.paraphrases if paraphrase_set else []
    return [(index + 1, paraphrase.text) for index, paraphrase in enumerate(paraphrases)]


def _queued(
    settings: EvaluationSettings,
    items: Mapping[int, EvaluationItem],
    pending: list[PendingAnswer],
) -> NewAnswers:
    return NewAnswers(pending, grade_keys(settings, items), fresh=settings.fresh_answers)
