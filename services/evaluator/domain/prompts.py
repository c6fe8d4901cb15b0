"""Messages that ask the model under test to answer one variant (METHOD.md §1.2)."""

from __future__ import annotations

import string

from shared.contracts.evaluator import EvaluationItem
from shared.contracts.gateway import ChatMessage
from shared.contracts.verify import Task

PROMPT_VERSION = "answer-v1"

FACTUAL_INSTRUCTION = (
    "Answer the question concisely, with the answer only. If the question is ambiguous or "
    'unanswerable, or you do not know the answer, say "I don\'t know".'
)
MATH_INSTRUCTION = "Solve the problem. Reason step by step, then put the final answer in \\boxed{}."
CHOICE_INSTRUCTION = "Answer with the letter of the correct option only, nothing else."


def option_lines(options: list[str]) -> str:
    letters = string.ascii_uppercase
    return "\n".join(f"{letters[index]}. {option}" for index, option in enumerate(options))


def answer_messages(
    task: Task, question: str, item: EvaluationItem, system_prompt: str | None = None
) -> list[ChatMessage]:
    """The chat messages for ``question`` (the original or a paraphrase of ``item``)."""
    parts: list[str] = []
    if item.context:
        parts.append(f"Context:\n{item.context}")
    if task == "math":
        parts.append(f"{MATH_INSTRUCTION}\n\nProblem: {question}")
    elif task == "choice":
        parts.append(
            f"{CHOICE_INSTRUCTION}\n\nQuestion: {question}\n{option_lines(item.options or [])}"
        )
    else:
        parts.append(f"{FACTUAL_INSTRUCTION}\n\nQuestion: {question}")
    messages = [ChatMessage(role="user", content="\n\n".join(parts))]
    if system_prompt:
        messages.insert(0, ChatMessage(role="system", content=system_prompt))
    return messages
