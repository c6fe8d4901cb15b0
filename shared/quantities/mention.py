"""A number as written in a text, the values it is read as, and when two of them match."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

#: a number's value, or (too long to read as a value) the number as written
Quantity = Fraction | str


@dataclass(frozen=True)
class Mention:
    """A number as written, the values it is read as, and (for an amount) its dimension and
    its size in that dimension's base unit; a *soft* one is never required nor counted as added."""

    written: str
    values: frozenset[Quantity]
    #: "ratio", "money", "time" or "calendar", with the amount in its base unit
    dimension: str | None = None
    base: Quantity | None = None
    soft: bool = False
    #: where it stands in the text as read (Unicode-normalised), and whether it is an ordinal
    span: tuple[int, int] | None = field(default=None, compare=False)
    ordinal: bool = field(default=False, compare=False)
    #: a multiplier ("twice", "double", "3 times"): it matches only another multiplier, so
    #: "half that much, white twice the blue" does not stand in for "2 bolts ... half that much"
    multiple: bool = False

    def matches(self, other: Mention) -> bool:
        if self.multiple != other.multiple:
            return False
        if self.values & other.values:
            return True
        same_dimension = self.dimension is not None and self.dimension == other.dimension
        return same_dimension and self.base is not None and self.base == other.base
