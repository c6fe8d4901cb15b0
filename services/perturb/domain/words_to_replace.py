"""The words of a question a rewording has to change, named to the generator.

METHOD's lexical filter rejects a candidate that shares 80% of the shorter text's words with the
original. A short question leaves little room: "Who painted the Mona Lisa?" has five words, two of
them a name, so a rewording may keep at most three ("What artist painted the Mona Lisa?" keeps
four and is rejected). A small generator told only "use other words" keeps the words it should
change: in a demo run, 33 of the 39 candidates rejected for that question (96 of 171 over the
eight questions) were too close to the original.

So the generator is told which words to replace: as many as the filter needs, and one more,
question words and auxiliaries first (changing them changes the structure), then small words,
then the rest. Names and numbers are never named: they must stay.
"""

from __future__ import annotations

import math
import re
from collections import Counter

from steadfast.shared.lexical import tokens
from steadfast.shared.question_words import AUXILIARIES, QUESTION_WORDS

#: at most this many words are named (a long maths question needs only a few changed)
MOST_NAMED = 6

_SMALL_WORDS_TEXT = """
the a an of in on at to for from by with and or as that this these those its his her their
il lo la i gli le un una uno di del della dei delle da per con su nel nella e o
"""
#: capitalised at a sentence's start without being a name (besides the words above)
_OPENERS_TEXT = """
each every if then after before when she he they it we you i tell name give list calculate find
determine
"""
#: question words, and the words that ask with them ("how many", "is there")
_QUESTION_WORDS = QUESTION_WORDS | {"many", "much", "there"}
_SMALL_WORDS = frozenset(_SMALL_WORDS_TEXT.split())
_SENTENCE_OPENERS = _QUESTION_WORDS | _SMALL_WORDS | AUXILIARIES | frozenset(_OPENERS_TEXT.split())
_SENTENCE_START = re.compile(r"(?:^|[.?!:;]\s+)[\"'(]*(\w+)")


def words_to_replace(question: str, overlap_limit: float) -> list[str]:
    """The words of ``question`` to name to the generator, in the order to name them, for a
    lexical filter that rejects an overlap of ``overlap_limit`` or more (the request's); none
    when it has no word that may change."""
    words = tokens(question)
    if not words:
        return []
    may_keep = math.ceil(overlap_limit * len(words)) - 1
    to_change = len(words) - may_keep + 1  # one more than the filter needs
    counts = Counter(words)
    kept = _names_and_numbers(question)
    changeable = [word for word in counts if word not in kept]
    named: list[str] = []
    covered = 0
    for word in sorted(changeable, key=_rank):
        if covered >= to_change or len(named) == MOST_NAMED:
            break
        named.append(word)
        covered += counts[word]
    return named


def _rank(word: str) -> int:
    if word in _QUESTION_WORDS or word in AUXILIARIES:
        return 0
    return 1 if word in _SMALL_WORDS else 2


def _names_and_numbers(question: str) -> set[str]:
    """The words written capitalised (a name), except at a sentence's start unless written so
    elsewhere too, a small word between two of those ("Romeo and Juliet", "Statue of Liberty"),
    and the words with a digit; lower-cased as tokens are."""
    openers = {match.group(1) for match in _SENTENCE_START.finditer(question)}
    written = re.findall(r"\w+", question)
    named = [_is_name(word, openers) for word in written]
    kept = set()
    for index, word in enumerate(written):
        inside_a_name = 0 < index < len(written) - 1 and named[index - 1] and named[index + 1]
        joins_a_name = inside_a_name and word.lower() in _SMALL_WORDS
        if named[index] or joins_a_name or any(char.isdigit() for char in word):
            kept.add(word.lower())
    return kept


def _is_name(word: str, openers: set[str]) -> bool:
    return word[0].isupper() and (word not in openers or word.lower() not in _SENTENCE_OPENERS)
