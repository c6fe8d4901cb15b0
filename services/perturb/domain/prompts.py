"""Every prompt the perturb service sends: the one place their texts live.

Change a text → bump its version; the version is recorded with each paraphrase and distractor.
"""

from __future__ import annotations

from dataclasses import dataclass

from steadfast.services.perturb.domain.words_to_replace import words_to_replace
from steadfast.shared.contracts.gateway import ChatMessage
from steadfast.shared.contracts.perturb import Tone
from steadfast.shared.contracts.verify import VerifyThresholds
from steadfast.shared.language import language_name

PARAPHRASE_PROMPT_VERSION = "paraphrase-v9"
#: METHOD's lexical threshold, the default; the example always shows the words it needs changed
METHOD_OVERLAP = VerifyThresholds().overlap
#: the accepted rewordings a request names at most (the latest), to keep the prompt short
MOST_ACCEPTED_SHOWN = 4
DISTRACTOR_PROMPT_VERSION = "distractor-v1"

#: docs/method.md §1.1: one is chosen at random for each plain candidate
HINTS: tuple[str, ...] = (
    "avoid repeating key nouns verbatim",
    "change clause order",
    "vary syntax or the opening",
    "use synonyms for content words where safe",
    "compress slightly",
    "expand slightly with harmless connectives",
    'switch between a question and a request ("Tell me ...") keeping the intent',
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
    "You paraphrase questions. Given a question, write the number of rewordings asked for. Each "
    "asks exactly the same thing in different words and a different structure: keep every name, "
    "number, date, fact and condition, add nothing, drop nothing, keep the intent and the "
    "sentiment, and sound natural. A rewording may be a question or a request with the same "
    'intent ("Tell me how many ..."), never a statement. When the question has several '
    "sentences, reword all of them, not only the last. Never answer or solve the question, and "
    "never name its answer. Follow the style instruction. "
    "Write in the language of the question. Reply with a numbered list, one rewording a line, "
    "nothing else."
)

# a short example teaches the small local model the format; generic on purpose. The question
# comes last: after a message ending "Rewordings: 3" the local model sometimes replied "3" and
# nothing more (one call in every demo set; 1 of 24 sampled calls, 0 of 24 with the count first).
# Its rewordings replace every word the request names (a test holds them to it)
PARAPHRASE_EXAMPLE_QUESTION = "Tom has 3 apples and buys 5 more. How many apples does he have now?"
PARAPHRASE_EXAMPLE_REPLY = (
    "1. After buying 5 more apples, what number of apples is Tom left with, if he started with "
    "3?\n"
    "2. Tom owns 3 apples and then buys 5 more; what is his apple count now?\n"
    "3. Tell me the total of Tom's apples once he adds 5 to the 3 he held."
)


def _language_line(language: str | None) -> str:
    return f"\nWrite the rewordings in {language}." if language else ""


def style_of(hint: str | None, tone: Tone | None) -> str:
    return f"{tone} tone ({TONES[tone]})" if tone else str(hint)


def paraphrase_messages(
    question: str,
    *,
    count: int,
    hint: str | None,
    tone: Tone | None,
    language: str | None,
    feedback: str | None = None,
    accepted: list[str] | None = None,
    overlap_limit: float = METHOD_OVERLAP,
) -> list[ChatMessage]:
    """Messages asking for ``count`` rewordings in one style (exactly one of ``hint`` and
    ``tone``); ``feedback`` says why earlier rewordings were rejected, ``accepted`` which ones
    the set has (new ones must differ from them as from the question). Each request names the
    words of the question to replace (:func:`words_to_replace`) for the lexical filter's
    ``overlap_limit``."""
    avoid = f"\nEarlier rewordings were rejected: {feedback}" if feedback else ""
    if accepted:
        shown = "; ".join(f'"{text}"' for text in accepted[-MOST_ACCEPTED_SHOWN:])
        avoid += f"\nAlready accepted, so word yours differently from these too: {shown}"
    content = (
        f"Rewordings: {count}\nStyle: {style_of(hint, tone)}{avoid}{_language_line(language)}"
        f"{_replace_line(question, overlap_limit)}\nQuestion to rewrite: {question}"
    )
    example = (
        "Rewordings: 3\nStyle: change clause order"
        f"{_replace_line(PARAPHRASE_EXAMPLE_QUESTION, METHOD_OVERLAP)}"
        f"\nQuestion to rewrite: {PARAPHRASE_EXAMPLE_QUESTION}"
    )
    return [
        ChatMessage(role="system", content=_PARAPHRASE_SYSTEM),
        ChatMessage(role="user", content=example),
        ChatMessage(role="assistant", content=PARAPHRASE_EXAMPLE_REPLY),
        ChatMessage(role="user", content=content),
    ]


