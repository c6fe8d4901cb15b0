"""``POST /v1/position-bias`` (docs/method.md §2): every item asked with its options in each order.

An item becomes one trial per condition it allows: its options (the correct answer and a
distractor, written by perturb when not given; or the item's own k options), the context when
the condition shows it, and the option orders perturb gives (swap for two, cyclic for k). Every
model answers every order through the gateway; the letter is parsed strictly, mapped back to the
option it stood for, and scoring turns the replies into PF, PC and the rest. Nothing is stored.
"""

from __future__ import annotations

import asyncio
import math
import string
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import msgspec

from steadfast.services.evaluator.adapters.datasets import DatasetStore
from steadfast.services.evaluator.domain.pipeline import (
    Upstream,
    generate_all,
    instruction_role_of,
    item_id,
    models_of,
    with_retries,
)
from steadfast.services.evaluator.domain.prompts import (
    DEFAULT_LANGUAGE,
    answer_messages,
    prompt_language,
)
from steadfast.services.evaluator.domain.validation import (
    require_distinct_ids,
    require_known_routes,
    require_models,
)
from steadfast.services.evaluator.errors import UpstreamError
from steadfast.services.evaluator.records import Generated
from steadfast.shared.answers import names_a_correct_answer, parse_choice_letter
from steadfast.shared.backoff import Backoff
from steadfast.shared.contracts.base import MAX_ALSO_CORRECT, MAX_ANSWER_CHARS
from steadfast.shared.contracts.evaluator import EvaluationItem, InstructionRole
from steadfast.shared.contracts.gateway import GenerateRequest, TokenAlternative
from steadfast.shared.contracts.perturb import (
    DistractorRequest,
    DistractorResponse,
    PermutationRequest,
    PermutationResponse,
)
from steadfast.shared.contracts.position import (
    CONDITIONS,
    Condition,
    OrderAnswer,
    PositionBiasEvaluate,
    PositionBiasEvaluation,
    PositionItem,
    SkippedTrial,
    Trial,
    TrialModelResult,
)
from steadfast.shared.contracts.proxy import split_model
from steadfast.shared.contracts.scoring import (
    PositionBiasOptions,
    PositionBiasRequest,
    PositionBiasResponse,
    PositionRecord,
)
from steadfast.shared.errors import InvalidRequest, NotFound

LETTERS = string.ascii_uppercase
#: first-token alternatives asked for with ``calibrate`` (the gateway's maximum)
CALIBRATION_ALTERNATIVES = 20


@runtime_checkable  # a handler dependency: litestar checks the value's type
class PositionUpstream(Upstream, Protocol):
    async def distractors(self, request: DistractorRequest) -> DistractorResponse: ...

    async def permutations(self, request: PermutationRequest) -> PermutationResponse: ...

    async def position_bias(self, request: PositionBiasRequest) -> PositionBiasResponse: ...

    async def logprob_routes(self) -> set[str]:
        """The gateway routes that can give the first token's alternatives."""
        ...


@dataclass
class PlannedTrial:
    item_id: str
    condition: Condition
    question: str
    context: str | None
    options: list[str]
    reference: int
    distractors: str
    language: str = DEFAULT_LANGUAGE
    orders: list[list[int]] = field(default_factory=list)


async def with_items(request: PositionBiasEvaluate, datasets: DatasetStore) -> PositionBiasEvaluate:
    """The request with its items inline: a ``dataset_id``'s items, mapped to the protocol's."""
    if (request.items is None) == (request.dataset_id is None):
        detail = "give exactly one of `items` and `dataset_id`"
        raise InvalidRequest(detail, field="items")
    if request.items is not None:
        items = request.items[: request.limit] if request.limit else request.items
        return msgspec.structs.replace(request, items=items)
    dataset = await datasets.get(request.dataset_id or "")
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


