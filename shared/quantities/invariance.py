"""Whether a rewording keeps the quantities of the original: the numbers it lacks, those it adds,
a comparison it turns round or states as a ratio or an amount, a number it moves to another
group, and a rate it gives to something else."""

from __future__ import annotations

import re
from collections.abc import Callable

from steadfast.shared.language import detect_language
from steadfast.shared.quantities.amounts import amount_folded, percentage_said_as_amount
from steadfast.shared.quantities.answer_units import changed_answer_unit, dropped_answer_units
from steadfast.shared.quantities.bindings import FUNCTION_WORDS, swapped_numbers
from steadfast.shared.quantities.changes import (
    compared_with_another,
    count_dropped,
    money_swapped_with_a_count,
    more_said_as_fewer,
    number_given_to_the_rest,
    percent_by_said_as_to,
    ratio_of_a_new_number,
    repetition_folded,
    turned_change,
    turned_comparison,
    turned_multiple,
)
from steadfast.shared.quantities.comparisons import (
    difference_as_amount,
    difference_as_ratio,
    difference_from_a_total,
    difference_said_as_addition,
    difference_without_direction,
    difference_without_its_base,
    dropped_comparison_side,
    reversed_comparison,
)
from steadfast.shared.quantities.groups import regrouped_number
from steadfast.shared.quantities.mention import Mention
from steadfast.shared.quantities.numerals import normalized_text
from steadfast.shared.quantities.periods import (
    alternation_changed,
    changed_period,
    dropped_period,
    narrowed_days,
    pooled_or_split,
    rate_moved_to_another_number,
    year_relation_changed,
)
from steadfast.shared.quantities.rates import moved_rate
from steadfast.shared.quantities.reading import mentions
from steadfast.shared.quantities.restated import restated
from steadfast.shared.quantities.said_units import changed_unit
from steadfast.shared.quantities.totals import total_said_of_one


def _side_or_base(original: str, candidate: str) -> str | None:
    """A comparison side dropped, else a difference said without its base (a side dropped
    says that already)."""
    return dropped_comparison_side(original, candidate) or difference_without_its_base(
        original, candidate
    )


#: how a comparison or a group is read in English only: each says why it differs, or None
_ENGLISH_READINGS: tuple[Callable[[str, str], str | None], ...] = (
    reversed_comparison,
    difference_as_ratio,
    difference_as_amount,
    _side_or_base,
    difference_from_a_total,
    difference_said_as_addition,
    difference_without_direction,
    regrouped_number,
    moved_rate,
    turned_change,
    turned_comparison,
    more_said_as_fewer,
    percent_by_said_as_to,
    turned_multiple,
    compared_with_another,
    ratio_of_a_new_number,
    repetition_folded,
    count_dropped,
    amount_folded,
    percentage_said_as_amount,
    total_said_of_one,
    money_swapped_with_a_count,
    number_given_to_the_rest,
    changed_period,
    dropped_period,
    rate_moved_to_another_number,
    pooled_or_split,
    narrowed_days,
    alternation_changed,
    year_relation_changed,
)


def quantity_difference(original: str, candidate: str, language: str | None = None) -> str | None:
    """Why the candidate's quantities differ from the original's (None when they agree): the
    original's numbers it lacks, the numbers it adds, (in English) a comparison it turns
    round or a number it moves, two numbers that swap what they count, a number said in
    another unit, and a unit the original asks its answer in that it drops. ``language`` (ISO
    639-1) picks the number words; default: the original's language, detected."""
    language = language or detect_language(original) or detect_language(candidate) or "en"
    theirs, ours = mentions(original, language), mentions(candidate, language)
    missing = [m for m in theirs if not m.soft and not any(m.matches(c) for c in ours)]
    missing += _said_only_as_a_percentage(theirs, ours)
    missing += _count_said_only_as_an_amount(theirs, ours, original, candidate)
    added = [c for c in ours if not c.soft and not any(c.matches(m) for m in theirs)]
    if language == "en":
        missing, added = restated(missing, added, original, candidate)
    parts = []
    if missing:
        parts.append("missing " + _listed(missing))
    if added:
        parts.append("added " + _listed(added))
    if language == "en":
        parts += [why for read in _ENGLISH_READINGS if (why := read(original, candidate))]
    if not missing and not added and (swap := swapped_numbers(original, candidate, language)):
        parts.append(swap)
    if unit := changed_unit(original, candidate, language):
        parts.append(f"says a number in another unit: {unit}")
    if dropped := dropped_answer_units(original, candidate):
        parts.append("drops the answer's unit " + ", ".join(f'"{unit}"' for unit in dropped))
    elif other := changed_answer_unit(original, candidate):
        parts.append(other)
    return "; ".join(parts) or None


