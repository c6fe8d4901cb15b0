"""Amounts of money that keep their value and lose their place.

An amount the original writes twice in one sentence, each time for another thing, and the
candidate writes once: "He always gets a ticket for $7 and popcorn for $7" reworded "he always
spends $7 per visit" (accepted in a bench run, judge 0.68) costs $7 a visit, not $14. The
candidate may say the amount is the same for each ("$7 each", "the same price").

And a percentage said to be an amount: "they tacked on a 25% fee to his final total and charged
him $3.00 in delivery fees" reworded "after adding a 25% delivery fee of $3.00" or "a 25% fee
was added, resulting in an additional $3.00" (both accepted in a bench run, judge 0.82 and
0.87): the 25% of $40 and the $3.00 were two fees. A percentage "of" an amount with no word
between ("25% of $40") is a share of it, and so is one of a share's words ("a 25% share of
$40"); neither says what the percentage comes to.

English only; the numbers check has already found every number in both texts.
"""

from __future__ import annotations

import re
from collections import Counter
from itertools import pairwise

from steadfast.shared.quantities.mention import Mention, Quantity
from steadfast.shared.quantities.reading import mentions, normalized_text

_SENTENCE_END = re.compile(r"(?<=[.;?!])\s+")
#: the same amount said again without writing it: "$7 each", "the same price"
_EACH_AFTER = re.compile(r"^\s*(?:each|apiece|a piece|per (?:item|piece|person|one))\b")
_SAME_ANYWHERE = re.compile(
    r"\b(?:the same|as much|equally|likewise|alike|identical|of each|each of)\b", re.IGNORECASE
)


def amount_folded(original: str, candidate: str) -> str | None:
    """Which amount the original writes two or more times in one sentence and the candidate
    writes fewer times (but once at least) and never for each, or None."""
    candidate = normalized_text(candidate)
    ours = _money(candidate)
    if _SAME_ANYWHERE.search(candidate) or any(
        _EACH_AFTER.match(candidate[m.span[1] :]) for m in ours if m.span
    ):
        return None
    written = Counter(m.base for m in ours)
    for sentence in _SENTENCE_END.split(normalized_text(original)):
        for base, times in Counter(m.base for m in _money(sentence)).items():
            if times >= 2 and 0 < written[base] < times:
                amount = next(m.written for m in _money(sentence) if m.base == base)
                return (
                    f"writes {amount} {_how_often(written[base])} where one sentence of the "
                    f"original writes it {_how_often(times)}, each time for another thing"
                )
    return None


def percentage_said_as_amount(original: str, candidate: str) -> str | None:
    """Which percentage the candidate says comes to an amount of money that the original keeps
    apart from it, or None."""
    theirs, ours = _percentages_as_amounts(original), _percentages_as_amounts(candidate)
    for key in sorted(ours.keys() - theirs.keys()):
        ratio, money = ours[key]
        return f"says {ratio} comes to {money}, which the original does not"
    return None


def _money(text: str) -> list[Mention]:
    return [m for m in mentions(text, "en") if m.dimension == "money" and not m.soft]


#: between a percentage and an amount: "delivery fee of", "fee was added, resulting in an
#: additional"; a share's words ("share of", "off") say the amount is what it is taken of
_BETWEEN_AS_AMOUNT = re.compile(
    r"^\s+(?:[a-z-]+\s+){1,2}of\s*$|"
    r"^[^.;?!$%]*\b(?:resulting in|amounting to|totall?ing|which (?:is|was|comes to|came to)|"
    r"worth|equal to|equall?ing|that is|that was)\s+(?:an?\s+)?(?:additional\s+|extra\s+)?$"
)
_SHARE_WORDS = re.compile(r"\b(?:share|portion|part|cut|stake|fraction|chunk|off|slice)\b")


def _percentages_as_amounts(text: str) -> dict[tuple[Quantity, Quantity], tuple[str, str]]:
    """Each percentage of ``text`` followed by an amount it is said to come to: their values,
    and how they are written."""
    text = normalized_text(text)
    found = mentions(text, "en")
    pairs = {}
    for ratio, money in pairwise(found):
        if not _is_percentage(ratio) or money.dimension != "money":
            continue
        if ratio.span is None or money.span is None or ratio.base is None or money.base is None:
            continue
        between = text[ratio.span[1] : money.span[0]].lower()
        if _BETWEEN_AS_AMOUNT.search(between) and not _SHARE_WORDS.search(between):
            pairs[(ratio.base, money.base)] = (ratio.written, money.written)
    return pairs


def _is_percentage(mention: Mention) -> bool:
    written = mention.written.lower()
    return mention.dimension == "ratio" and ("%" in written or "percent" in written)


def _how_often(count: int) -> str:
    return {1: "once", 2: "twice"}.get(count, f"{count} times")
