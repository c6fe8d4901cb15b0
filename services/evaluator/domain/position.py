"""``POST /v1/position-bias`` (docs/method.md §2): every item asked with its options in each order.

An item becomes one trial per condition it allows: its options (the correct answer and a
distractor, written by perturb when not given; or the item's own k options), the context when
the condition shows it, and the option orders perturb gives (swap for two, cyclic for k). Every
model answers every order through the gateway; the letter is parsed strictly, mapped back to the
option it stood for, and scoring turns the replies into PF, PC and the rest. Nothing is stored.
The request's checks are in ``position_requests.py``, the reading of replies in
``position_replies.py``.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from steadfast.services.evaluator.adapters.datasets import DatasetStore
from steadfast.services.evaluator.domain.pipeline import (
    Upstream,
    generate_all,
    instruction_role_of,
    item_id,
    with_retries,
)
from steadfast.services.evaluator.domain.position_replies import (
    model_result,
    position_records,
    read_reply,
)
from steadfast.services.evaluator.domain.position_requests import (
    LETTERS,
    asks_generator,
    items_of,
    not_applicable,
    order_count,
    validate,
    wanted_conditions,
    with_items,
)
from steadfast.services.evaluator.domain.prompts import (
    DEFAULT_LANGUAGE,
    answer_messages,
    prompt_language,
)
from steadfast.services.evaluator.domain.validation import (
    require_known_routes,
)
from steadfast.services.evaluator.errors import UpstreamError
from steadfast.services.evaluator.records import Generated
from steadfast.shared.backoff import Backoff
from steadfast.shared.contracts.evaluator import EvaluationItem, InstructionRole
from steadfast.shared.contracts.gateway import GenerateRequest
from steadfast.shared.contracts.perturb import (
    DistractorRequest,
    DistractorResponse,
    PermutationRequest,
    PermutationResponse,
)
from steadfast.shared.contracts.position import (
    Condition,
    PositionBiasEvaluate,
    PositionBiasEvaluation,
    PositionItem,
    SkippedTrial,
    Trial,
)
from steadfast.shared.contracts.proxy import split_model
from steadfast.shared.contracts.scoring import (
    PositionBiasOptions,
    PositionBiasRequest,
    PositionBiasResponse,
    PositionRecord,
)
from steadfast.shared.tenancy import UNRESTRICTED, Tenancy

#: first-token alternatives asked for with ``calibrate`` (the gateway's maximum)
CALIBRATION_ALTERNATIVES = 20


@runtime_checkable  # a handler dependency: litestar checks the value's type
class PositionUpstream(Upstream, Protocol):
    """The services the positional-bias protocol calls: the evaluation's upstream, plus
    perturb's distractors and permutations and scoring's position-bias metrics."""

    async def distractors(self, request: DistractorRequest) -> DistractorResponse: ...

    async def permutations(self, request: PermutationRequest) -> PermutationResponse: ...

    async def position_bias(self, request: PositionBiasRequest) -> PositionBiasResponse: ...

    async def logprob_routes(self) -> set[str]:
        """The gateway routes that can give the first token's alternatives."""
        ...


@dataclass
class PlannedTrial:
    """One item under one condition, ready to ask: its options, which is correct, where the
    distractors came from, and the option orders."""

    item_id: str
    condition: Condition
    question: str
    context: str | None
    options: list[str]
    reference: int
    distractors: str
    language: str = DEFAULT_LANGUAGE
    orders: list[list[int]] = field(default_factory=list)


async def checked_request(
    request: PositionBiasEvaluate,
    datasets: DatasetStore,
    upstream: PositionUpstream,
    tenancy: Tenancy = UNRESTRICTED,
) -> tuple[PositionBiasEvaluate, int]:
    """The request with a dataset's items in it (one ``tenancy`` sees), validated (4xx naming
    the field), and the answers it asks for at most."""
    request = await with_items(request, datasets, tenancy)
    validate(request)
    await require_known_routes(upstream, request, generator=asks_generator(request))
    return request, order_count(request)


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
