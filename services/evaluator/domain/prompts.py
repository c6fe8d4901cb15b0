"""Messages that ask the model under test to answer one variant (docs/method.md §1.2)."""

from __future__ import annotations

import string

from steadfast.shared.contracts.base import Task
from steadfast.shared.contracts.evaluator import EvaluationItem, InstructionRole
from steadfast.shared.contracts.gateway import ChatMessage

#: named in the rendered report; v2: with the instruction in the system message, an item's
#: context goes there too
PROMPT_VERSION = "answer-v2"

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
    """The chat messages for ``question`` (the original or a paraphrase of ``item``).

    With the instruction in the system message, an item's context goes there too: the user
    message then holds the question alone (with its options), which is what a self-paraphrase
    model rewords — never the passage the question is about."""
    instruction = INSTRUCTIONS[task]
    context = f"Context:\n{item.context}" if item.context else None
    if task == "choice":
        asked = f"Question: {question}\n{option_lines(item.options or [])}"
    elif instruction_role == "system":
        asked = question
    else:
        asked = f"{'Problem' if task == 'math' else 'Question'}: {question}"
    if instruction_role == "system":
        system = [part for part in (system_prompt, instruction, context) if part]
        return [
            ChatMessage(role="system", content="\n\n".join(system)),
            ChatMessage(role="user", content=asked),
        ]
    user = "\n\n".join([*([context] if context else []), f"{instruction}\n\n{asked}"])
    messages = [ChatMessage(role="user", content=user)]
    if system_prompt:
        messages.insert(0, ChatMessage(role="system", content=system_prompt))
    return messages