async def checked_request(
    request: PositionBiasEvaluate, datasets: DatasetStore, upstream: PositionUpstream
) -> tuple[PositionBiasEvaluate, int]:
    """The request with a dataset's items in it, validated (4xx naming the field), and the
    answers it asks for at most."""
    request = await with_items(request, datasets)
    validate(request)
    await require_known_routes(upstream, request, generator=asks_generator(request))
    return request, order_count(request)


def order_count(request: PositionBiasEvaluate) -> int:
    """The answers the request needs at most: option orders × conditions run × models."""
    orders = sum(
        len(item.options) if item.options and condition != "high" else 2
        for item in items_of(request)
        for condition in wanted_conditions(request)
        if not_applicable(item, condition) is None
    )
    return orders * max(1, len(models_of(request)))


@dataclass
class _Run:
    request: PositionBiasEvaluate
    upstream: PositionUpstream
    retry: Backoff
    skipped: list[SkippedTrial] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def skip(self, item_id: str, condition: Condition, reason: str) -> None:
        self.skipped.append(SkippedTrial(item_id=item_id, condition=condition, reason=reason))

    async def plan(self, position: int) -> list[PlannedTrial]:
        item = items_of(self.request)[position]
        key = item_id(item, position)
        explicit = self.request.conditions is not None
        trials: list[PlannedTrial] = []
        plausible: tuple[str, str] | None = None  # written once, shown in low and medium
        language = prompt_language(self.language_of(item), f"{item.context or ''} {item.question}")
        for condition in wanted_conditions(self.request):
            if reason := not_applicable(item, condition):
                if explicit:
                    self.skip(key, condition, reason)
                continue
            context = item.context if condition == "low" else None
            if item.options is not None:
                assert item.correct_option is not None
                options, reference = list(item.options), LETTERS.index(item.correct_option)
                source = "given"
            elif condition == "high":
                decoys = await self._distractors(item, key, condition, "out_of_context", 2)
                if decoys is None:
                    continue
                options, reference, source = decoys.distractors[:2], 0, decoys.prompt_version
            else:
                assert item.answer is not None
                plausible = plausible or await self._plausible(item, key, condition)
                if plausible is None:
                    continue
                options, reference, source = [item.answer, plausible[0]], 0, plausible[1]
            trials.append(
                PlannedTrial(
                    key, condition, item.question, context, options, reference, source, language
                )
            )
        return trials

    def language_of(self, item: PositionItem) -> str | None:
        """The language the item was said to be in (by itself, else by the request)."""
        return item.language or self.request.language

    async def _plausible(
        self, item: PositionItem, key: str, condition: Condition
    ) -> tuple[str, str] | None:
        """The item's wrong option and where it came from ("given" or the prompt version)."""
        if item.distractor is not None:
            return item.distractor, "given"
        written = await self._distractors(item, key, condition, "plausible", 1)
        return (written.distractors[0], written.prompt_version) if written else None

    async def _distractors(
        self, item: PositionItem, key: str, condition: Condition, mode: str, n: int
    ) -> DistractorResponse | None:
        assert item.answer is not None
        request = DistractorRequest(
            question=item.question,
            correct_answer=item.answer,
            also_correct=item.also_correct,
            mode="plausible" if mode == "plausible" else "out_of_context",
            context=item.context,
            n=n,
            generator=self.request.generator,
            seed=self.request.seed,
            language=self.language_of(item),
        )
        try:
            written = await with_retries(lambda: self.upstream.distractors(request), self.retry)
        except UpstreamError as error:
            self.skip(key, condition, f"no distractor: {error.reason}")
            return None
        if len(written.distractors) < n:
            reason = written.incomplete_reason or f"{len(written.distractors)} of {n} written"
            self.skip(key, condition, f"no distractor: {reason}")
            return None
        return written

    async def orders(self, trials: list[PlannedTrial]) -> None:
        """Each trial's option orders, asked of perturb once per option count."""
        counts = sorted({len(trial.options) for trial in trials})
        responses = await asyncio.gather(*(self._orders_for(count) for count in counts))
        by_count = dict(zip(counts, responses, strict=True))
        for trial in trials:
            trial.orders = by_count[len(trial.options)]

    async def _orders_for(self, count: int) -> list[list[int]]:
        request = PermutationRequest(
            options=[LETTERS[i] for i in range(count)], scheme="swap" if count == 2 else "cyclic"
        )
        response = await with_retries(lambda: self.upstream.permutations(request), self.retry)
        return [order.order for order in response.orders]

    async def calibrated_models(self, models: list[str]) -> set[str]:
        """The models whose replies bring first-token probabilities (with ``calibrate``); a
        note names the others. A self-paraphrase model never has them."""
        if not self.request.calibrate:
            return set()
        routes = await with_retries(self.upstream.logprob_routes, self.retry)
        able = {m for m in models if split_model(m)[0] is None and m in routes}
        for model in models:
            if model not in able:
                self.notes.append(
                    f"{model}: not calibrated, its route gives no first-token probabilities"
                )
        return able

    def answer_request(
        self,
        trial: PlannedTrial,
        order: list[int],
        model: str,
        role: InstructionRole,
        calibrated: bool,
    ) -> GenerateRequest:
        shown = EvaluationItem(
            question=trial.question,
            options=[trial.options[i] for i in order],
            context=trial.context,
        )
        messages = answer_messages(
            "choice", trial.question, shown, self.request.system_prompt, role, trial.language
        )
        return GenerateRequest(
            model=model,
            messages=messages,
            temperature=0.0,
            max_tokens=self.request.max_tokens,
            top_logprobs=CALIBRATION_ALTERNATIVES if calibrated else None,
            task="choice",
            cache=not self.request.fresh_answers,
        )


