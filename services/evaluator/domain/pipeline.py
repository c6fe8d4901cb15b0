"""The steps of one evaluation, independent of where their results are kept.

An evaluation item goes through: paraphrase (perturb + verify) → answer every variant (gateway)
→ grade the answers (scoring) → metrics (scoring). The services are reached through the
:class:`Upstream` port so that the job engine and the synchronous endpoint share these steps,
and tests can substitute in-process stand-ins.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar, runtime_checkable

import msgspec

from steadfast.services.evaluator.domain.item_results import gold_texts
from steadfast.services.evaluator.domain.prompts import answer_messages, item_language
from steadfast.services.evaluator.errors import UpstreamError
from steadfast.services.evaluator.records import Generated, ParaphraseSet
from steadfast.shared.answers import answer_key, cut_before_final_answer, screenable_answers
from steadfast.shared.backoff import Backoff
from steadfast.shared.contracts.base import MAX_ALSO_CORRECT, MAX_ANSWER_CHARS, Task
from steadfast.shared.contracts.calibration import JudgeThreshold
from steadfast.shared.contracts.evaluator import EvaluationItem, EvaluationSettings, InstructionRole
from steadfast.shared.contracts.gateway import GenerateRequest
from steadfast.shared.contracts.perturb import (
    ParaphraseRequest,
    ParaphraseResponse,
)
from steadfast.shared.contracts.proxy import split_model
from steadfast.shared.contracts.scoring import (
    ConsistencyOptions,
    ConsistencyRecord,
    ConsistencyRequest,
    Gold,
    GradeItem,
    GradeRequest,
    GradeResult,
)
from steadfast.shared.contracts.verify import VerifyRequest, VerifyResponse

T = TypeVar("T")

DEFAULT_MAX_TOKENS: dict[str, int] = {"factual": 128, "math": 512, "choice": 8}


@runtime_checkable  # a handler dependency: litestar checks the value's type
class Upstream(Protocol):
    """The services an evaluation calls: perturb (paraphrases), the gateway (answers, routes,
    judge thresholds), verify and scoring (grades, consistency metrics)."""

    async def paraphrase(self, request: ParaphraseRequest) -> ParaphraseResponse: ...

    async def generate_batch(self, requests: list[GenerateRequest]) -> list[Generated]: ...

    async def verify(self, request: VerifyRequest) -> VerifyResponse: ...

    async def judge_threshold(self, route: str, prompt_version: str) -> JudgeThreshold: ...

    async def grade(self, request: GradeRequest) -> list[GradeResult]: ...

    async def consistency(self, request: ConsistencyRequest) -> dict[str, Any]: ...

    async def route_names(self) -> set[str] | None:
        """The names the gateway answers to (routes and ``<strategy>:<route>``); None when it
        cannot say now (out of reach): the names are then not checked up front."""
        ...


async def with_retries(call: Callable[[], Awaitable[T]], policy: Backoff) -> T:
    """``call()`` until it succeeds or ``policy`` gives up (then its last error, not retryable,
    saying after how many attempts)."""
    attempts = 0

    async def counted() -> T:
        nonlocal attempts
        attempts += 1
        return await call()

    try:
        return await policy.run(counted, retryable=_retryable)
    except UpstreamError as error:
        reason = f"{error.reason} (after {attempts} attempts)"
        raise UpstreamError(reason, retryable=False, unreachable=error.unreachable) from error


def _retryable(error: Exception) -> bool:
    return isinstance(error, UpstreamError) and error.retryable


#: answer requests per gateway batch call
ANSWER_BATCH = 16


async def generate_all(
    upstream: Upstream, requests: list[GenerateRequest], policy: Backoff
) -> list[Generated]:
    """Every request answered through the gateway in batches; a failed one is asked again
    with back-off until ``policy`` gives up, and its final error says after how many attempts."""
    outcomes: list[Generated] = [Generated() for _ in requests]
    todo = list(range(len(requests)))
    for attempt in range(1, policy.attempts + 1):
        results = await _generate_batches(upstream, [requests[i] for i in todo])
        retry_later = []
        for index, outcome in zip(todo, results, strict=True):
            error = outcome.error or UpstreamError("no result")
            if outcome.text is not None:
                outcomes[index] = outcome
            elif policy.gives_up(attempt, retryable=error.retryable):
                reason = f"{error.reason} (after {attempt} attempts)"
                outcomes[index] = Generated(error=UpstreamError(reason, retryable=False))
            else:
                retry_later.append(index)
        if not retry_later:
            break
        todo = retry_later
        await asyncio.sleep(policy.delay(attempt))
    return outcomes


async def _generate_batches(upstream: Upstream, requests: list[GenerateRequest]) -> list[Generated]:
    chunks = [requests[i : i + ANSWER_BATCH] for i in range(0, len(requests), ANSWER_BATCH)]
    results = await asyncio.gather(*(_generate_chunk(upstream, chunk) for chunk in chunks))
    return [outcome for chunk in results for outcome in chunk]


async def _generate_chunk(upstream: Upstream, requests: list[GenerateRequest]) -> list[Generated]:
    try:
        return await upstream.generate_batch(requests)
    except UpstreamError as error:
        return [Generated(error=error) for _ in requests]


def item_id(item: Identified, position: int) -> str:
    return item.id or f"item-{position + 1}"


class Routed(Protocol):
    """A request that names its models under test: ``model`` and/or ``models``."""

    @property
    def model(self) -> str | None: ...

    @property
    def models(self) -> list[str] | None: ...


class AnswerLayout(Routed, Protocol):
    """A request that may name where the answer instruction goes."""

    @property
    def instruction_role(self) -> InstructionRole | None: ...


class Identified(Protocol):
    """An item that may carry its own id (else it is named by its position)."""

    @property
    def id(self) -> str | None: ...


def models_of(settings: Routed) -> list[str]:
    models = list(settings.models or [])
    if settings.model and settings.model not in models:
        models.insert(0, settings.model)
    return models


class Generating(Routed, Protocol):
    """A request that names the route writing its paraphrases or distractors."""

    @property
    def generator(self) -> str: ...


def instruction_role_of(settings: AnswerLayout) -> InstructionRole:
    """The layout of every answer request: as set, else the one a self-paraphrase model needs
    (for all models alike, so that they are compared on the same prompt)."""
    if settings.instruction_role is not None:
        return settings.instruction_role
    strategies = (split_model(model)[0] for model in models_of(settings))
    return "system" if any(strategy is not None for strategy in strategies) else "user"


def task_of(settings: EvaluationSettings, item: EvaluationItem) -> Task:
    return item.task or settings.task


def gold_of(task: Task, item: EvaluationItem) -> Gold | None:
    """The grader's gold answer, or None when the item has none."""
    task = item.task or task
    answers = list(item.answers or [])
    if task == "factual" and item.answer and item.answer not in answers:
        answers.append(item.answer)
    gold = Gold(
        answers=answers or None,
        incorrect_answers=item.incorrect_answers,
        answer=item.answer if task == "math" else None,
        correct_option=item.correct_option if task == "choice" else None,
    )
    has_gold = gold.answers or gold.answer or gold.correct_option
    return gold if has_gold else None


