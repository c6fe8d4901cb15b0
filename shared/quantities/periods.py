"""What a number is counted per, said otherwise. A rate said per another span of time:
"Jessica makes $2,000.00 a month" reworded "Jessica earns $2,000.00 a week", "John eats 200
grams of mushrooms every day" as "... each week". Every number is kept, and the problem is
another one.

English only. A number (written once in each text) takes the period of the first rate words
after it in its sentence: "a", "per", "every" or "each" and a span of time ("a day", "per
week", "every month"), or "daily", "weekly", "monthly", "yearly", "annually", "hourly". The
candidate is refused when one of the original's numbers has a period and the same number has
another in the candidate; a rate the candidate leaves out, or says before the number ("Every
day, she eats 3 eggs"), is left to the other checks.

And a number for each thing said of all of them together, or the other way: "Each window is 35
inches wide" as "five windows, which measure 35 inches in width altogether", "They each need $1
worth of food a day" as "Jen's 3 fish share $1 worth of food". The words of the number's clause
next to it say "each" ("each", "every", "apiece", "per") or "together" ("altogether", "in
total", "combined", "together", "in all", "share", "between them"); a number that says one of
them only in the original and the other only in the candidate is refused.

And the days narrowed: "makes a 3 egg omelet every morning" as "... each weekday morning",
"splits the jobs evenly over the days" as "over the weekdays", "every weekend" as "every other
weekend". A candidate that says "weekday" (or "workday", "school day" ...), "weekend", or
"every other" or "alternate" before a span of time, where the original does not, is refused,
unless the original names the days it covers ("Monday to Friday", "Mondays through Fridays",
"Mon-Fri" are every weekday; "Saturday and Sunday" the weekend) or says the same in other words
("every second day", "biweekly").

And every second one said of all but the first, or the other way: "One glass costs $5, but every
second glass costs only 60% of the price" reworded "the first glass is $5 and each subsequent
one is 60% of the first" (four of five accepted rewordings of a bench run) is another price for
7 of 16 glasses. "Second" is a soft number (a time unit, "a second try"), so the numbers above
do not miss it; a text that says "every second" or "every other" before a span of time or a
thing it counts ("every second glass" where it buys "16 glasses"), or "alternate" before a
plural, where the other text says none of them, is refused ("every 2 days", "biweekly" say the
same; "every other student scored 80" says all the others).

And a year said with another relation in time: "the former Prime Minister of Iceland who worked
as a cabin crew member until 1971" reworded "... who served as a cabin crew member in 1971"
(accepted in a bench run), "since 2010" as "in 2010". The words before a year written once in
each text say up to it ("until", "till", "through", "before", "prior to", "up to", "ended
in"), in it ("in", "during") or from it on ("since", "after", "starting in", "from ... to");
another of the three in the candidate is refused. A year followed by a counted word ("by 1500
people") is a count, and "from" with no end after it says where a thing comes from.
"""

from __future__ import annotations

import re
from itertools import pairwise

from steadfast.shared.names import WEEKDAYS, WEEKEND
from steadfast.shared.quantities.lexicon import LEXICONS
from steadfast.shared.quantities.mention import Quantity
from steadfast.shared.quantities.reading import mentions, normalized_text
from steadfast.shared.quantities.surroundings import (
    SENTENCE_ENDS,
    first_changed,
    numbers_written_once,
)

#: how far after a number its rate may be said ("20 political and weather articles every day")
_WINDOW = 8
_SPANS = {
    "second": "second",
    "minute": "minute",
    "hour": "hour",
    "day": "day",
    "night": "day",
    "morning": "day",
    "week": "week",
    "month": "month",
    "year": "year",
}
_ADVERBS = {
    "hourly": "hour",
    "daily": "day",
    "nightly": "day",
    "weekly": "week",
    "monthly": "month",
    "yearly": "year",
    "annually": "year",
}
_RATE_WORDS = frozenset({"a", "an", "per", "every", "each"})