def _said_only_as_a_percentage(theirs: list[Mention], ours: list[Mention]) -> list[Mention]:
    """The original's bare numbers that the candidate says only as the percentage the original
    also writes: "In a dance class of 20 students, 20% enrolled in ..." reworded "... if 20% are
    in contemporary dance ..." (accepted in a bench run) has lost the 20 students, though "20%"
    matches the value 20."""
    lost = []
    percentages = [their for their in theirs if their.dimension == "ratio"]
    for mention in theirs:
        if mention.soft or mention.dimension is not None:
            continue
        matching = [our for our in ours if mention.matches(our)]
        if (
            matching
            and all(our.dimension == "ratio" for our in matching)
            and any(their.values & mention.values for their in percentages)
        ):
            lost.append(mention)
    return lost


#: a count said in words the number reader does not read as one: "a pair of friends", "a
#: couple of books", "a trio of shirts", "one book an hour"
_COUNT_WORDS = re.compile(
    r"\b(?:pairs?|couple|trio|dozens?|brace|score) of\b|\bone [a-z]+ (?:an?|per|each|every)\b",
    re.IGNORECASE,
)


def _count_said_only_as_an_amount(
    theirs: list[Mention], ours: list[Mention], original: str, candidate: str
) -> list[Mention]:
    """The original's counts ("10 tapered candles": a number with the thing it counts right
    after it) that the candidate writes only as an amount the original also writes, fewer
    times in all: "he can make 10 tapered candles. One pound of beeswax and the wicks cost
    $10.00" reworded "... his supply costs of $10.00 per pound of beeswax and wicks" (accepted
    in a bench run) has lost the 10 candles a pound makes, though "$10.00" matches the value
    10. A number whose unit is left to the reader ("8 hours on Monday and 8 on Tuesday") may
    be said with it, and a count said in words ("a pair of friends") is not read."""
    if _COUNT_WORDS.search(candidate):
        return []
    lost = []
    read = normalized_text(original).lower()
    for mention in theirs:
        if mention.soft or mention.dimension is not None:
            continue
        matching = [our for our in ours if mention.matches(our)]
        if not matching or any(our.dimension in (None, "ratio") for our in matching):
            continue
        written = [their for their in theirs if not their.soft and their.values & mention.values]
        amounts = {their.dimension for their in written if their.dimension is not None}
        fewer = len(matching) < len(written)
        if (
            fewer
            and {our.dimension for our in matching} <= amounts
            and _counts_a_thing(mention, read)
        ):
            lost.append(mention)
    return lost


_NEXT_WORD = re.compile(r"\s*([^\W\d_]+)")


def _counts_a_thing(mention: Mention, read: str) -> bool:
    """Whether the word right after the number is a content word ("10 tapered candles", not "8
    on Tuesday")."""
    if mention.span is None:
        return False
    following = _NEXT_WORD.match(read, mention.span[1])
    return following is not None and following[1] not in FUNCTION_WORDS


def _listed(found: list[Mention]) -> str:
    shown: list[str] = []
    for mention in found:
        text = mention.written if len(mention.written) <= 40 else mention.written[:12] + "…"
        if f'"{text}"' not in shown:
            shown.append(f'"{text}"')
    return ", ".join(shown)
