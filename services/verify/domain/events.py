"""Which happening a "how many times" question counts. A story can tell two happenings of one
thing apart ("The first time it went off today, it rang four times"); a rewording that keeps
the thing but counts the other happening asks another question: "How many times did the alarm
go off today?" for "How many times did the alarm ring in all?" (3, not 22; accepted in a bench
run, judge 0.57)."""

from __future__ import annotations

import re

from steadfast.services.verify.domain.asking import CONDITION_WORDS, asking_sentence, sentences
from steadfast.shared.inflections import every_form, same_word
from steadfast.shared.quantities.bindings import FUNCTION_WORDS
from steadfast.shared.quantities.reading import DETERMINERS  # "the" alone kept is no thing kept

#: what follows "how many times" and its auxiliary: the thing, then what it does
_TIMES_ASKED = re.compile(
    r"\bhow many times\s+(?:did|does|do|has|have|had|will|would|can|could|is|was|were|are)\s+"
    r"([^,;:?.]*)",
    re.IGNORECASE,
)
#: where the clause that asks ends ("..., given that", "... if it")
_CONDITION = re.compile(rf"\b(?:{CONDITION_WORDS}|after|before|while)\b")
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
#: verbs that say what must or may happen, not what happens
_MODALS = frozenset({"have", "has", "had", "need", "needs", "must", "get", "gets", "got"})
_MODALS |= {"want", "wants", "try", "tries", "plan", "plans", "expect", "manage", "able"}


def counted_event_changed(original: str, candidate: str) -> str | None:
    """Why the candidate counts another happening of the thing the original's "how many times"
    counts: the same thing named, then another verb, one the story tells apart from the
    original's in one of its sentences. None otherwise (another verb the story does not
    use is a rewording: "ring" / "sound")."""
    asked, reworded = asking_sentence(original), asking_sentence(candidate)
    ours, theirs = _counted(asked), _counted(reworded)
    if not ours or not theirs:
        return None
    kept = 0
    while kept < min(len(ours), len(theirs)) and same_word(ours[kept], theirs[kept]):
        kept += 1
    if kept in (len(ours), len(theirs)) or all(w in DETERMINERS for w in ours[:kept]):
        return None
    was, now = ours[kept], theirs[kept]
    if {was, now} & (FUNCTION_WORDS | _MODALS):
        return None  # "does John need to refill" for "does John have to refill"
    objects = {w for w in ours[kept + 1 :] if w not in FUNCTION_WORDS}
    if any(_says(" ".join(theirs[kept + 1 :]), word) for word in objects):
        return None  # "visit the park" for "go to the park": one happening, one place
    told = [sentence for sentence in sentences(original) if sentence != asked]
    if not any(_says(sentence, was) and _says(sentence, now) for sentence in told):
        return None
    return f"counts the times it did '{now}', where the original counts the times it did '{was}'"


def _counted(sentence: str) -> list[str]:
    found = _TIMES_ASKED.search(sentence)
    if found is None:
        return []
    clause = _CONDITION.split(found.group(1).lower(), maxsplit=1)[0]
    return _WORD.findall(clause)


def _says(sentence: str, word: str) -> bool:
    forms = every_form(word)
    return any(said in forms for said in _WORD.findall(sentence.lower()))
