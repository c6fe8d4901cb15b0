"""Amounts of money that keep their value and lose their place.

An amount the original writes twice in one sentence, each time for another thing, and the
candidate writes once: "He always gets a ticket for $7 and popcorn for $7" reworded "he always
spends $7 per visit" (accepted in a bench run, judge 0.68) costs $7 a visit, not $14. A
candidate that names each of the things ("a ticket and popcorn") or says the amount is for each
("$7 each", "both cost $7", "$5 from each parent") passes.

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

from steadfast.shared.inflections import same_word
from steadfast.shared.quantities.changes import how_often
from steadfast.shared.quantities.mention import Mention, Quantity
from steadfast.shared.quantities.numerals import SENTENCE_END
from steadfast.shared.quantities.reading import mentions, normalized_text

#: where the stretch of a sentence about one thing ends
_STRETCH_END = re.compile(r"\s+and\s+|[,;:]\s+")
_WORDS = re.compile(r"[^\W\d_]+")
_NOT_A_THING = frozenset(
    {"a", "an", "the", "for", "of", "to", "on", "in", "at", "by", "he", "she", "they", "it", "his"}
    | {"her", "their", "its", "is", "are", "was", "were", "costs", "cost", "pays", "paid", "too"}
    | {"each", "per", "also", "then", "another", "dollars", "dollar"}
)


def amount_folded(original: str, candidate: str) -> str | None:
    """Which amount the original writes two or more times in one sentence, each time for
    another thing, that the candidate writes fewer times (but once at least) and without
    naming each of those things, or None. A thing is named by a word of the original's
    stretch of the sentence about it (between "and"s and commas) that the other stretches do
    not have: "ticket" and "popcorn" in "a ticket for $7 and popcorn for $7"; "Tom and Jerry
    each have $10" names both of "Tom has $10 and Jerry has $10 too"."""
    candidate = normalized_text(candidate)
    written = Counter(m.base for m in _money(candidate))
    named = {word.lower() for word in _WORDS.findall(candidate)}
    if _FOR_EACH.search(candidate):
        return None
    for sentence in SENTENCE_END.split(normalized_text(original)):
        for base, times in Counter(m.base for m in _money(sentence)).items():
            if not (times >= 2 and 0 < written[base] < times):
                continue
            things = _things_priced(sentence, base)
            if len(things) >= 2 and all(things) and not all(_names(t, named) for t in things):
                amount = next(m.written for m in _money(sentence) if m.base == base)
                return (
                    f"writes {amount} {how_often(written[base])} where one sentence of the "
                    f"original writes it {how_often(times)}, each time for another thing"
                )
    return None


def _names(thing: set[str], named: set[str]) -> bool:
    return any(same_word(word, other) for word in thing for other in named)


#: the amount said for each of the things: "$5 from each parent", "both of Liam's parents"
#: ("each week" is a rate, no thing)
_FOR_EACH = re.compile(
    r"\b(?:each|both|apiece)\b(?!\s+(?:day|week|month|year|hour|minute|time|morning|night)s?\b)",
    re.IGNORECASE,
)


def _things_priced(sentence: str, base: Quantity | None) -> list[set[str]]:
    """For each time the sentence writes the amount, the words of its stretch that the other
    stretches do not have."""
    stretches = [
        {w.lower() for w in _WORDS.findall(stretch)} - _NOT_A_THING
        for stretch in _STRETCH_END.split(sentence)
        if any(m.base == base for m in _money(stretch))
    ]
    return [
        stretch - set().union(*(other for other in stretches if other is not stretch))
        for stretch in stretches
    ]


def percentage_said_as_amount(original: str, candidate: str) -> str | None:
    """Which percentage the candidate says comes to an amount of money that the original keeps
    apart from it, or None."""
    ours = _percentages_as_amounts(candidate)
    for ratio_base, money_base in sorted(ours):
        if _kept_apart(normalized_text(original), ratio_base, money_base):
            ratio, money = ours[(ratio_base, money_base)]
            return f"ties {ratio} to {money}, which the original keeps apart"
    return None