def read_reply(
    order: list[int],
    text: str | None,
    error: str | None,
    logprobs: list[TokenAlternative] | None = None,
) -> OrderAnswer:
    """The strict letter of ``text``, the option it stood for in ``order`` and, given the first
    token's alternatives, each option's probability."""
    if text is None:
        return OrderAnswer(order=order, error=error or "no reply")
    choice = parse_choice_letter(text, len(order))
    chosen = order[LETTERS.index(choice)] if choice is not None else None
    probabilities = option_probabilities(order, logprobs) if logprobs is not None else None
    return OrderAnswer(
        order=order, text=text, choice=choice, chosen=chosen, option_probabilities=probabilities
    )


def option_probabilities(order: list[int], alternatives: list[TokenAlternative]) -> list[float]:
    """Each option's probability of being named by the first token (" B", "B." and "B" all
    name the option at B), by its index in the trial's options."""
    probabilities = [0.0] * len(order)
    for alternative in alternatives:
        # upper case only: a lower-case "a" is more often the article than the option
        letter = alternative.token.strip(" \t\n.:()*")
        if len(letter) == 1 and letter in LETTERS[: len(order)]:
            probabilities[order[LETTERS.index(letter)]] += math.exp(alternative.logprob)
    return probabilities


def model_result(model: str, answers: list[OrderAnswer]) -> TrialModelResult:
    """The model's replies to every order, with docs/method.md §2.3's swap-and-agree, permutation
    vote and (when probabilities were asked for) balanced position calibration."""
    chosen = [answer.chosen for answer in answers]
    complete = all(option is not None for option in chosen)
    consistent = len(set(chosen)) == 1 if complete else None
    votes = Counter(option for option in chosen if option is not None).most_common()
    tied = len(votes) > 1 and votes[0][1] == votes[1][1]
    return TrialModelResult(
        model=model,
        answers=answers,
        consistent=consistent,
        agreed=chosen[0] if consistent else None,
        vote=votes[0][0] if votes and not tied else None,
        calibrated=calibrated_choice(answers),
    )


