"""Messages that ask the model under test to answer one variant (METHOD.md §1.2)."""

from __future__ import annotations

import string

from shared.contracts.evaluator import EvaluationItem, InstructionRole
from shared.contracts.gateway import ChatMessage
from shared.contracts.verify import Task

PROMPT_VERSION = "answer-v1"

FACTUAL_INSTRUCTION = (
    "Answer the question concisely, with the answer only. If the question is ambiguous or "
    'unanswerable, or you do not know the answer, say "I don\'t know".'
)
MATH_INSTRUCTION = "Solve the problem. Reason step by step, then put the final answer in \\boxed{}."
CHOICE_INSTRUCTION = "Answer with the letter of the correct option only, nothing else."
INSTRUCTIONS: dict[Task, str] = {
    "factual": FACTUAL_INSTRUCTION,
    "math": MATH_INSTRUCTION,
    "choice": CHOICE_INSTRUCTION,
}


def option_lines(options: list[str]) -> str:
    letters = string.ascii_uppercase
    return "\n".join(f"{letters[index]}. {option}" for index, option in enumerate(options))


def answer_messages(
    task: Task,
    question: str,
    item: EvaluationItem,
    system_prompt: str | None = None,
    instruction_role: InstructionRole = "user",
) -> list[ChatMessage]:
    """The chat messages for ``question`` (the original or a paraphrase of ``item``)."""
    instruction = INSTRUCTIONS[task]
    parts: list[str] = []
    if item.context:
        parts.append(f"Context:\n{item.context}")
    if task == "choice":
        parts.append(f"Question: {question}\n{option_lines(item.options or [])}")
    elif instruction_role == "system" and not parts:
        parts.append(question)
    else:
        parts.append(f"{'Problem' if task == 'math' else 'Question'}: {question}")
    system = [system_prompt] if system_prompt else []
    if instruction_role == "system":
        system.append(instruction)
        user = "\n\n".join(parts)
    else:
        user = "\n\n".join([*parts[:-1], f"{instruction}\n\n{parts[-1]}"])
    messages = [ChatMessage(role="user", content=user)]
    if system:
        messages.insert(0, ChatMessage(role="system", content="\n\n".join(system)))
    return messages
