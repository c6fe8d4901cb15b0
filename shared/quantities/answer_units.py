"""The unit a question asks its answer in ("At what temperature in degrees Celsius does water
boil?"): a rewording that drops it, or asks in another unit, asks for another number (100 is
not 212), though every number of the question is kept."""

from __future__ import annotations

import re
from functools import cache

#: each unit an answer may be asked in, by the name a reason shows, with the words that name it
#: (English and Italian); a rewording keeps the unit when it names it with any of them
UNITS: dict[str, tuple[str, ...]] = {
    "degrees Celsius": ("celsius", "centigrade", "°c"),
    "degrees Fahrenheit": ("fahrenheit", "°f"),
    "kelvin": ("kelvin", "kelvins"),
    "kilometres": ("kilometre", "kilometres", "kilometer", "kilometers", "km", "chilometri"),
    "metres": ("metre", "metres", "meter", "meters", "metri"),
    "centimetres": ("centimetre", "centimetres", "centimeter", "centimeters", "cm", "centimetri"),
    "millimetres": ("millimetre", "millimetres", "millimeter", "millimeters", "mm", "millimetri"),
    "miles": ("mile", "miles", "miglia"),
    "feet": ("foot", "feet", "ft", "piedi"),
    "inches": ("inch", "inches", "pollici"),
    "kilograms": ("kilogram", "kilograms", "kilogramme", "kilogrammes", "kg", "chilogrammi"),
    "grams": ("gram", "grams", "gramme", "grammes", "grammi"),
    "pounds": ("pound", "pounds", "lb", "lbs", "libbre"),
    "tonnes": ("tonne", "tonnes", "ton", "tons", "tonnellate"),
    "litres": ("litre", "litres", "liter", "liters", "litri"),
    "gallons": ("gallon", "gallons", "galloni"),
    "square metres": ("square metres", "square meters", "m²", "m2", "metri quadrati"),
    "square kilometres": ("square kilometres", "square kilometers", "km²", "km2"),
    "percent": ("percent", "per cent", "percentage", "%", "per cento", "percentuale"),
    "dollars": ("dollar", "dollars", "$", "usd", "dollari"),
    "euros": ("euro", "euros", "€", "eur"),
    "hours": ("hour", "hours", "ore"),
    "minutes": ("minute", "minutes", "minuti"),
    "seconds": ("second", "seconds", "secondi"),
    "days": ("day", "days", "giorni"),
    "years": ("year", "years", "anni"),
}
#: how a question asks for its answer's unit: "in", "expressed in", "measured in", "in terms of"
_ASKED_IN = r"(?:in\s+terms\s+of|(?:expressed|measured|given)\s+in|espress[oa]\s+in|in)"
_DEGREES = r"(?:(?:degrees?|gradi)\s+)?"


@cache
def _asking_pattern() -> re.Pattern[str]:
    names = sorted({word for words in UNITS.values() for word in words}, key=len, reverse=True)
    alternatives = "|".join(re.escape(name) for name in names)
    return re.compile(
        rf"\b{_ASKED_IN}\s+{_DEGREES}(?P<unit>{alternatives})(?=$|[\s?.,;:!)])", re.IGNORECASE
    )


def _unit_of(word: str) -> str:
    word = word.lower()
    return next(name for name, words in UNITS.items() if word in words)


def asked_units(question: str) -> list[str]:
    """The units ``question`` asks its answer in, by their names in :data:`UNITS`."""
    found = [_unit_of(match["unit"]) for match in _asking_pattern().finditer(question)]
    return list(dict.fromkeys(found))


def names_unit(text: str, unit: str) -> bool:
    """Whether ``text`` names ``unit`` (any of its words, on word boundaries; symbols anywhere)."""
    lowered = text.lower()
    for word in UNITS[unit]:
        if word.isalpha() or " " in word:
            if re.search(rf"\b{re.escape(word)}\b", lowered):
                return True
        elif word in lowered:
            return True
    return False


def dropped_answer_units(original: str, candidate: str) -> list[str]:
    """The units the original asks its answer in that the candidate no longer names."""
    return [unit for unit in asked_units(original) if not names_unit(candidate, unit)]
