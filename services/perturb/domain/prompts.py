"""Every prompt the perturb service sends: the one place their texts live.

Change a text → bump its version; the version is recorded with each paraphrase and distractor.
"""

from __future__ import annotations

from shared.contracts.gateway import ChatMessage
from shared.contracts.perturb import Tone

PARAPHRASE_PROMPT_VERSION = "paraphrase-v3"
DISTRACTOR_PROMPT_VERSION = "distractor-v1"

#: METHOD.md §1.1: one is chosen at random for each plain candidate
HINTS: tuple[str, ...] = (
    "avoid repeating key nouns verbatim",
    "change clause order",
    "vary syntax or the opening",
    "use synonyms for content words where safe",
    "compress slightly",
    "expand slightly with harmless connectives",
    "switch statement/question form keeping the intent",
    "passive/active voice change",
)

TONES: dict[Tone, str] = {
    "formal": "more professional",
    "casual": "relaxed, conversational",
    "polite": 'courteous, "please" if natural',
    "confident": "decisive, no hedging",
    "neutral": "objective, even",
    "supportive": "reassuring, friendly",
    "inquisitive": "curious, may be rhetorical",
}

_PARAPHRASE_SYSTEM = (
    "You paraphrase questions. Given a question, write a new question that asks exactly the "
    "same thing in different words and structure: keep every number, name, fact and condition, "
    "add nothing, drop nothing, keep the intent and sentiment, and sound natural. When the "
    "question has several sentences, rewrite all of them, not only the last. Never answer or "
    "solve the question. Follow the style instruction. Write in the language of the question. "
    "Reply with the rewritten question only, on one line."
)

# short examples teach the small local model the format; they are generic on purpose
_PARAPHRASE_EXAMPLES: tuple[tuple[str, str], ...] = (
    (
        "Question to rewrite: How many legs does a spider have?\n"
        "Style: use synonyms for content words where safe",
        "What number of legs do spiders possess?",
    ),
    (
        "Question to rewrite: Tom has 3 apples and buys 5 more. How many apples does he have "
        'now?\nStyle: polite tone (courteous, "please" if natural)',
        "Tom starts with 3 apples and then buys 5 more; could you please tell me how many "
        "apples he has now?",
    ),
)


def _language_line(language: str | None) -> str:
    return f"\nWrite the rewritten question in {language}." if language else ""


def paraphrase_messages(
    question: str, *, hint: str | None, tone: Tone | None, language: str | None
) -> list[ChatMessage]:
    """Messages asking for one candidate; exactly one of ``hint`` and ``tone`` is given."""
    style = f"{tone} tone ({TONES[tone]})" if tone else str(hint)
    messages = [ChatMessage(role="system", content=_PARAPHRASE_SYSTEM)]
    for user, assistant in _PARAPHRASE_EXAMPLES:
        messages.append(ChatMessage(role="user", content=user))
        messages.append(ChatMessage(role="assistant", content=assistant))
    content = f"Question to rewrite: {question}\nStyle: {style}{_language_line(language)}"
    messages.append(ChatMessage(role="user", content=content))
    return messages


_DISTRACTOR_SYSTEM = {
    "plausible": (
        "You write wrong answers for quiz questions. Given a question, maybe its context, and its "
        "correct answer, write one answer that sounds plausible for the question but is wrong. "
        "Match the correct answer's type and length. Reply with the answer only, on one line."
    ),
    "out_of_context": (
        "You write decoy answers for quiz questions. Given a question, maybe its context, and its "
        "correct answer, write one short answer that has the form of an answer but is unrelated "
        "to the context and the question. Reply with the answer only, on one line."
    ),
}


def distractor_messages(
    *,
    mode: str,
    question: str,
    correct_answer: str,
    context: str | None,
    avoid: list[str],
    language: str | None,
) -> list[ChatMessage]:
    lines = [f"Context: {context}"] if context else []
    lines += [f"Question: {question}", f"Correct answer: {correct_answer}"]
    if avoid:
        lines.append("Do not repeat any of: " + "; ".join(avoid))
    if language:
        lines.append(f"Write the answer in {language}.")
    return [
        ChatMessage(role="system", content=_DISTRACTOR_SYSTEM[mode]),
        ChatMessage(role="user", content="\n".join(lines)),
    ]
