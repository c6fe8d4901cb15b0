"""Number words of the languages the quantity check reads (English and Italian), and units.

A word may be *soft*: it can stand for something other than a number ("one" for "someone",
Italian "sei" for "you are", "secondo" for "according to"), so it is never required to reappear
nor counted as added, but it still matches a number written on the other side.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from steadfast.shared.lexical import fold_accents


@dataclass(frozen=True)
class Lexicon:
    """One language's number words: cardinals, scales, ordinals, fractions, percentages, and
    the soft words that may not be numbers."""

    #: words read as one cardinal (units, teens, tens), which may combine into a larger one
    cardinals: dict[str, int]
    #: words that multiply what comes before them ("hundred", "mila")
    scales: dict[str, int]
    #: ordinals ("third"), which after a cardinal or an article are a fraction's denominator
    ordinals: dict[str, int]
    #: denominator words always read as a fraction's denominator ("thirds", "quarti")
    denominators: dict[str, int]
    #: words that are a fraction or a multiple on their own ("half", "twice", "doppio")
    values: dict[str, Fraction]
    #: an indefinite article: "a hundred", "a third", "an hour"
    articles: frozenset[str]
    #: the word joining the parts of a cardinal ("one hundred and ten")
    joiner: str
    percent: tuple[tuple[str, ...], ...]
    soft: frozenset[str]
    #: read a word that is not in ``cardinals`` as a compound cardinal (Italian writes them as
    #: one word: "duemilacinquecento")
    compound: bool = False


_EN_UNITS = [
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
_EN_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_EN_ORDINAL_UNITS = [
    "zeroth",
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
    "eleventh",
    "twelfth",
    "thirteenth",
    "fourteenth",
    "fifteenth",
    "sixteenth",
    "seventeenth",
    "eighteenth",
    "nineteenth",
]
_EN_ORDINAL_TENS = "twentieth thirtieth fortieth fiftieth sixtieth seventieth eightieth ninetieth"


def _english() -> Lexicon:
    cardinals = {word: value for value, word in enumerate(_EN_UNITS)}
    cardinals.update({word: 20 + 10 * index for index, word in enumerate(_EN_TENS)})
    ordinals = {word: value for value, word in enumerate(_EN_ORDINAL_UNITS) if value}
    ordinals.update({w: 20 + 10 * i for i, w in enumerate(_EN_ORDINAL_TENS.split())})
    ordinals.update({"hundredth": 100, "thousandth": 1000, "millionth": 1_000_000})
    denominators = {
        word + "s": value for word, value in ordinals.items() if value >= 3 and word != "second"
    }
    denominators.update({"quarter": 4, "quarters": 4, "halves": 2})
    values = {
        "half": Fraction(1, 2),
        "twice": Fraction(2),
        "double": Fraction(2),
        "doubled": Fraction(2),
        "doubles": Fraction(2),
        "thrice": Fraction(3),
        "triple": Fraction(3),
        "tripled": Fraction(3),
        "triples": Fraction(3),
        "treble": Fraction(3),
        "quadruple": Fraction(4),
        "quadrupled": Fraction(4),
        "twofold": Fraction(2),
        "threefold": Fraction(3),
        "fourfold": Fraction(4),
        "both": Fraction(2),
    }
    return Lexicon(
        cardinals=cardinals,
        scales={
            "dozen": 12,
            "hundred": 100,
            "thousand": 1000,
            "million": 1_000_000,
            "billion": 1_000_000_000,
            "trillion": 1_000_000_000_000,
        },
        ordinals=ordinals,
        denominators=denominators,
        values=values,
        articles=frozenset({"a", "an"}),
        joiner="and",
        percent=(("percent",), ("per", "cent"), ("pct",)),
        soft=frozenset({"one", "once", "second", "both"}),
    )


_IT_UNITS = {
    "zero": 0,
    "uno": 1,
    "una": 1,
    "un": 1,
    "due": 2,
    "tre": 3,
    "quattro": 4,
    "cinque": 5,
    "sei": 6,
    "sette": 7,
    "otto": 8,
    "nove": 9,
    "dieci": 10,
    "undici": 11,
    "dodici": 12,
    "tredici": 13,
    "quattordici": 14,
    "quindici": 15,
    "sedici": 16,
    "diciassette": 17,
    "diciotto": 18,
    "diciannove": 19,
}
_IT_TENS = {
    "venti": 20,
    "trenta": 30,
    "quaranta": 40,
    "cinquanta": 50,
    "sessanta": 60,
    "settanta": 70,
    "ottanta": 80,
    "novanta": 90,
}
_IT_ORDINALS = {
    "primo": 1,
    "prima": 1,
    "primi": 1,
    "prime": 1,
    "secondo": 2,
    "seconda": 2,
    "terzo": 3,
    "terza": 3,
    "terzi": 3,
    "terze": 3,
    "quarto": 4,
    "quarta": 4,
    "quarti": 4,
    "quarte": 4,
    "quinto": 5,
    "quinta": 5,
    "sesto": 6,
    "sesta": 6,
    "settimo": 7,
    "settima": 7,
    "ottavo": 8,
    "ottava": 8,
    "nono": 9,
    "nona": 9,
    "decimo": 10,
    "decima": 10,
}


def _italian() -> Lexicon:
    return Lexicon(
        cardinals={**_IT_UNITS, **_IT_TENS, "cento": 100, "mille": 1000},
        scales={
            "mila": 1000,
            "milione": 1_000_000,
            "milioni": 1_000_000,
            "miliardo": 1_000_000_000,
            "miliardi": 1_000_000_000,
            "dozzina": 12,
        },
        ordinals=_IT_ORDINALS,
        denominators={"terzi": 3, "quarti": 4, "quinti": 5, "sesti": 6, "decimi": 10},
        values={
            "metà": Fraction(1, 2),
            "meta": Fraction(1, 2),
            "mezzo": Fraction(1, 2),
            "mezza": Fraction(1, 2),
            "mezz": Fraction(1, 2),
            "doppio": Fraction(2),
            "doppia": Fraction(2),
            "triplo": Fraction(3),
            "tripla": Fraction(3),
            "entrambi": Fraction(2),
            "entrambe": Fraction(2),
            "ambedue": Fraction(2),
        },
        articles=frozenset({"un", "una", "uno"}),
        joiner="e",
        percent=(("percento",), ("per", "cento")),
        # "sei": "you are"; "secondo": "according to"; "prima": "before"; "un(a)": "a"
        soft=frozenset(
            {"un", "una", "uno", "sei", "secondo", "prima", "entrambi", "entrambe", "ambedue"}
        ),
        compound=True,
    )


LEXICONS: dict[str, Lexicon] = {"en": _english(), "it": _italian()}


def italian_compound(word: str) -> int | None:
    """The value of an Italian cardinal written as one word ("ventitré", "duemilacinquecento",
    "centottanta", "millenovecentonovantotto"), or None."""
    word = fold_accents(word)
    if not word or len(word) > 60:
        return None
    return _italian_number(word)


def _italian_number(word: str) -> int | None:
    for scale_word, scale in (("miliardi", 10**9), ("milioni", 10**6), ("mila", 1000)):
        head, found, tail = word.partition(scale_word)
        if found and head:
            return _combine(_italian_below_thousand(head), scale, tail)
    if word.startswith("mille"):
        return _combine(1, 1000, word[len("mille") :])
    return _italian_below_thousand(word)


def _combine(head: int | None, scale: int, tail: str) -> int | None:
    if head is None:
        return None
    rest = _italian_below_thousand(tail) if tail else 0
    return None if rest is None else head * scale + rest


def _italian_below_thousand(word: str) -> int | None:
    """Hundreds, tens and units, with the elisions ("centotto", "centottanta", "ventuno")."""
    hundreds, found, after = word.partition("cent")
    if not found:
        return _italian_tens(word) if word else None
    count = 1 if not hundreds else _IT_UNITS.get(hundreds)
    if count is None or (count < 2 and hundreds):
        return None
    if not after.startswith("o"):
        return None
    # "cento" + rest, or "cent" + a rest starting with "o" ("centotto": the "o" of "otto")
    for rest in (after[1:], after):
        value = _italian_tens(rest) if rest else 0
        if value is not None:
            return count * 100 + value
    return None


def _add(total: int, value: int | None) -> int | None:
    return None if value is None else total + value


def _italian_tens(word: str) -> int | None:
    if word in _IT_UNITS:
        return _IT_UNITS[word]
    for tens_word, value in _IT_TENS.items():
        stem = tens_word[:-1]  # "vent", "trent": the vowel drops before "uno" and "otto"
        if word == tens_word:
            return value
        for prefix in (tens_word, stem):
            if word.startswith(prefix) and word[len(prefix) :] in _IT_UNITS:
                unit = _IT_UNITS[word[len(prefix) :]]
                if 1 <= unit <= 9:
                    return value + unit
    return None


def italian_ordinal(word: str) -> int | None:
    """An Italian ordinal in -esimo ("undicesimo", "ventitreesimo", "centesimo"), or None."""
    folded = fold_accents(word)
    for ending in ("esimo", "esima", "esimi", "esime"):
        if folded.endswith(ending) and len(folded) > len(ending) + 2:
            stem = folded[: -len(ending)]
            for restored in (stem, stem + "i", stem + "e", stem + "o", stem + "a"):
                value = italian_compound(restored)
                if value is not None and value > 10:
                    return value
    return None