#: words between a percentage and an amount that tie them ("a tip of $6, which was 15% of her
#: bill", "a 20% discount ... and saved $15")
_TIED = re.compile(
    r"\b(?:which|that|worth|amount\w*|sav\w+|came|comes|result\w*|total(?:l?ing|l?ed)|"
    r"equal\w*|is|was|of)\b"
)


def _kept_apart(text: str, ratio_base: Quantity, money_base: Quantity) -> bool:
    """Whether the text writes the percentage and the amount once each, in different sentences
    or in one joined with "and", with no word between that ties them."""
    found = mentions(text, "en")
    ratios = [m for m in found if _is_percentage(m) and m.base == ratio_base]
    amounts = [m for m in found if m.dimension == "money" and m.base == money_base]
    if len(ratios) != 1 or len(amounts) != 1 or not ratios[0].span or not amounts[0].span:
        return False
    first, second = sorted((ratios[0].span, amounts[0].span))
    between = text[first[1] : second[0]].lower()
    if re.search(r"[.;?!]\s", between):  # apart, unless the later sentence ties them
        later = re.split(r"[.;?!]\s", text[first[1] :])[1].lower()
        return not _TIED_ACROSS.search(later)
    return re.search(r"\band\b", between) is not None and not _TIED.search(between)


#: a later sentence that ties a percentage to an amount said before: "The sale price reflects a
#: 20% discount."
_TIED_ACROSS = re.compile(r"\b(?:reflects?|includes?|included|after|which|that)\b")


def _money(text: str) -> list[Mention]:
    return [m for m in mentions(text, "en") if m.dimension == "money" and not m.soft]


#: between a percentage and an amount: "delivery fee of", "fee was added, resulting in an
#: additional"; a share's words ("share of", "off") say the amount is what it is taken of
_BETWEEN_AS_AMOUNT = re.compile(
    r"^\s+(?!of\b)(?:[a-z-]+\s+){1,2}of\s*$|"
    r"^\s+(?:[a-z-]+\s+){1,2}(?:(?:was|is|were)\s+(?:added|charged|applied)\s*)?,?\s*"
    r"(?:resulting in|amounting to|(?:which|that) (?:comes|came) to|coming to)\s+"
    r"(?:an?\s+)?(?:additional\s+|extra\s+)?$"
)
#: an amount said to be what is paid after a percentage: "for $100, which includes a 30%
#: discount" (accepted in a bench run for "costs $100. ... offers him a 30% discount", judge 0.83);
#: "$50,000 after a 10% raise" applies it still
_AMOUNT_AFTER_PERCENTAGE = re.compile(
    r"^\s*,?\s*(?:which|that)\s+(?:already\s+)?(?:includes?|included|reflects?)\s+"
    r"(?:an?\s+|the\s+|his\s+|her\s+|their\s+)?$"
)
_SHARE_WORDS = re.compile(
    r"\b(?:share|portion|part|cut|stake|fraction|chunk|off|slice|rate|interest|return|yield)\b"
)


def _percentages_as_amounts(text: str) -> dict[tuple[Quantity, Quantity], tuple[str, str]]:
    """Each percentage of ``text`` followed by an amount it is said to come to: their values,
    and how they are written."""
    text = normalized_text(text)
    found = mentions(text, "en")
    pairs = {}
    for first, second in pairwise(found):
        if first.span is None or second.span is None:
            continue
        between = text[first.span[1] : second.span[0]].lower()
        if _is_percentage(first) and second.dimension == "money":
            ratio, money = first, second
            tied = _BETWEEN_AS_AMOUNT.search(between) and not _SHARE_WORDS.search(between)
        elif first.dimension == "money" and _is_percentage(second):
            ratio, money = second, first
            tied = _AMOUNT_AFTER_PERCENTAGE.search(between) is not None
        else:
            continue
        if tied and ratio.base is not None and money.base is not None:
            pairs[(ratio.base, money.base)] = (ratio.written, money.written)
    return pairs


def _is_percentage(mention: Mention) -> bool:
    written = mention.written.lower()
    return mention.dimension == "ratio" and ("%" in written or "percent" in written)
