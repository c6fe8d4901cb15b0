"""The words around each number of a text that is written once: what the checks that bind a
number to what it counts (``bindings``), to the way it changes (``changes``) and to what it
is counted per (``periods``) read."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from steadfast.shared.quantities.mention import Quantity
from steadfast.shared.quantities.reading import mentions, normalized_text

_TOKEN = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?|\d+|[,.;:?!]")
#: where the words about a number stop: the end of its clause, or another number
CLAUSE_ENDS = frozenset(["and", "or", "but", "while", "whereas", "than", *",.;:?!"])
#: where a sentence ends
SENTENCE_ENDS = frozenset(".;?!")


@dataclass(frozen=True)
class Surroundings:
    """A number written once, and the lower-cased words of its clause next to it."""

    value: Quantity
    #: the number as written ("12", "12 years", "$5")
    written: str
    #: nearest last
    before: tuple[str, ...]
    after: tuple[str, ...]
    #: where the words after it end in "than": the words after "than", to its clause's end
    than: tuple[str, ...] = ()
    #: the word that ends them ("and" in "than Ann and Bob combined"), or "" at the text's end
    than_next: str = ""
    #: a fraction or a percentage ("one-third", "25%")
    ratio: bool = False


@lru_cache(maxsize=1024)
def numbers_written_once(
    text: str,
    language: str,
    *,
    window: int,
    amounts: bool = True,
    ratios: bool = False,
    ends: frozenset[str] = CLAUSE_ENDS,
) -> tuple[Surroundings, ...]:
    """Each number whose value the text writes once (``amounts``: also those read with a
    unit, "$5", "2 hours"; ``ratios``: fractions and percentages, even without ``amounts``),
    with up to ``window`` words on either side, up to the first of ``ends`` (by default its
    clause's) or another number. Cached: the original of a set is read again for every
    candidate, by several checks."""
    normalised = normalized_text(text)
    found = [
        m
        for m in mentions(normalised, language)
        if not m.soft
        and m.span is not None
        and (amounts or m.dimension is None or (ratios and m.dimension == "ratio"))
    ]
    values = Counter(value for mention in found for value in mention.values)
    surroundings: list[Surroundings] = []
    for mention in found:
        assert mention.span is not None
        start, end = mention.span
        before = _clause(reversed(_TOKEN.findall(normalised[:start])), window, ends)[::-1]
        tokens = [token.lower() for token in _TOKEN.findall(normalised[end:])]
        after = _clause(iter(tokens), window, ends)
        compared = (
            tokens[len(after) + 1 :] if tokens[len(after) : len(after) + 1] == ["than"] else []
        )
        than = _clause(iter(compared), window, ends)
        than_next = compared[len(than)] if compared and len(compared) > len(than) else ""
        surroundings += [
            Surroundings(
                value,
                mention.written,
                tuple(before),
                tuple(after),
                tuple(than),
                than_next,
                ratio=mention.dimension == "ratio",
            )
            for value in mention.values
            if values[value] == 1
        ]
    return tuple(surroundings)


def _clause(tokens: Iterable[str], window: int, ends: frozenset[str]) -> list[str]:
    words: list[str] = []
    for token in tokens:
        lowered = token.lower()
        if lowered in ends or lowered.isdigit() or len(words) == window:
            break
        words.append(lowered)
    return words


def first_changed(
    theirs: dict[Quantity, str], ours: dict[Quantity, str]
) -> tuple[Quantity, str, str] | None:
    """The first number read one way in the original and another in the candidate (its
    period, the way it changes ...): its value, the original's reading and the candidate's."""
    for value, was in theirs.items():
        now = ours.get(value)
        if now is not None and now != was:
            return value, was, now
    return None