def changed_period(original: str, candidate: str) -> str | None:
    """Which of the original's numbers the candidate counts per another span of time, or
    None."""
    changed = first_changed(_periods(original), _periods(candidate))
    if changed is None:
        return None
    value, period, other = changed
    return f"says {value} per {other}, not per {period}"


def dropped_period(original: str, candidate: str) -> str | None:
    """Which of the original's rates the candidate no longer says per any span, or None:
    "melts by 2 centimeters every hour" reworded "burns 2 centimeters shorter by the end of an
    hour" (accepted in a bench run) melts 2 centimeters once. Only a span of time the candidate
    never says as a rate counts ("every hour", "an hour", "per hour", "hourly", "each passing
    hour"): a rate said before its number passes."""
    rates, said, written = _rates_said(candidate), _rates_said(original), _values_of(candidate)
    for value, period in _periods(original).items():
        if period in said and period not in rates and value in written:
            return f"drops the rate of {value} (per {period}): says no 'every {period}'"
    return None


_SPANS_OF_TIME = frozenset({"time", "calendar"})


def rate_moved_to_another_number(original: str, candidate: str) -> str | None:
    """Which of the original's rates the candidate gives to another number instead, or None:
    "Aleena paid $140 for the streaming service initially in the first six months and then
    paid 10% less per month" for "charges her $140 per month ... charged her 10% less money on
    the other half of the year" (two accepted in a bench run, judges 0.66 and 0.65): $140 for
    six months, not a month. Read only where the other number has no rate in the original and
    is no span of time ("saves $5 for 2 weeks, putting it aside each day" keeps the rate), and
    the candidate says none before the first one in its sentence ("Every month, she pays $140")."""
    theirs, ours = _periods(original), _periods(candidate)
    for value, period in theirs.items():
        if value in ours or value not in _values_of(candidate):
            continue
        durations = {
            v for m in mentions(candidate, "en") if m.dimension in _SPANS_OF_TIME for v in m.values
        }
        moved = sorted(
            v for v, p in ours.items() if p == period and v not in theirs and v not in durations
        )
        if moved and not _rate_before(candidate, value, period):
            return f"gives 'per {period}' to {moved[0]} instead of {value}"
    return None


def _rate_before(text: str, value: Quantity, period: str) -> bool:
    """Whether the sentence that writes ``value`` says ``period`` as a rate before it."""
    normalised = normalized_text(text)
    for mention in mentions(normalised, "en"):
        if value in mention.values and mention.span is not None:
            start = max(normalised.rfind(end, 0, mention.span[0]) for end in ".;?!") + 1
            if period in _rates_said(normalised[start : mention.span[0]]):
                return True
    return False


#: words that name a span of time or say it per one ("mph": per hour), besides ``_SPANS`` and
#: ``_ADVERBS``
_RATE_WORDS_SAID = {
    "everyday": "day",
    "weekday": "day",
    "workday": "day",
    "weekend": "day",
    "workweek": "week",
    "evening": "day",
    "afternoon": "day",
    "annual": "year",
    "annum": "year",
    "mph": "hour",
    "kph": "hour",
    "kmh": "hour",
    "hr": "hour",
    "wpm": "minute",
    "rpm": "minute",
    "bpm": "minute",
    "min": "minute",
    "yr": "year",
}
#: abbreviations that say "per" themselves, after their number too ("60 mph")
_PER_SPAN = frozenset({"mph", "kph", "kmh", "wpm", "rpm", "bpm"})
#: a word before a span that makes it one span, not a rate ("the first hour", "that day")
_ONE_SPAN_TEXT = (
    "first second third fourth fifth last next previous following this that same whole entire one"
)
_ONE_SPAN = frozenset(_ONE_SPAN_TEXT.split())
_CARDINALS = frozenset(LEXICONS["en"].cardinals) | frozenset(LEXICONS["en"].scales)
#: "2 cm/h", "$15/hr"
_PER_UNIT = re.compile(r"/\s*([a-z]+)\b")
_UNIT_LETTERS = {"h": "hour", "d": "day", "wk": "week", "mo": "month", "y": "year"}
_RATE_TOKEN = re.compile(r"[a-z]+|\d+(?:[.,]\d+)*")


