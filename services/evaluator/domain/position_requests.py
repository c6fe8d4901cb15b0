"""A positional-bias request's items and conditions: a dataset's items inline as the protocol's,
the checks that refuse a request that cannot run, the conditions each item allows, and the
answers a request asks for at most."""

from __future__ import annotations

import string

import msgspec

from steadfast.services.evaluator.adapters.datasets import DatasetStore
from steadfast.services.evaluator.domain.pipeline import models_of
from steadfast.services.evaluator.domain.validation import require_distinct_ids, require_models
from steadfast.shared.answers import names_a_correct_answer
from steadfast.shared.contracts.base import MAX_ALSO_CORRECT, MAX_ANSWER_CHARS
from steadfast.shared.contracts.evaluator import EvaluationItem
from steadfast.shared.contracts.position import (
    CONDITIONS,
    Condition,
    PositionBiasEvaluate,
    PositionItem,
)
from steadfast.shared.errors import InvalidRequest, NotFound
from steadfast.shared.tenancy import UNRESTRICTED, Tenancy

LETTERS = string.ascii_uppercase


async def with_items(
    request: PositionBiasEvaluate, datasets: DatasetStore, tenancy: Tenancy = UNRESTRICTED
) -> PositionBiasEvaluate:
    """The request with its items inline: a ``dataset_id``'s items (of a dataset ``tenancy``
    sees), mapped to the protocol's."""
    if (request.items is None) == (request.dataset_id is None):
        detail = "give exactly one of `items` and `dataset_id`"
        raise InvalidRequest(detail, field="items")
    if request.items is not None:
        items = request.items[: request.limit] if request.limit else request.items
        return msgspec.structs.replace(request, items=items)
    dataset = await datasets.get(request.dataset_id or "", tenancy)
    if dataset is None:
        detail = f"no dataset {request.dataset_id!r}"
        raise NotFound(detail, field="dataset_id")
    stored = await datasets.items(dataset.id, limit=request.limit)
    return msgspec.structs.replace(request, items=[position_item(item) for item in stored])


def position_item(item: EvaluationItem) -> PositionItem:
    """A dataset item as a protocol item: its options if it has them, else its (first)
    acceptable answer as the correct option and the others as also correct (as many as a
    request carries: a dataset's answers have no limits)."""
    answers: list[str] = []
    for answer in [item.answer, *(item.answers or [])]:
        if answer and len(answer) <= MAX_ANSWER_CHARS and answer not in answers:
            answers.append(answer)
    return PositionItem(
        id=item.id,
        question=item.question,
        context=item.context,
        answer=None if item.options or not answers else answers[0],
        also_correct=[] if item.options else answers[1 : MAX_ALSO_CORRECT + 1],
        options=item.options,
        correct_option=item.correct_option if item.options else None,
    )


def items_of(request: PositionBiasEvaluate) -> list[PositionItem]:
    return request.items or []


def validate(request: PositionBiasEvaluate) -> list[str]:
    """The models; raises a 400 naming the field when the request cannot be run."""
    models = require_models(request)
    require_distinct_ids(items_of(request))
    for index, item in enumerate(items_of(request)):
        where = f"items[{index}]"
        if item.options is not None:
            if item.correct_option is None:
                detail = "an item with `options` needs its `correct_option`"
                raise InvalidRequest(detail, field=f"{where}.correct_option")
            if LETTERS.index(item.correct_option) >= len(item.options):
                detail = f"`correct_option` {item.correct_option} is not among the options"
                raise InvalidRequest(detail, field=f"{where}.correct_option")
        elif item.answer is None:
            detail = "give the correct `answer` (or `options` with `correct_option`)"
            raise InvalidRequest(detail, field=f"{where}.answer")
        elif item.distractor is not None and names_a_correct_answer(
            item.distractor, [item.answer, *item.also_correct], containing=False
        ):
            detail = "the `distractor` is a correct answer: the two options would both be right"
            raise InvalidRequest(detail, field=f"{where}.distractor")
    return models


def wanted_conditions(request: PositionBiasEvaluate) -> list[Condition]:
    return [c for c in CONDITIONS if c in (request.conditions or CONDITIONS)]


def asks_generator(request: PositionBiasEvaluate) -> bool:
    """Whether a trial of the request needs a distractor written (the rule of ``plan``): an
    item without options, in the high condition or without a distractor of its own."""
    conditions = wanted_conditions(request)
    return any(
        item.options is None
        and (condition == "high" or item.distractor is None)
        and not not_applicable(item, condition)
        for item in items_of(request)
        for condition in conditions
    )


def not_applicable(item: PositionItem, condition: Condition) -> str | None:
    """Why ``item`` cannot run under ``condition`` (None: it can)."""
    if condition == "low" and not item.context:
        return "the low condition shows the item's context, and it has none"
    if condition == "high" and item.options is not None:
        return "the high condition replaces the options by two unrelated ones: give `answer`"
    return None


def order_count(request: PositionBiasEvaluate) -> int:
    """The answers the request needs at most: option orders × conditions run × models."""
    orders = sum(
        len(item.options) if item.options and condition != "high" else 2
        for item in items_of(request)
        for condition in wanted_conditions(request)
        if not_applicable(item, condition) is None
    )
    return orders * max(1, len(models_of(request)))
