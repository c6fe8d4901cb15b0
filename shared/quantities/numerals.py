"""Numerals as written: text with its digits made ASCII, numbers read from digits or roman
numerals, and values scaled without growing past what can be compared."""

from __future__ import annotations

import re
import unicodedata
from fractions import Fraction

from steadfast.shared.quantities.mention import Quantity

#: a number too long to read as a value (Python refuses to read over 4300 digits) is compared
#: as it is written
MAX_DIGITS = 100


ROMAN_NUMERAL = re.compile(r"(?=[IVXLC]{2,}$)C{0,3}(XC|XL|L?X{0,3})(IX|IV|V?I{0,3})")
_ROMAN_VALUES = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100}


def roman_value(numeral: str) -> int:
    values = [_ROMAN_VALUES[char] for char in numeral]
    return sum(-v if i + 1 < len(values) and v < values[i + 1] else v for i, v in enumerate(values))


#: where a sentence (or a clause closed by ";") ends, for the readers that compare what each
#: sentence says of its amounts
SENTENCE_END = re.compile(r"(?<=[.;?!])\s+")


def normalized_text(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).replace("\u2044", "/").replace("\u2212", "-")
    text = text.replace("’", "'").replace("ʼ", "'")
    return "".join(_ascii_digit(char) for char in text)


def _ascii_digit(char: str) -> str:
    if char.isdigit() and not char.isascii():
        digit = unicodedata.decimal(char, None)
        return str(digit) if digit is not None else char
    return char


def read_number(written: str) -> Quantity:
    digits = written.replace(",", "")
    return Fraction(digits) if len(digits) <= MAX_DIGITS else written


def scaled_value(value: Quantity, factor: int | Fraction) -> Quantity:
    if isinstance(value, Fraction) and abs(value) < 10**MAX_DIGITS:
        return value * factor
    return value