def _rates_said(text: str) -> set[str]:
    """The spans of time ``text`` says as a rate, in any words: "every hour", "an hour", "per
    hr", "hourly", "hour by hour", "60 mph", "8-hour days" (per day). A span after a number is
    a duration ("60 days", the hour of "8-hour"), after "of a" or "half a" a span ("by the end
    of an hour", "half an hour"), and after "the first", "that", "the same" ... one span."""
    lowered = text.lower()
    tokens = _RATE_TOKEN.findall(lowered)
    said = {
        period
        for unit in _PER_UNIT.findall(lowered)
        if (period := _SPANS.get(unit) or _RATE_WORDS_SAID.get(unit) or _UNIT_LETTERS.get(unit))
    }
    for index, token in enumerate(tokens):
        word = token.removesuffix("s") if token.endswith("s") and len(token) > 3 else token
        period = _SPANS.get(word) or _ADVERBS.get(token) or _RATE_WORDS_SAID.get(word)
        if period is None:
            continue
        before = tokens[max(0, index - 5) : index]
        if token in _PER_SPAN or token in _ADVERBS:  # "60 mph", "5% yearly"
            said.add(period)
        elif (every := _every_so_many(before, period)) is not None:
            said.add(every)
        elif set(before[-3:]) & _EACH or not _one_span_or_duration(before[-2:]):
            said.add(period)  # "on each of the days", "an hour", "hour by hour"
    return said


#: so many of a span that make a longer one: "every 60 minutes" is every hour
_WHOLE_SPANS = {
    (60, "second"): "minute",
    (60, "minute"): "hour",
    (24, "hour"): "day",
    (7, "day"): "week",
    (12, "month"): "year",
    (52, "week"): "year",
    (365, "day"): "year",
}


def _every_so_many(before: list[str], period: str) -> str | None:
    """The rate said by "every 60 minutes", "each of the 12 months", "every one of the 7 days"
    (the span a number of spans makes, or the span itself), or None."""
    if not before or not any(word in ("every", "each", "per") for word in before[:-1]):
        return None
    count = before[-1]
    value = int(count) if count.isdigit() else LEXICONS["en"].cardinals.get(count)
    if value is None:
        return None
    if before[-2] in ("every", "each", "per"):  # "every 60 minutes"; "each of the 12 months"
        return _WHOLE_SPANS.get((value, period), period)
    return period


def _one_span_or_duration(before: list[str]) -> bool:
    """Whether the words before a span of time make it a duration ("60 days", the "hour" of
    "8-hour"), one span ("the first hour", "that day") or part of one ("by the end of an hour",
    "half an hour"), not a rate."""
    if not before or before == ["in", "one"]:  # "in one minute, Tom types 50 words"
        return False
    last = before[-1]
    if last[0].isdigit() or last in _CARDINALS or last in _ONE_SPAN:
        return True
    return len(before) == 2 and before[0] in ("of", "half") and last in ("a", "an", "the")


def _values_of(text: str) -> set[Quantity]:
    return {value for mention in mentions(text, "en") for value in mention.values}


def _periods(text: str) -> dict[Quantity, str]:
    found = {}
    for number in numbers_written_once(text, "en", window=_WINDOW, ends=SENTENCE_ENDS):
        # an amount read with its rate ("$25 a month") says it in its own words
        said = tuple(re.findall(r"[a-z]+", number.written.lower())) + number.after
        if period := _period(said):
            found[number.value] = period
    return found


def _period(words: tuple[str, ...]) -> str | None:
    for index, word in enumerate(words):
        if word in _ADVERBS:
            return _ADVERBS[word]
        if word in _RATE_WORDS and index + 1 < len(words) and words[index + 1] in _SPANS:
            return _SPANS[words[index + 1]]
    return None


#: how many words of the clause on either side say whether a number is for each or for all
_SHARE_WINDOW = 4
_EACH = frozenset({"each", "every", "apiece", "per"})
_TOGETHER = frozenset({"altogether", "total", "combined", "together", "share", "shared", "shares"})
_TOGETHER_PAIRS = frozenset({("in", "all"), ("between", "them"), ("among", "them")})


