"""A number said in another unit: "In how many days will its height be 600 inches?" reworded
"... reach a height of 600 feet?" keeps every number, and asks another problem.

Two readings. An amount the numbers stage reads with its unit (money, time, calendar spans:
"$5", "55 cents", "2 hours") must keep its size: "2 hours" said as "2 minutes" is the same
number in another unit. Any other number followed by a unit word of ``answer_units.UNITS``
("600 inches", "a 4-foot wire", "20 libbre") must not be followed in the candidate by a unit
the original never writes after that number. A unit written another way ("feet" / "ft" /
"foot") is the same unit; a number whose unit the candidate leaves out, or puts before it, is
left to the other checks.
"""

from __future__ import annotations

import re
from collections import defaultdict
from functools import lru_cache

from steadfast.shared.quantities.answer_units import Unit, unit_named
from steadfast.shared.quantities.mention import Mention, Quantity
from steadfast.shared.quantities.reading import mentions, normalized_text

#: the one or two words after a number ("600 inches", "4-foot", "20 square metres")
_AFTER = re.compile(r"\s*-?\s*([^\W\d_]+)(?:\s+([^\W\d_]+))?")


def changed_unit(original: str, candidate: str, language: str = "en") -> str | None:
    """How the candidate says one of the original's numbers in another unit, or None."""
    theirs = _read(original, language)
    ours = _read(candidate, language)
    if said := _resized_amount(theirs, ours):
        return said
    before, after = _units_after(original, theirs), _units_after(candidate, ours)
    for value, units in after.items():
        known = before.get(value)
        if known and (other := units - known):
            return f'"{value} {sorted(known)[0]}" said as "{value} {sorted(other)[0]}"'
    return None


@lru_cache(maxsize=1024)
def _read(text: str, language: str) -> tuple[Mention, ...]:
    """The text's numbers, cached: an original is read again for every candidate."""
    return tuple(mentions(normalized_text(text), language))


def _resized_amount(theirs: tuple[Mention, ...], ours: tuple[Mention, ...]) -> str | None:
    """An amount of the candidate with an amount of the original's number and dimension but
    none of its size: "2 minutes" where the original has "2 hours" and no 2 minutes."""
    for mention in ours:
        if mention.dimension is None or mention.soft:
            continue
        alike = [
            m
            for m in theirs
            if m.dimension == mention.dimension and not m.soft and m.values & mention.values
        ]
        if alike and not any(m.base == mention.base for m in alike):
            return f'"{alike[0].written}" said as "{mention.written}"'
    return None


def _units_after(text: str, found: tuple[Mention, ...]) -> dict[Quantity, set[str]]:
    """Each number's values, with the names of the units written right after it."""
    normalised = normalized_text(text)
    units: dict[Quantity, set[str]] = defaultdict(set)
    for mention in found:
        if mention.span is None or mention.dimension is not None:
            continue
        unit = _unit_after(normalised[mention.span[1] :])
        if unit is not None:
            for value in mention.values:
                units[value].add(unit.name)
    return units


def _unit_after(text: str) -> Unit | None:
    match = _AFTER.match(text)
    if match is None:
        return None
    first, second = match.group(1), match.group(2)
    if second and (unit := unit_named(f"{first} {second}")):
        return unit
    if second and first.lower() in {"square", "cubic", "sq"}:
        return None  # "3 square feet" is an area, which the table may not name
    return unit_named(first)
