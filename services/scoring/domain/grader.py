"""``grade``: one label per answer (docs/method.md §1.3), dispatching on task and grader."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import msgspec

from steadfast.services.scoring.domain.errors import DependencyFailed
from steadfast.services.scoring.domain.reference_grading import (
    WORDLESS,
    combine_votes,
    grade_choice,
    grade_factual_reference,
    judge_messages,
    parse_verdict,
)
from steadfast.shared.answers import answer_key, normalize_factual
from steadfast.shared.contracts.base import Problem
from steadfast.shared.contracts.scoring import GradeRequest, GradeResponse, GradeResult, JudgeVote
from steadfast.shared.errors import Unprocessable


@runtime_checkable  # a handler dependency: litestar checks the value's type
class MathGrader(Protocol):
    """Grades maths answers against their gold (math-verify, in worker processes)."""

    async def grade(self, pairs: list[tuple[str, str]]) -> list[GradeResult]: ...


@runtime_checkable  # a handler dependency: litestar checks the value's type
class Judges(Protocol):
    """LLM judges through the gateway: one greedy reply (or its problem) per judge route and
    messages."""

    async def replies(
        self, calls: list[tuple[str, list[dict[str, str]]]]
    ) -> list[str | Problem]: ...


def _missing(index: int, field: str, task: str) -> Unprocessable:
    return Unprocessable(
        f"task {task!r} needs gold.{field}",
        field=f"items[{index}].gold.{field}",
        title="Missing gold answer",
    )


def check_gold(request: GradeRequest) -> None:
    """Refuses (:class:`Unprocessable`) the first item whose gold answer does not fit the task."""
    for index, item in enumerate(request.items):
        gold = item.gold
        if request.task == "factual" and not gold.answers:
            raise _missing(index, "answers", request.task)
        for position, answer in enumerate(gold.answers or []):
            if request.task == "factual" and not normalize_factual(answer):
                raise Unprocessable(
                    f"{answer!r} has no words to match an answer against",
                    field=f"items[{index}].gold.answers[{position}]",
                    title="Empty gold answer",
                )
        if request.task == "math" and not (gold.answer and gold.answer.strip()):
            raise _missing(index, "answer", request.task)
        if request.task == "choice":
            if gold.correct_option is None:
                raise _missing(index, "correct_option", request.task)
            if item.options and ord(gold.correct_option) - ord("A") >= len(item.options):
                raise Unprocessable(
                    f"{gold.correct_option!r} is beyond the {len(item.options)} options",
                    field=f"items[{index}].gold.correct_option",
                    title="Correct option out of range",
                )


async def grade_with_judges(request: GradeRequest, judges: Judges) -> list[GradeResult]:
    if not request.judge_models:
        raise Unprocessable(
            "the llm grader needs judge_models", field="judge_models", title="No judge"
        )
    for index, model in enumerate(request.judge_models):
        if model in request.judge_models[:index]:
            detail = f"judge {model!r} is named twice: each judge votes once"
            field = f"judge_models[{index}]"
            raise Unprocessable(detail, field=field, title="Judge named twice")
    # an answer without a single word is invalid (docs/method.md §1.3), as the reference grader
    # says: no judge is asked about it
    judged = [
        index for index, item in enumerate(request.items) if normalize_factual(item.answer_text)
    ]
    calls = [
        (model, judge_messages(request.items[index]))
        for index in judged
        for model in request.judge_models
    ]
    per_item = _per_item(await judges.replies(calls), len(request.judge_models))
    replies = dict(zip(judged, per_item, strict=True))
    results = []
    for index, item in enumerate(request.items):
        if index not in replies:
            results.append(WORDLESS)
            continue
        votes = []
        for offset, model in enumerate(request.judge_models):
            reply = replies[index][offset]
            if isinstance(reply, Problem) and reply.status == 404:
                raise Unprocessable(
                    f"judge {model!r}: {reply.detail or reply.title}",
                    field=f"judge_models[{offset}]",
                    title="Unknown judge route",
                )
            if isinstance(reply, Problem):
                raise DependencyFailed(
                    "Judge call failed",
                    f"judge {model!r}: {reply.title}: {reply.detail or ''}".strip(),
                    unavailable=False,
                    field=f"items[{index}]",
                )
            votes.append(JudgeVote(model=model, label=parse_verdict(reply), raw=reply))
        verdict = combine_votes(votes)
        results.append(
            msgspec.structs.replace(
                verdict,
                parsed=normalize_factual(item.answer_text) or None,
                normalized_value=answer_key("factual", item.answer_text),
            )
        )
    return results


def _per_item(replies: list[str | Problem], per_item: int) -> list[list[str | Problem]]:
    """The judges' replies in one list per judged answer."""
    return [replies[start : start + per_item] for start in range(0, len(replies), per_item)]


async def grade(request: GradeRequest, math: MathGrader, judges: Judges) -> GradeResponse:
    check_gold(request)
    if request.task == "factual" and request.grader == "llm":
        results = await grade_with_judges(request, judges)
        return GradeResponse(results=results, grader="llm", judge_models=request.judge_models)
    if request.task == "factual":
        results = [grade_factual_reference(item, request.f1_threshold) for item in request.items]
    elif request.task == "math":
        results = await math.grade(
            [(item.answer_text, item.gold.answer or "") for item in request.items]
        )
    else:
        results = [grade_choice(item) for item in request.items]
    # maths and choice answers are graded deterministically whichever grader was asked for
    return GradeResponse(results=results, grader="reference")