def pooled_or_split(original: str, candidate: str) -> str | None:
    """Which of the original's numbers the candidate says for all together where the
    original says it for each (or the other way round), or None."""
    changed = first_changed(_shares(original), _shares(candidate))
    if changed is None:
        return None
    value, share, other = changed
    if "one" in (share, other) and ("each" not in (share, other) or not _OTHER.search(original)):
        return None  # "One ticket costs $20" is a unit price; "one ..., the second ..." is one
    return f"says {value} {_SAID[other]}, not {_SAID[share]}"


_SAID = {"each": "for each", "together": "for all together", "one": "for one of them"}
#: the number's clause opens with one of the things: "one having 20 instructions and the second
#: ..." ("each has 20 instructions" for it was accepted in a bench run, judge 0.84)
_ONE_OF_THEM = frozenset({("one",), ("first",)})
#: another of the things the original sets beside the one: "the second one having twice as many"
_OTHER = re.compile(r"\b(?:second|other|another|the rest|remaining)\b", re.IGNORECASE)


def _shares(text: str) -> dict[Quantity, str]:
    found = {}
    for number in numbers_written_once(text, "en", window=_SHARE_WINDOW):
        near = (*number.before, *number.after)
        pairs = set(pairwise(near))
        each = bool(set(near) & _EACH)
        together = bool(set(near) & _TOGETHER or pairs & _TOGETHER_PAIRS)
        if each != together:
            found[number.value] = "each" if each else "together"
        elif len(number.before) < _SHARE_WINDOW and number.before[:1] in _ONE_OF_THEM:
            found[number.value] = "one"  # "one having 20 instructions", "the first with 20"
    return found


#: the short forms of the days ("Mon-Fri")
_SHORT_DAYS = {day: day[:3] for day in (*WEEKDAYS, *WEEKEND)}
_SPAN = r"(?:days?|nights?|weeks?|weekends?|months?|years?|mornings?|evenings?)"
#: words that keep a story's days to some of them; the days that say the same; and other
#: words for the same ("every second day" is every other day)
_NARROWING: dict[str, tuple[str, tuple[str, ...], str]] = {
    "weekday": (
        r"\b(?:week-?days?|work-?days?|working days?|business days?|school days?)\b",
        WEEKDAYS,
        "",
    ),
    "weekend": (r"\bweek-?ends?\b", WEEKEND, ""),
    "every other": (
        rf"\bevery other {_SPAN}|\balternat(?:e|ing) {_SPAN}",
        (),
        rf"\bevery (?:second|two|2) {_SPAN}|\bbi-?(?:weekly|monthly)\b|\bfortnight",
    ),
}


def narrowed_days(original: str, candidate: str) -> str | None:
    """Which word keeps the candidate's days to some of the original's ("weekday" for "every
    morning"), or None."""
    said, reworded = original.lower(), candidate.lower()
    for word, (pattern, days, same) in _NARROWING.items():
        if not re.search(pattern, reworded) or re.search(pattern, said):
            continue
        if same and re.search(same, said):
            continue
        if sum(_names_day(said, day) for day in days) >= 2:
            continue
        return f"says '{word}' where the original does not"
    return None


def _names_day(text: str, day: str) -> bool:
    """ "Monday", "Mondays", "Mon" """
    return bool(re.search(rf"\b(?:{day}s?|{_SHORT_DAYS[day]})\b", text))


#: one in two of a series: "every second glass", "every other day", "alternate weeks"
_ALTERNATION = re.compile(
    r"\b(?:every|each)\s+(?:other|second|2nd)\s+([a-z]+)|\balternate\s+([a-z]+s)\b"
)
#: the same said otherwise, of a span of time: "every two weeks", "biweekly", "fortnightly"
_ALTERNATION_SAID_OTHERWISE = re.compile(
    rf"\bevery (?:two|2) {_SPAN}|\bbi-?(?:weekly|monthly)\b|\bfortnight|\balternate\s+[a-z]+s\b"
)


