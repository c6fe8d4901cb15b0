"""Messages that ask the model under test to answer one variant (docs/method.md §1.2)."""

from __future__ import annotations

import string
from dataclasses import dataclass

from steadfast.shared.contracts.base import Task
from steadfast.shared.contracts.evaluator import EvaluationItem, InstructionRole
from steadfast.shared.contracts.gateway import ChatMessage
from steadfast.shared.language import detect_language

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


@dataclass(frozen=True)
class AnswerTemplate:
    """The words of the answer prompt in one language: the instruction of each task and the
    labels before the question, the problem and the passage."""

    instructions: dict[Task, str]
    question: str
    problem: str
    context: str


#: the answer prompt in each language it exists in. To add one, add its template here (every
#: task, the same meaning as the English, the answer format unchanged: a letter, \boxed{}, the
#: words an abstention is read by in ``shared/answers.py``) and its function words to
#: ``shared/language.py`` so that it is detected; a test checks every template is complete
ANSWER_TEMPLATES: dict[str, AnswerTemplate] = {
    "en": AnswerTemplate(INSTRUCTIONS, question="Question", problem="Problem", context="Context"),
    "it": AnswerTemplate(
        {
            "factual": (
                "Rispondi alla domanda in modo conciso, con la sola risposta. Se la domanda è "
                'ambigua o senza risposta, o se non conosci la risposta, scrivi "Non lo so".'
            ),
            "math": (
                "Risolvi il problema. Ragiona passo per passo, poi scrivi la risposta finale "
                "in \\boxed{}."
            ),
            "choice": "Rispondi solo con la lettera dell'opzione corretta, nient'altro.",
        },
        question="Domanda",
        problem="Problema",
        context="Contesto",
    ),
}
DEFAULT_LANGUAGE = "en"


def prompt_language(item_language: str | None, text: str) -> str:
    """The language of the answer prompt: the one named (by the item, else its evaluation),
    else the one ``text`` is in; English when there is no template for it."""
    language = item_language or detect_language(text)
    return language if language in ANSWER_TEMPLATES else DEFAULT_LANGUAGE


def item_language(item: EvaluationItem, evaluation_language: str | None) -> str:
    """The language an item is asked in: its own, else its evaluation's, else its text's."""
    return prompt_language(
        item.language or evaluation_language, f"{item.context or ''} {item.question}"
    )


def option_lines(options: list[str]) -> str:
    letters = string.ascii_uppercase
    return "\n".join(f"{letters[index]}. {option}" for index, option in enumerate(options))


def answer_messages(
    task: Task,
    question: str,
    item: EvaluationItem,
    system_prompt: str | None = None,
    instruction_role: InstructionRole = "user",
    language: str = DEFAULT_LANGUAGE,
) -> list[ChatMessage]:
    """The chat messages for ``question`` (the original or a paraphrase of ``item``).

    With the instruction in the system message, an item's context goes there too: the user
    message then holds the question alone (with its options), which is what a self-paraphrase
    model rewords — never the passage the question is about."""
    words = ANSWER_TEMPLATES[language]
    instruction = words.instructions[task]
    context = f"{words.context}:\n{item.context}" if item.context else None
    if task == "choice":
        asked = f"{words.question}: {question}\n{option_lines(item.options or [])}"
    elif instruction_role == "system":
        asked = question
    else:
        asked = f"{words.problem if task == 'math' else words.question}: {question}"
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