def _replace_line(question: str, overlap_limit: float) -> str:
    words = words_to_replace(question, overlap_limit)
    listed = ", ".join(f'"{word}"' for word in words)
    return (
        f"\nReplace these words with others, keeping every name and number: {listed}"
        if words
        else ""
    )


#: why a round's candidates were rejected, as the next round's requests are told (by the stage
#: that rejected them; METHOD's filters stay as they are, the generator is only told of them)
FEEDBACK: dict[str, str] = {
    "lexical": "too close to the original's words; change the structure and the opening "
    "and use other words, but keep every name and number",
    "duplicate": "repeats of earlier rewordings; write new ones",
    "states_answer": "one named the answer; never name or hint at the answer",
    "numbers": "a number was changed, dropped or added; keep every number exactly",
    "direction": "what is asked was changed (another thing asked, what it is about dropped, or "
    "turned round: largest became smallest); ask for exactly the same thing",
    "judge": "the meaning changed; ask exactly the same thing, with every name, number and "
    "condition",
    "semantic": "they drifted from the question; stay close to its meaning",
    "clean": "no usable line; reply with the numbered rewordings only",
    "form": "each must ask the question itself: not a statement of an answer, not an offer to "
    "tell, not how or where to find the answer",
}


@dataclass(frozen=True)
class DistractorTemplate:
    """The distractor writer's prompt in one language: the system message of each mode and
    the labels of the user message."""

    system: dict[str, str]
    context: str
    question: str
    correct_answer: str
    avoid: str


#: the distractor writer's prompt in each language it exists in; another language gets the
#: English one with "Write the answer in <language>". To add one, add its template here (both
#: modes, the same meaning as the English); a test checks every template is complete
DISTRACTOR_TEMPLATES: dict[str, DistractorTemplate] = {
    "en": DistractorTemplate(
        system={
            "plausible": (
                "You write wrong answers for quiz questions. Given a question, maybe its context, "
                "and its correct answer, write one answer that sounds plausible for the question "
                "but is wrong. Match the correct answer's type and length. Reply with the answer "
                "only, on one line."
            ),
            "out_of_context": (
                "You write decoy answers for quiz questions. Given a question, maybe its context, "
                "and its correct answer, write one short answer that has the form of an answer "
                "but is unrelated to the context and the question. Reply with the answer only, "
                "on one line."
            ),
        },
        context="Context",
        question="Question",
        correct_answer="Correct answer",
        avoid="Do not repeat any of",
    ),
    "it": DistractorTemplate(
        system={
            "plausible": (
                "Scrivi risposte sbagliate per domande di un quiz. Data una domanda, forse il suo "
                "contesto, e la sua risposta corretta, scrivi una risposta che sembri plausibile "
                "per la domanda ma che sia sbagliata. Rispetta il tipo e la lunghezza della "
                "risposta corretta. Rispondi solo con la risposta, su una riga."
            ),
            "out_of_context": (
                "Scrivi risposte esca per domande di un quiz. Data una domanda, forse il suo "
                "contesto, e la sua risposta corretta, scrivi una risposta breve che abbia la "
                "forma di una risposta ma non abbia nulla a che fare con il contesto e con la "
                "domanda. Rispondi solo con la risposta, su una riga."
            ),
        },
        context="Contesto",
        question="Domanda",
        correct_answer="Risposta corretta",
        avoid="Non ripetere nessuna di queste",
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
    """The writer's messages in the item's ``language`` (an ISO code) where a template exists,
    else in English, asking for the answer in that language (English included: the English
    messages are distractor-v1's, byte for byte, so cached distractors stay valid)."""
    words = DISTRACTOR_TEMPLATES.get(language or "en", DISTRACTOR_TEMPLATES["en"])
    lines = [f"{words.context}: {context}"] if context else []
    lines += [f"{words.question}: {question}", f"{words.correct_answer}: {correct_answer}"]
    if avoid:
        lines.append(f"{words.avoid}: " + "; ".join(avoid))
    if language and words is DISTRACTOR_TEMPLATES["en"]:  # as distractor-v1 always did
        lines.append(f"Write the answer in {language_name(language)}.")
    return [
        ChatMessage(role="system", content=words.system[mode]),
        ChatMessage(role="user", content="\n".join(lines)),
    ]