def alternation_changed(original: str, candidate: str) -> str | None:
    """Why one text says every second one of a series and the other does not, or None. Read
    for a span of time ("every other day") or a thing the text counts ("every second glass"
    where it buys "16 glasses"): "every other student scored 80" says all the others."""
    said, reworded = _alternation(original), _alternation(candidate)
    if said and not reworded and not _ALTERNATION_SAID_OTHERWISE.search(candidate.lower()):
        return f"drops '{said}': the original says it of every second one only"
    if reworded and not said and not _ALTERNATION_SAID_OTHERWISE.search(original.lower()):
        return f"says '{reworded}' where the original says it of every one"
    return None


def _alternation(text: str) -> str | None:
    """The first "every second <thing>" of ``text`` that is a span of time or a thing it
    counts, as written; None when it has none."""
    lowered = text.lower()
    for found in _ALTERNATION.finditer(lowered):
        thing = found.group(1) or found.group(2).removesuffix("s")
        if re.fullmatch(_SPAN, thing) or _counted(thing, lowered):
            return found.group(0)
    return None


def _counted(thing: str, text: str) -> bool:
    """Whether ``text`` counts the thing with a number, in its next two words: "16 glasses",
    "three red pens"."""
    counted = re.compile(rf"{re.escape(thing)}(?:e?s)?")
    for mention in mentions(text, "en"):
        if mention.span is None or mention.ordinal:
            continue
        following = re.findall(r"[a-z]+", text[mention.span[1] :])[:2]
        if any(counted.fullmatch(word) for word in following):
            return True
    return False


_YEAR_RELATIONS = {
    "up to it": (
        "until",
        "till",
        "through",
        "before",
        "prior to",
        "up to",
        "ending in",
        "ended in",
    ),
    "in it": ("in", "during"),
    "from it on": ("since", "after", "starting in", "beginning in", "from"),
}
_RELATION_OF = {words: name for name, said in _YEAR_RELATIONS.items() for words in said}
#: a year after its relation word, not a span ("2010-2014", "2010 – 2014")
_YEAR_SAID = re.compile(
    rf"\b({'|'.join(sorted(_RELATION_OF, key=len, reverse=True))})\s+(?:the\s+year\s+)?"
    r"((?:1[2-9]|20)\d\d)\b(?!\s*[-\u2013/]\s*\d)(\s+[a-z]+)?"
)
#: words that may follow a year; any other word makes it a count ("by 1500 people"), and a
#: "from" read as from then on needs its end ("from 2010 to 2014") or "on"
_AFTER_A_YEAR_TEXT = """
and or to until till through when while who which that as at for in on of the with by before
after he she they it his her their its was were is did does
"""
_AFTER_A_YEAR = frozenset(_AFTER_A_YEAR_TEXT.split())


def year_relation_changed(original: str, candidate: str) -> str | None:
    """Why the candidate relates a year of the original otherwise in time, or None."""
    said, reworded = _year_relations(original), _year_relations(candidate)
    for year, (relation, word) in said.items():
        now = reworded.get(year)
        if now is not None and now[0] != relation:
            return f"says '{now[1]} {year}' where the original says '{word} {year}'"
    return None


def _year_relations(text: str) -> dict[str, tuple[str, str]]:
    """Each year the text writes once, with a relation word before it: its relation (one of
    ``_YEAR_RELATIONS``) and the word."""
    lowered = text.lower()
    found: dict[str, tuple[str, str]] = {}
    for match in _YEAR_SAID.finditer(lowered):
        word, year, after = match.groups()
        next_word = (after or "").strip()
        if next_word and next_word not in _AFTER_A_YEAR:
            continue  # a count: "grew by 1500 people"
        if word == "from" and next_word not in ("to", "until", "till", "through", "on"):
            continue  # where it comes from: "the film from 1985"
        if len(re.findall(rf"\b{year}\b", lowered)) == 1:
            found[year] = (_RELATION_OF[word], word)
    return found
