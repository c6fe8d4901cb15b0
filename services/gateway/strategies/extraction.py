"""From a model's reply to the answer shown and the key it votes with (shared/answers.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from steadfast.shared.answers import (
    answer_key,
    cut_before_final_answer,
    extract_math_answer,
    last_boxed,
    read_choice_letter,
)
from steadfast.shared.contracts.base import Task


@dataclass(frozen=True)
class Reading:
    """What was read from a reply: its final answer and the key it votes with (None: not
    parseable)."""

    answer: str | None
    key: str | None


def read_answer(
    text: str, task: Task, choices: list[str] | None = None, *, cut: bool = False
) -> Reading:
    """The final answer of ``text`` (maths: the boxed or last value; choice: the option letter;
    otherwise the reply) and its grouping key (None when it cannot be parsed, or when a maths
    reply was ``cut`` at its token limit before it stated a final answer).

    A choice reply is read leniently against the question's ``choices``: a reply such as
    "D. demographic momentum." or the text of option D still votes for D."""
    if task == "choice":
        letter = read_choice_letter(text, choices or None)
        return Reading(answer=letter or text.strip() or None, key=letter)
    if cut_before_final_answer(task, text, cut):
        return Reading(answer=None, key=None)
    answer = extract_math_answer(text) if task == "math" else text.strip() or None
    return Reading(answer=answer, key=answer_key(task, text))


def shown_content(reply: str, reading: Reading, task: Task) -> str:
    """What the caller is shown as the answer: for a choice question the option letter its
    instruction asks for, when one was read; otherwise the reply itself."""
    return reading.key if task == "choice" and reading.key else reply


def infer_task(*replies: str, choices: Sequence[str] = ()) -> Task:
    """The task a caller did not name: choice when the question lists lettered options and at
    least half the replies choose one; else maths when at least half box their answer; else
    factual — so neither one unboxed maths reply (cut at max_tokens, say) nor one stray box in a
    factual vote changes how the whole vote is read, and a word problem with lettered parts
    whose replies box a number stays maths."""
    letters = sum(chooses_option(text, choices) for text in replies)
    boxed = sum(is_boxed(text) for text in replies)
    return task_from_counts(letters, boxed, len(replies))


def chooses_option(reply: str, choices: Sequence[str]) -> bool:
    return len(choices) >= 2 and read_choice_letter(reply, list(choices)) is not None


def task_from_counts(letters: int, boxed: int, replies: int) -> Task:
    """The task of a vote whose ``replies`` include ``letters`` choosing an option and
    ``boxed`` boxing their answer."""
    if letters and 2 * letters >= replies:
        return "choice"
    return "math" if 2 * boxed >= replies else "factual"


def is_boxed(text: str) -> bool:
    return last_boxed(text) is not None
