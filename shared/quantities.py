"""Quantity check: a rewording keeps every number of the original and adds none (verify's
numbers stage, the gateway's canonicalize guard).

Numbers are read as values, so "3", "three" and "3.0" agree, and "1,000" is one thousand.
"""

from __future__ import annotations

import re
from fractions import Fraction

_UNITS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_WORDS: dict[str, Fraction] = {word: Fraction(value) for value, word in enumerate(_UNITS)}
_WORDS.update({word: Fraction(20 + 10 * index) for index, word in enumerate(_TENS)})
_WORDS.update(
    {
        "dozen": Fraction(12),
        "half": Fraction(1, 2),
        "twice": Fraction(2),
        "double": Fraction(2),
        "thrice": Fraction(3),
        "triple": Fraction(3),
        "quarter": Fraction(1, 4),
        "third": Fraction(1, 3),
        "thirds": Fraction(1, 3),
        "quarters": Fraction(1, 4),
        "fifth": Fraction(1, 5),
        "sixth": Fraction(1, 6),
        "eighth": Fraction(1, 8),
        "tenth": Fraction(1, 10),
        "decade": Fraction(10),
    }
)
_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000}

_NUMBER = re.compile(
    r"(?P<fraction>\d+\s*/\s*\d+)"
    r"|(?P<digits>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
    r"|(?P<word>[a-z]+(?:-[a-z]+)?)",
    re.IGNORECASE,
)


def _word_value(word: str) -> Fraction | None:
    parts = word.lower().split("-")
    if len(parts) == 2 and parts[0] in _TENS and parts[1] in _UNITS[1:10]:
        return _WORDS[parts[0]] + _WORDS[parts[1]]
    return _WORDS.get(word.lower()) if len(parts) == 1 else None


#: digits a number may have to be read as a value; a longer one (Python refuses to read over
#: 4300, and such a value could not be shown) is compared as it is written
_MAX_DIGITS = 100

Quantity = Fraction | str


def _digits_value(written: str) -> Quantity:
    digits = written.replace(",", "")
    return Fraction(digits) if len(digits) <= _MAX_DIGITS else digits


def _fraction_value(written: str) -> Quantity | None:
    numerator, denominator = (part.strip() for part in written.split("/"))
    if max(len(numerator), len(denominator)) > _MAX_DIGITS:
        return f"{numerator}/{denominator}"
    return Fraction(int(numerator), int(denominator)) if int(denominator) else None


def quantities(text: str, *, words: bool = True) -> set[Quantity]:
    """The numeric values written in ``text``: digits and fractions, and number words unless
    ``words`` is false."""
    values: list[Quantity] = []
    for match in _NUMBER.finditer(text):
        if match.group("fraction"):
            fraction = _fraction_value(match.group("fraction"))
            if fraction is not None:
                values.append(fraction)
        elif match.group("digits"):
            values.append(_digits_value(match.group("digits")))
        elif words:
            word = match.group("word").lower()
            if word in _SCALES and values:
                last = values[-1]
                if isinstance(last, Fraction) and abs(last) < 10**_MAX_DIGITS:
                    values[-1] = last * _SCALES[word]
                continue
            value = _word_value(word)
            if value is not None:
                values.append(value)
    return set(values)


def quantity_difference(original: str, candidate: str) -> str | None:
    """Why the quantities differ (None when they agree).

    Numbers written in digits must appear on the other side, in digits or in words; number
    words alone are not required ("an hour" may paraphrase "one hour", "double" "twice").
    """
    missing = quantities(original, words=False) - quantities(candidate)
    added = quantities(candidate, words=False) - quantities(original)
    if not missing and not added:
        return None
    parts = []
    if missing:
        parts.append("missing " + ", ".join(_shown(missing)))
    if added:
        parts.append("added " + ", ".join(_shown(added)))
    return "; ".join(parts)


def _shown(values: set[Quantity]) -> list[str]:
    numbers = sorted(value for value in values if isinstance(value, Fraction))
    written = sorted(value for value in values if isinstance(value, str))
    return [_show(value) for value in numbers] + [f"{value[:12]}…" for value in written]


def _show(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{float(value):g}"
