"""Which sentence of a text asks: the direction and aggregate checks compare what the original
and a candidate ask, so they read the same sentence of each."""

from __future__ import annotations

import re

from steadfast.services.verify.domain.form import asks

_WORD = re.compile(r"[a-z]+")
#: a sentence ends at ".", "?" or "!" before a capital ...
SENTENCE_END = re.compile(r"(?<=[.?!])\s+(?=[A-Z])")
#: ... but not after an initial or a title ("Gerard P. Kuiper", "Dr. Smith"), unless a question
#: or a request opens after it ("She moved to the U.S. When did she arrive?")
_INITIAL_OR_TITLE = re.compile(r"(?:\b[A-Z]|\b(?:Mr|Mrs|Ms|Dr|St|Jr|Sr|Mt|Prof))\.$")
_OPENS_A_QUESTION = re.compile(
    r"^(?:who|whom|whose|what|which|where|when|why|how|is|are|was|were|do|does|did|can|could|"
    r"will|would|has|have|had|should|tell|find|calculate|determine|please)\b",
    re.IGNORECASE,
)


def sentences(text: str) -> list[str]:
    """The sentences of ``text``: "Who won the Gerard P. Kuiper Prize in 2001?" is one."""
    merged: list[str] = []
    for piece in SENTENCE_END.split(text.strip()):
        if merged and _INITIAL_OR_TITLE.search(merged[-1]) and not _OPENS_A_QUESTION.match(piece):
            merged[-1] = f"{merged[-1]} {piece}"
        else:
            merged.append(piece)
    return [sentence.strip() for sentence in merged if sentence.strip()]


#: the words of a courtesy question after the question ("Could you tell me?", "Could you
#: please let me know?"), which asks nothing of its own
_COURTESY_TEXT = (
    "could can would will do does you please kindly tell let me us know share help answer this "
    "that it i ask"
)
_COURTESY = frozenset(_COURTESY_TEXT.split())


def asking_sentence(text: str) -> str:
    """The sentence that asks: the last one with a question mark that is no courtesy question
    ("At what temperature does water boil? Could you tell me?", written twice in a demo run,
    asks in its first), else the last request ("Find the total number of fireworks Hannah will
    see." may come before the story), else the last sentence."""
    said = sentences(text)
    questions = [s for s in said if "?" in s]
    asking = [s for s in questions if not _courtesy(s)] or questions
    asking = asking or [s for s in said if asks(s)]
    return (asking or said or [text.strip()])[-1]


def questions_asked(text: str) -> list[str]:
    """The sentences of ``text`` that ask a question of their own: a courtesy question after
    it ("Could you tell me?", "Do you know?") asks nothing, nor a condition written with a
    question mark ("How many gold coins does Gretchen have? If she has 110 coins and silver
    coins are 30 less than gold coins?", refused in a demo run as two questions)."""
    return [s for s in sentences(text) if "?" in s and not _courtesy(s) and not _condition_only(s)]


#: words that open a condition within a question: "if Seattle has 20 sheep", "given that ..."
CONDITION_WORDS = r"if|given|when|since|assuming|provided|knowing|considering"
#: a condition's opening as a sentence ("when" and "since" open questions there), and the words
#: that would make it ask something after all
_CONDITION_OPENING = re.compile(r"^(?:if|given|assuming|suppose|supposing|provided)\b", re.I)
_QUESTION_WORD = re.compile(r"\b(?:who|whom|whose|what|which|where|when|why|how)\b", re.I)


def _condition_only(sentence: str) -> bool:
    return bool(_CONDITION_OPENING.match(sentence)) and not _QUESTION_WORD.search(sentence)


def _courtesy(sentence: str) -> bool:
    return set(_WORD.findall(sentence.lower())) <= _COURTESY