def paraphrase_request(settings: EvaluationSettings, item: EvaluationItem) -> ParaphraseRequest:
    """The set of an item: generated, or the paraphrases the item brought (all of them: k is
    theirs)."""
    given = item.paraphrases
    return ParaphraseRequest(
        question=item.question,
        k=len(given) if given else settings.k,
        given=given,
        verify_given=settings.verify_given,
        generator=settings.generator,
        seed=settings.seed,
        task=task_of(settings, item),
        language=item.language or settings.language,
        verify=settings.verify,
        max_candidates=settings.max_candidates,
        time_budget_s=settings.time_budget_s,
        plain_per_round=settings.plain_per_round,
        toned_per_round=settings.toned_per_round,
        candidates_per_call=settings.candidates_per_call,
        samples_per_request=settings.samples_per_request,
        answers=answers_not_to_state(settings, item),
    )


def answers_not_to_state(settings: EvaluationSettings, item: EvaluationItem) -> list[str]:
    """A factual item's answers its paraphrases may not state, normalised and sorted (so the
    set id does not move with the aliases' order or case): the perturb service rejects a
    candidate that states one, and the set gets another in its place. Empty for a maths item
    and for paraphrases taken unverified, which are not screened."""
    if task_of(settings, item) != "factual" or (item.paraphrases and not settings.verify_given):
        return []
    golds = [text for text in gold_texts(item) if len(text) <= MAX_ANSWER_CHARS]
    return screenable_answers(item.question, golds)[:MAX_ALSO_CORRECT]


def paraphrase_set_id(request: ParaphraseRequest) -> str:
    """Deterministic id: the same question and generation settings give the same set id."""
    # the response-cache switch does not change what is generated
    same_set = msgspec.to_builtins(msgspec.structs.replace(request, cache=True))
    if same_set["samples_per_request"] == 1:  # ids from before the field existed stay valid
        del same_set["samples_per_request"]
    if same_set["temperature_step"] == 0:  # the same: one temperature, as before the fields
        del same_set["temperature_step"], same_set["max_temperature"]
    if not same_set["answers"]:  # no answer to screen for, as before the field
        del same_set["answers"]
    digest = hashlib.sha256(msgspec.json.encode(same_set)).hexdigest()
    return f"ps-{digest[:24]}"


def to_paraphrase_set(request: ParaphraseRequest, response: ParaphraseResponse) -> ParaphraseSet:
    return ParaphraseSet(
        id=paraphrase_set_id(request),
        question=request.question,
        generator=request.generator,
        k=request.k,
        seed=request.seed,
        prompt_version=response.prompt_version,
        semantic_check=response.semantic_check,
        complete=response.complete and len(response.accepted) >= request.k,
        incomplete_reason=response.incomplete_reason,
        candidates_generated=response.candidates_generated,
        paraphrases=response.accepted[: request.k],
        rejected=[msgspec.to_builtins(candidate) for candidate in response.rejected],
        verification=response.verification,
    )