def calibrated_choice(answers: list[OrderAnswer]) -> int | None:
    """The option with the highest probability averaged over every order (None when an order
    has no probabilities: the average would lean to the slots of the others)."""
    scored = [a.option_probabilities for a in answers if a.option_probabilities is not None]
    if not scored or len(scored) < len(answers):
        return None
    means = [sum(column) / len(scored) for column in zip(*scored, strict=True)]
    best = max(means)
    if best <= 0 or sum(1 for mean in means if math.isclose(mean, best)) > 1:
        return None
    return means.index(best)


def position_records(trial: Trial) -> list[PositionRecord]:
    """One record per reply given: where the reference option stood, and the letter replied."""
    return [
        PositionRecord(
            item_id=trial.item_id,
            model=result.model,
            order=str(index),
            choice=answer.choice,
            correct=LETTERS[answer.order.index(trial.reference)],
            condition=trial.condition,
            n_options=len(trial.options),
        )
        for result in trial.models
        for index, answer in enumerate(result.answers)
        if answer.error is None
    ]


async def evaluate_position_bias(
    request: PositionBiasEvaluate, upstream: PositionUpstream, retry: Backoff | None = None
) -> PositionBiasEvaluation:
    started = time.monotonic()
    models = validate(request)
    run = _Run(request, upstream, retry or Backoff())
    planned = await asyncio.gather(*(run.plan(p) for p in range(len(items_of(request)))))
    trials = [trial for item_trials in planned for trial in item_trials]
    if trials:
        await run.orders(trials)
    role = instruction_role_of(request)
    calibrated = await run.calibrated_models(models)
    requests = [
        run.answer_request(trial, order, model, role, model in calibrated)
        for trial in trials
        for model in models
        for order in trial.orders
    ]
    outcomes = iter(await generate_all(upstream, requests, run.retry))
    results = [_answered(trial, models, outcomes) for trial in trials]
    evaluation = PositionBiasEvaluation(
        trials=results,
        skipped=run.skipped,
        failed_replies=_failed_replies(results, models),
        languages=dict(Counter({trial.item_id: trial.language for trial in results}.values())),
    )
    records = [record for trial in results for record in position_records(trial)]
    if records:
        await _score(evaluation, records, run)
    evaluation.notes = run.notes
    evaluation.elapsed_s = round(time.monotonic() - started, 3)
    return evaluation


def _answered(trial: PlannedTrial, models: list[str], outcomes: Iterator[Generated]) -> Trial:
    by_model = []
    for model in models:
        answers = []
        for order in trial.orders:
            outcome = next(outcomes)
            error = outcome.error.reason if outcome.error else None
            answers.append(read_reply(order, outcome.text, error, outcome.logprobs))
        by_model.append(model_result(model, answers))
    return Trial(
        item_id=trial.item_id,
        condition=trial.condition,
        question=trial.question,
        context_shown=trial.context is not None,
        options=trial.options,
        reference=trial.reference,
        distractors=trial.distractors,
        language=trial.language,
        models=by_model,
    )


def _failed_replies(trials: list[Trial], models: list[str]) -> dict[str, int]:
    """Replies each model failed to give after every retry (they count in no metric)."""
    failed = dict.fromkeys(models, 0)
    for trial in trials:
        for result in trial.models:
            failed[result.model] += sum(1 for answer in result.answers if answer.error)
    return failed


async def _score(
    evaluation: PositionBiasEvaluation, records: list[PositionRecord], run: _Run
) -> None:
    """Scoring's metrics into ``evaluation``; when scoring fails the replies are still
    returned, with a note."""
    options = PositionBiasOptions(bootstrap=run.request.bootstrap, seed=run.request.seed)
    scoring = PositionBiasRequest(records=records, options=options)
    try:
        metrics = await with_retries(lambda: run.upstream.position_bias(scoring), run.retry)
    except UpstreamError as error:
        run.notes.append(f"no metrics: {error.reason}")
        return
    evaluation.models, evaluation.by_condition = metrics.models, metrics.by_condition
    evaluation.pairs, evaluation.recall_by_position = metrics.pairs, metrics.recall_by_position
    evaluation.metric_sets = metrics.metric_sets
