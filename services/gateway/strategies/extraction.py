"""From a model's reply to the answer shown and the key it votes with (shared/answers.py)."""

from __future__ import annotations

from dataclasses import dataclass

from shared.answers import answer_key, extract_math_answer, last_boxed
from shared.contracts.verify import Task


@dataclass(frozen=True)
class Reading:
    answer: str | None
    key: str | None


def read_answer(text: str, task: Task) -> Reading:
    """The final answer of ``text`` (maths: the boxed or last value; otherwise the reply) and its
    grouping key (None when it cannot be parsed)."""
    answer = extract_math_answer(text) if task == "math" else text.strip() or None
    return Reading(answer=answer, key=answer_key(task, text))


def infer_task(*replies: str) -> Task:
    """The task a caller did not name: maths when at least half the replies box their answer,
    else factual — so neither one unboxed maths reply (cut at max_tokens, say) nor one stray box
    in a factual vote changes how the whole vote is read."""
    return task_from_boxes(sum(is_boxed(text) for text in replies), len(replies))


def task_from_boxes(boxed: int, replies: int) -> Task:
    return "math" if 2 * boxed >= replies else "factual"


def is_boxed(text: str) -> bool:
    return last_boxed(text) is not None