def incomplete_note(paraphrase_set: ParaphraseSet, lent_s: float = 0.0) -> str | None:
    """Why a set is incomplete, in the report's words; ``lent_s``: the seconds of its time
    budget other sets lent it (``share_time_budget``), which its reason counts in."""
    if paraphrase_set.complete:
        return None
    got = len(paraphrase_set.paraphrases)
    reason = paraphrase_set.incomplete_reason or "fewer candidates passed verification"
    if lent_s:
        reason += f"; {lent_s:g} s of it lent by sets that finished early"
    return f"paraphrase set incomplete: {got} of {paraphrase_set.k} accepted ({reason})"


def answer_request(
    settings: EvaluationSettings,
    item: EvaluationItem,
    model: str,
    question: str,
    language: str | None = None,
) -> GenerateRequest:
    """The request that asks ``model`` the variant ``question`` of ``item``, in ``language``
    (default: the item's, chosen by :func:`item_language`)."""
    task = task_of(settings, item)
    return GenerateRequest(
        model=model,
        messages=answer_messages(
            task,
            question,
            item,
            settings.system_prompt,
            instruction_role_of(settings),
            language or item_language(item, settings.language),
        ),
        temperature=0.0,
        max_tokens=settings.max_tokens or DEFAULT_MAX_TOKENS[task],
        # a "<strategy>:<route>" model groups its variants' answers by the task
        task=task,
        cache=not settings.fresh_answers,
    )


def request_key(request: GenerateRequest) -> str:
    """Identifies a model request exactly (route, messages, every output-affecting parameter)."""
    return hashlib.sha256(msgspec.json.encode(request)).hexdigest()


def grade_key(settings: EvaluationSettings, item: EvaluationItem, text: str) -> str | None:
    """Identifies a grading exactly (grader, judges, question, gold, answer text): an answer
    graded once under this key takes the same label again. None: nothing to grade against."""
    task = task_of(settings, item)
    gold = gold_of(task, item)
    if gold is None:
        return None
    request = grade_request(settings, task, [(item, gold, text)])
    return hashlib.sha256(msgspec.json.encode(request)).hexdigest()


def answer_value(settings: EvaluationSettings, item: EvaluationItem, text: str) -> str | None:
    """The normalised answer that agreement and value-level metrics compare."""
    return answer_key(task_of(settings, item), text, len(item.options or []) or 26)


def unanswered_by_cut(
    settings: EvaluationSettings, item: EvaluationItem, outcome: Generated
) -> bool:
    """A maths reply cut at its token limit before it stated a final answer: it has no value,
    and with a gold answer it is labelled ``invalid`` without grading (docs/method.md D25)."""
    return outcome.text is not None and cut_before_final_answer(
        task_of(settings, item), outcome.text, outcome.cut
    )


def grade_requests(
    settings: EvaluationSettings, graded: list[tuple[EvaluationItem, Gold, str]]
) -> list[tuple[list[int], GradeRequest]]:
    """One grade request per task among ``graded``, with the indices of its answers."""
    by_task: dict[Task, list[int]] = {}
    for index, (item, _, _) in enumerate(graded):
        by_task.setdefault(task_of(settings, item), []).append(index)
    return [
        (indices, grade_request(settings, task, [graded[i] for i in indices]))
        for task, indices in by_task.items()
    ]


async def grade_all(
    upstream: Upstream,
    settings: EvaluationSettings,
    graded: list[tuple[EvaluationItem, Gold, str]],
) -> list[GradeResult]:
    """Grade answers of any task mix; results in the order of ``graded``."""
    results: list[GradeResult | None] = [None] * len(graded)
    for indices, request in grade_requests(settings, graded):
        for index, result in zip(indices, await upstream.grade(request), strict=True):
            results[index] = result
    return [result for result in results if result is not None]


def grade_request(
    settings: EvaluationSettings, task: Task, graded: list[tuple[EvaluationItem, Gold, str]]
) -> GradeRequest:
    """Grade answers against the gold; the grader always sees the original question."""
    request = GradeRequest(
        task=task,
        grader=settings.grader,
        items=[
            GradeItem(question=item.question, answer_text=text, gold=gold, options=item.options)
            for item, gold, text in graded
        ],
    )
    if settings.judge_models:
        request.judge_models = list(settings.judge_models)
    return request


def consistency_request(
    settings: EvaluationSettings, records: list[ConsistencyRecord]
) -> ConsistencyRequest:
    options = ConsistencyOptions(
        drop_majority_ties=settings.metrics.drop_majority_ties,
        strict_threshold=settings.metrics.strict_threshold,
        bootstrap=settings.metrics.bootstrap,
        seed=settings.seed,
        per_item=True,
    )
    return ConsistencyRequest(records=records, options=options)
