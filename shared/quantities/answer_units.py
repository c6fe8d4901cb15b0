"""The unit a question asks its answer in ("At what temperature in degrees Celsius does water
boil?"): a rewording that drops it, or asks in another unit, asks for another number (100 is
not 212), though every number of the question is kept.

Only a question's request for a unit counts: "in" + the unit's plural name (or symbol) in a
question that asks how much, how many, what or which. Time units count only in a question that
asks how long or how old, at the end of a clause ("How old is he, in years?"): "warmest winter in
years", "came in second", "rich in ore" ask for no unit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from functools import cache


@dataclass(frozen=True)
class Unit:
    """A unit an answer may be asked in: how a question asks for it, and every way of naming
    it that keeps it (abbreviations, symbols, singulars, Italian)."""

    name: str
    asked_as: tuple[str, ...]
    named_as: tuple[str, ...]
    time: bool = False
    #: what it measures and its size in that measure's base unit (metre, square metre,
    #: kilogram, litre, second), where a conversion is exact or fixed; None for temperature,
    #: percent and money
    measures: tuple[str, Fraction] | None = None


UNITS: tuple[Unit, ...] = (
    Unit("degrees Celsius", ("celsius", "centigrade", "°c", "ºc"), ("°c", "ºc", "° c")),
    Unit("degrees Fahrenheit", ("fahrenheit", "°f", "ºf"), ("°f", "ºf", "° f")),
    Unit("kelvin", ("kelvin", "kelvins"), ()),
    Unit(
        "square kilometres",
        ("square kilometres", "square kilometers", "km²", "km2"),
        ("square kilometre", "square kilometer", "sq km", "km2", "km²"),
        measures=("area", Fraction(1000000)),
    ),
    Unit(
        "square metres",
        ("square metres", "square meters", "m²", "m2", "metri quadrati"),
        ("square metre", "square meter", "sq m", "m2", "m²", "mq"),
        measures=("area", Fraction(1)),
    ),
    Unit(
        "kilometres",
        ("kilometres", "kilometers", "km", "chilometri"),
        ("kilometre", "kilometer", "kms"),
        measures=("length", Fraction(1000)),
    ),
    Unit(
        "centimetres",
        ("centimetres", "centimeters", "cm", "centimetri"),
        ("centimetre", "centimeter"),
        measures=("length", Fraction(1, 100)),
    ),
    Unit(
        "millimetres",
        ("millimetres", "millimeters", "mm", "millimetri"),
        ("millimetre", "millimeter"),
        measures=("length", Fraction(1, 1000)),
    ),
    Unit(
        "metres",
        ("metres", "meters", "metri"),
        ("metre", "meter", "m", "metro"),
        measures=("length", Fraction(1)),
    ),
    Unit("miles", ("miles", "miglia"), ("mile", "mi"), measures=("length", Fraction("1609.344"))),
    Unit(
        "yards", ("yards", "iarde"), ("yard", "yd", "yds"), measures=("length", Fraction("0.9144"))
    ),
    Unit("feet", ("feet", "piedi"), ("foot", "ft"), measures=("length", Fraction("0.3048"))),
    Unit("inches", ("inches", "pollici"), ("inch", "in."), measures=("length", Fraction("0.0254"))),
    Unit(
        "kilograms",
        ("kilograms", "kilogrammes", "kg", "chilogrammi"),
        ("kilogram", "kilogramme", "kilo", "kilos", "kgs", "chili"),
        measures=("mass", Fraction(1)),
    ),
    Unit(
        "grams",
        ("grams", "grammes", "grammi"),
        ("gram", "gramme", "g"),
        measures=("mass", Fraction(1, 1000)),
    ),
    Unit(
        "pounds",
        ("pounds", "lbs", "libbre"),
        ("pound", "lb"),
        measures=("mass", Fraction("0.45359237")),
    ),
    Unit(
        "ounces",
        ("ounces", "oz"),
        ("ounce",),
        measures=("mass", Fraction("0.028349523125")),
    ),
    Unit(
        "tonnes",
        ("tonnes", "tons", "tonnellate"),
        ("tonne", "ton", "t"),
        measures=("mass", Fraction(1000)),
    ),
    Unit(
        "litres",
        ("litres", "liters", "litri"),
        ("litre", "liter", "l"),
        measures=("volume", Fraction(1)),
    ),
    Unit(
        "gallons",
        ("gallons", "galloni"),
        ("gallon", "gal"),
        measures=("volume", Fraction("3.785411784")),  # US
    ),
    Unit("percent", ("percent", "per cent", "percentage", "%", "per cento"), ("percentuale",)),
    Unit("dollars", ("dollars", "usd", "dollari"), ("dollar", "$", "us$")),
    Unit("euros", ("euros", "eur"), ("euro", "€")),
    Unit(
        "hours",
        ("hours", "ore"),
        ("hour", "hr", "hrs", "h"),
        time=True,
        measures=("time", Fraction(3600)),
    ),
    Unit(
        "minutes",
        ("minutes", "minuti"),
        ("minute", "min", "mins"),
        time=True,
        measures=("time", Fraction(60)),
    ),
    Unit(
        "seconds",
        ("seconds", "secondi"),
        ("second", "sec", "secs", "s"),
        time=True,
        measures=("time", Fraction(1)),
    ),
    Unit("days", ("days", "giorni"), ("day",), time=True, measures=("time", Fraction(86400))),
    Unit("years", ("years", "anni"), ("year", "yrs"), time=True),
)

#: how a question asks for a unit: "in", "expressed in", "measured in", "in terms of"
_ASKED_IN = r"(?:in\s+terms\s+of|(?:expressed|measured|given)\s+in|espress[oa]\s+in|in)"
_DEGREES = r"(?:(?:degrees?|gradi)\s+)?"
#: a question asking for an amount (a measure: how much, what, which...)
_MEASURE_CUE = re.compile(
    r"\b(?:how|what|which|quanto|quanta|quanti|quante|quale|qual|che)\b", re.IGNORECASE
)
#: a question asking for a span of time or an age
_TIME_CUE = re.compile(
    r"\b(?:how\s+(?:long|old|many|much\s+time)|quanto\s+tempo|quanti|quanto\s+dura)\b",
    re.IGNORECASE,
)
#: the end of a clause after a time unit ("…, in years?", "… in hours.")
_CLAUSE_END = r"(?=\s*(?:[?.,;:!]|$))"


@cache
def _asking(unit: Unit) -> re.Pattern[str]:
    words = "|".join(re.escape(word) for word in sorted(unit.asked_as, key=len, reverse=True))
    after = _CLAUSE_END if unit.time else r"(?![\w°º²])"
    return re.compile(rf"(?<![\w])({_ASKED_IN})\s+{_DEGREES}(?:{words}){after}", re.IGNORECASE)


def asked_units(question: str) -> list[str]:
    """The units ``question`` asks its answer in, by their names."""
    found = []
    for unit in UNITS:
        match = _asking(unit).search(question)
        if match is None:
            continue
        before = question[: match.start()]
        cue = _TIME_CUE if unit.time else _MEASURE_CUE
        if cue.search(before) or (not unit.time and cue.search(question)):
            found.append(unit.name)
    return found


@cache
def _counted_in(unit: Unit) -> re.Pattern[str]:
    words = "|".join(re.escape(word) for word in sorted(unit.asked_as, key=len, reverse=True))
    return re.compile(
        rf"\bhow\s+(?:many|much)\s+(?:[a-z]+\s+){{0,2}}?(?:{words})(?![\w°º²])", re.IGNORECASE
    )


def counted_units(question: str) -> set[str]:
    """The units ``question`` asks for with "in" or counts with "how many" ("How many total
    meters does he run a week?"), by their names."""
    counted = {unit.name for unit in UNITS if _counted_in(unit).search(question)}
    return counted | set(asked_units(question))


def changed_answer_unit(original: str, candidate: str) -> str | None:
    """A unit the candidate asks its answer in where the original asks in another: "How many
    miles does James run each week ...?" for "How many total meters does he run a week?"
    (accepted in a bench run). A candidate that asks in no unit is the dropped-unit check's."""
    theirs, ours = counted_units(original), counted_units(candidate)
    added, dropped = sorted(ours - theirs), sorted(theirs - ours)
    if not added or not dropped:
        return None
    return f"asks for the answer in {', '.join(added)} where the original asks in " + ", ".join(
        dropped
    )


def names_unit(text: str, unit_name: str) -> bool:
    """Whether ``text`` names the unit, in any of its words or symbols (as a whole token)."""
    unit = next(u for u in UNITS if u.name == unit_name)
    lowered = text.lower()
    for word in (*unit.asked_as, *unit.named_as):
        if re.search(rf"(?<![a-z0-9]){re.escape(word)}(?![a-z])", lowered):
            return True
    return False


def dropped_answer_units(original: str, candidate: str) -> list[str]:
    """The units the original asks its answer in that the candidate no longer names."""
    return [unit for unit in asked_units(original) if not names_unit(candidate, unit)]


@cache
def _units_by_word() -> dict[str, Unit]:
    return {word: unit for unit in UNITS for word in (unit.name, *unit.asked_as, *unit.named_as)}


def unit_named(word: str) -> Unit | None:
    """The unit a word or symbol names ("km", "miles", "metri"), if any."""
    return _units_by_word().get(word.lower())
