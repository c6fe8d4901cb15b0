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
    """The task a caller did not name: maths when a reply boxes its answer, else factual."""
    return "math" if any(last_boxed(text) is not None for text in replies) else "factual"
