"""A change said the other way: "Marcy, who has 225 points, scores 10 points" reworded
"Marcy, starting from 225 points, drops 10 points", "the price increased by 80%" as "its price
fell by 80%", "will be 16 years old in 12 years" as "was 16 years old 12 years ago". Every
number is kept, and the problem is another one.

English only. A number (written once in each text) takes the direction of the words of its
clause next to it: up ("increased", "rose", "gained", "scores", "put on", "up") or down
("decreased", "fell", "lost", "drops", "discount", "off", "down"), and for a span of time,
ahead ("in 12 years", "from now", "later") or back ("ago", "earlier"). A candidate is refused
when one of the original's numbers has one direction only, on either axis, and in the candidate
the other one only.

And a comparison turned against the same thing: "5 years less than twice the age of his son"
as "5 years more than twice his son's age". A comparison turned round with its sides ("Mark
scored 20 fewer goals than Richie" for "Richie scored 20 more goals than Mark") is the same
one, so the thing compared with must share a word in both (``comparisons`` reads the sides of
the ones it can).

And a comparison the same way with another person on one side: "Daisy has $50 more than
Samantha" as "Daisy has $50 more than Carmen", "Seth is twice as old as Brooke" as "Brooke is
twice as old as Seth", "Jamal has 4 more bananas than apples" as "Andrea has 4 more bananas
than apples". Only names are compared (``shared.names``), so "800 pounds more than hers" for
"800 pounds more than Gissela's truck" passes.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from itertools import pairwise

from steadfast.shared.inflections import every_form
from steadfast.shared.names import NAME_TOKEN, share_a_name, written_as_names
from steadfast.shared.quantities.bindings import FUNCTION_WORDS, stem
from steadfast.shared.quantities.mention import Mention, Quantity
from steadfast.shared.quantities.reading import mentions, normalized_text
from steadfast.shared.quantities.surroundings import (
    Surroundings,
    first_changed,
    numbers_written_once,
)
from steadfast.shared.quantities.units import CALENDAR_WORDS, TIME_WORDS

#: how many words of the clause on either side may say which way a number goes
_WINDOW = 3
_UP_VERBS = ("increase", "rise", "grow", "gain", "score", "raise", "win")
_DOWN_VERBS = (
    "decrease",
    "fall",
    "drop",
    "decline",
    "lose",
    "shrink",
    "reduce",
    "subtract",
    "shed",
)
_UP = frozenset({"up", *(form for verb in _UP_VERBS for form in every_form(verb))})
_DOWN = frozenset(
    {"down", "off", "discount", "discounted", *(f for v in _DOWN_VERBS for f in every_form(v))}
)
#: the words of a span of time ("12 years", "3 weeks")
_TIME_UNITS = frozenset(TIME_WORDS) | frozenset(CALENDAR_WORDS)
_BACK = frozenset({"ago", "earlier"})
_AHEAD = frozenset({"later", "hence"})
_MORE = frozenset(
    [
        "more",
        "greater",
        "larger",
        "bigger",
        "higher",
        "older",
        "taller",
        "longer",
        "heavier",
        "better",
        "faster",
    ]
)
_LESS = frozenset(
    ["less", "fewer", "smaller", "lower", "younger", "shorter", "lighter", "worse", "slower"]
)
_FUNCTION_WORDS = frozenset(["the", "a", "an", "of", "his", "her", "their", "its", "s"])
_AXES = (frozenset({"up", "down"}), frozenset({"ahead", "back"}))


def turned_change(original: str, candidate: str) -> str | None:
    """Which of the original's numbers the candidate says goes the other way, or None."""
    theirs, ours = _directions(original), _directions(candidate)
    for value, was in theirs.items():
        now = ours.get(value, frozenset())
        for axis in _AXES:
            before, after = was & axis, now & axis
            if len(before) == 1 and len(after) == 1 and before != after:
                return (
                    f"says {value} goes {_named(next(iter(after)))}, not "
                    f"{_named(next(iter(before)))}"
                )
    return None


def percent_by_said_as_to(original: str, candidate: str) -> str | None:
    """A change by a percentage said as a change to it, or the other way: "increased the value
    of the house by 150%" as "the value rises to 150% of its initial price" (accepted in a
    bench run) is 1.5 times the value, not 2.5 times."""
    turned = first_changed(_percent_ways(original), _percent_ways(candidate))
    if turned is None:
        return None
    value, was, now = turned
    return f"says the change is {now} {value}% where the original says {was} {value}%"


def _percent_ways(text: str) -> dict[Quantity, str]:
    """Each percentage written once, and whether the text says a change "by" it or "to" it
    ("to 150%", "150% of its price")."""
    ways: dict[Quantity, str] = {}
    for number in numbers_written_once(normalized_text(text), "en", window=_WINDOW):
        if "%" not in number.written and "percent" not in number.written:
            continue
        if number.before[-1:] == ("by",):
            ways[number.value] = "by"
        elif number.before[-1:] == ("to",) or number.after[:1] == ("of",):
            ways[number.value] = "to"
    return ways


_OF = re.compile(r"\s+of\s+")


def ratio_of_a_new_number(original: str, candidate: str) -> str | None:
    """A fraction the candidate takes of a number the original does not have, or None: "2
    bolts of blue fiber and 0.5 of 1 bolt of white fiber" for "2 bolts of blue fiber and half
    that much white fiber" (accepted in a bench run) is half a bolt, not half of 2. "1" before
    a singular word is "a bolt", which the numbers check lets a rewording add; taken a
    fraction of, it is a base the original never gave."""
    written, said = normalized_text(candidate), normalized_text(original)
    theirs, ours = mentions(said, "en"), mentions(written, "en")
    for ratio, taken in pairwise(ours):
        if ratio.dimension != "ratio" or ratio.span is None or taken.span is None:
            continue
        if not _OF.fullmatch(written[ratio.span[1] : taken.span[0]]):
            continue
        if any(taken.matches(their) or their.matches(taken) for their in theirs):
            continue
        if taken.values == {1} and _of_one_thing(ratio, theirs, said):
            continue  # "half of one cup" for "half a cup"
        return f"takes {ratio.written} of {taken.written}, a number the original does not have"
    return None


#: words before a number that give it to what is left of something: "the remaining 2 hours"
_THE_REST = re.compile(
    r"\b(?:the|those|these|his|her|its|their)\s+"
    r"(?:remaining|rest|next|last|final|following|leftover)\s+(?:of\s+)?$"
)


def number_given_to_the_rest(original: str, candidate: str) -> str | None:
    """A number of the original written once more in the candidate, for what is left of
    something, or None: "then continued for the remaining 2 hours at 80 mph" for "spends the
    first 2 hours in standstill traffic ... drive the remaining time of the 4 hours going at 80
    mph" (accepted in a bench run: the remaining time is 1.5 hours). A faithful rewording
    repeats a number where it names the same thing again ("the 500-piece set"); one that
    gives it to the rest has made the rest that long."""
    written, said = normalized_text(candidate), normalized_text(original)
    theirs = [m for m in mentions(said, "en") if not m.soft]
    ours = [m for m in mentions(written, "en") if not m.soft]
    for mention in ours:
        same_in_theirs = [their for their in theirs if their.matches(mention)]
        same_in_ours = [our for our in ours if our.matches(mention)]
        if not same_in_theirs or len(same_in_ours) <= len(same_in_theirs):
            continue
        if _any_of_the_rest(same_in_ours, written) and not _any_of_the_rest(same_in_theirs, said):
            return f"gives {mention.written} to what is left, where the original does not"
    return None


def _any_of_the_rest(found: list[Mention], text: str) -> bool:
    """Whether the words before one of ``found`` give it to what is left ("the next
    half-hour")."""
    return any(
        mention.span is not None
        and _THE_REST.search(text[max(0, mention.span[0] - 24) : mention.span[0]]) is not None
        for mention in found
    )


_OF_ONE_THING = re.compile(r"\s+(?:of\s+)?an?\b")


def _of_one_thing(ratio: Mention, theirs: list[Mention], said: str) -> bool:
    """Whether the original takes the same fraction of one thing ("half a cup")."""
    return any(
        their.matches(ratio) and their.span is not None and _OF_ONE_THING.match(said, their.span[1])
        for their in theirs
    )


_TIMES = re.compile(r"\s+times\b")


def repetition_folded(original: str, candidate: str) -> str | None:
    """A number the original writes twice, once as how many times something is done, that the
    candidate writes fewer times and never as a repetition, or None: "3 sprint training sessions
    each week" for "3 sprints 3 times a week" (two accepted in a bench run) is 3 sprints a week,
    not 9."""
    theirs, ours = _repetitions(normalized_text(original)), _repetitions(normalized_text(candidate))
    for value, (written, repeated) in theirs.items():
        said, said_repeated = ours.get(value, (0, False))
        if repeated and written >= 2 and said < written and not said_repeated:
            return (
                f"writes {value} {how_often(said)} where the original writes it "
                f'{how_often(written)}, once as how many times ("{value} times"): a repetition '
                "folded into one count"
            )
    return None


def money_swapped_with_a_count(original: str, candidate: str) -> str | None:
    """An amount of money and a count that trade places, or None: "4 yogurts for $5.00" said
    as "$4 per 5" (two accepted in a bench run) keeps both numbers and makes each yogurt cost
    $0.80, not $1.25."""
    said, reworded = _by_kind(original), _by_kind(candidate)
    to_money = (reworded["money"] - said["money"]) & said["count"]
    to_count = (reworded["count"] - said["count"]) & said["money"]
    if not to_money or not to_count:
        return None
    money, count = min(to_money), min(to_count)
    return f"swaps an amount of money and a count: ${money} where the original says ${count}"


def _by_kind(text: str) -> dict[str, set[Quantity]]:
    """The values a text writes as money and as bare counts."""
    found: dict[str, set[Quantity]] = {"money": set(), "count": set()}
    for mention in mentions(text, "en"):
        if mention.soft or mention.dimension not in (None, "money"):
            continue
        found["count" if mention.dimension is None else "money"].update(mention.values)
    return found


def count_dropped(original: str, candidate: str) -> str | None:
    """A number the original writes two or more times, each time counting another thing, that
    the candidate writes fewer times, or None: "His next 2 customers buy 2 DVDs each" said as
    "He sold DVDs ... to the next 2" (accepted in a bench run) drops the 2 DVDs each one bought.
    Ordinals ("the second day" said as "the following day") and amounts are not read, nor a
    number whose counted thing is not said right after it."""
    if _SAME_NUMBER_AGAIN.search(candidate):
        return None
    theirs, ours = _counts(normalized_text(original)), _counts(normalized_text(candidate))
    for value, things in theirs.items():
        written = len(ours.get(value, ()))
        distinct = None not in things and len({stem(t or "") for t in things}) == len(things)
        if len(things) >= 2 and distinct and 0 < written < len(things):
            said = " / ".join(f"{value} {thing}" for thing in things)
            return (
                f"writes {value} {how_often(written)} where the original writes it "
                f"{how_often(len(things))}, each time for another thing ({said})"
            )
    return None


#: the same number said again without writing it: "3 dogs and as many cats", "two of each",
#: "a pair of DVDs each"
_SAME_NUMBER_AGAIN = re.compile(
    r"\b(?:the same number|as many|an equal number|equally many|of each|each of|(?:a )?pairs? of|"
    r"the same amount)\b",
    re.IGNORECASE,
)
#: how many words after a number may say what it counts
_COUNTED_WINDOW = 3
_CONJUNCTIONS = frozenset({"and", "or", "but"})
_COUNT_TOKEN = re.compile(r"[^\W\d_]+|\d+|[,.;:?!]")


def _counts(text: str) -> dict[Quantity, list[str | None]]:
    """Each number written as a count (no ordinal, amount or multiple), with the first word
    after it that is no function word, for each time it is written (None when its clause
    says none)."""
    found: dict[Quantity, list[str | None]] = {}
    for mention in mentions(text, "en"):
        if mention.soft or mention.span is None or len(mention.values) != 1:
            continue
        if mention.ordinal or mention.dimension is not None or mention.multiple:
            continue
        following = _COUNT_TOKEN.findall(text[mention.span[1] :].lower())[:_COUNTED_WINDOW]
        thing = None
        for word in following:
            if not word.isalpha() or word in _CONJUNCTIONS:
                break
            if word not in FUNCTION_WORDS:
                thing = word
                break
        found.setdefault(next(iter(mention.values)), []).append(thing)
    return found


def how_often(count: int) -> str:
    return {0: "nowhere", 1: "once", 2: "twice"}.get(count, f"{count} times")


def _repetitions(text: str) -> dict[Quantity, tuple[int, bool]]:
    """How many times each number is written, and whether once as "<number> times"."""
    found: dict[Quantity, tuple[int, bool]] = {}
    for mention in mentions(text, "en"):
        if mention.soft or mention.span is None or len(mention.values) != 1:
            continue
        value = next(iter(mention.values))
        written, repeated = found.get(value, (0, False))
        times = _TIMES.match(text, mention.span[1]) is not None
        found[value] = (written + 1, repeated or times)
    return found


_MORE_OF = frozenset(["more", "additional", "extra"])
_FEWER_OF = frozenset(["fewer", "less"])


def more_said_as_fewer(original: str, candidate: str) -> str | None:
    """A number of things more said as that many fewer, or the other way, with nothing they
    are compared with ("he counted 20 more cars" as "he counted 20 fewer cars", a labelled
    change the judge scored 0.74). A number compared with "than" is ``turned_comparison``'s."""
    turned = first_changed(_more_or_fewer(original), _more_or_fewer(candidate))
    if turned is None:
        return None
    value, was, now = turned
    return f"says {value} {now} where the original says {value} {was}"


def _more_or_fewer(text: str) -> dict[Quantity, str]:
    found = {}
    for number in numbers_written_once(text, "en", window=6):
        if number.than or not number.after:
            continue
        if number.after[0] in _MORE_OF:
            found[number.value] = "more"
        elif number.after[0] in _FEWER_OF:
            found[number.value] = "fewer"
    return found


_AS_MUCH = re.compile(
    r"\b(twice|thrice|half|double|triple|(?:\d[\d.,/]*|[a-z]+) times) as (?:much|many) "
    r"((?:[a-z]+ ){0,2}?[a-z]+) as (?:(?:the|her|his|their|its) )?([a-z]+)"
)


def turned_multiple(original: str, candidate: str) -> str | None:
    """A multiple of one thing said of the other: "twice as much salt as oil" for "twice as
    much oil as salt" (a labelled change the judge scored 0.88). "Half as much salt as oil"
    says the same and passes: the multiple differs."""
    theirs, ours = _as_much(original), _as_much(candidate)
    for times, thing, base in theirs:
        if (times, base, thing) in ours and (times, thing, base) not in ours:
            return f"says {times} as much {base} as {thing}, not {thing} as {base}"
    return None


def _as_much(text: str) -> set[tuple[str, str, str]]:
    lowered = normalized_text(text).lower()
    return {(match[1], match[2].split()[-1], match[3]) for match in _AS_MUCH.finditer(lowered)}


def turned_comparison(original: str, candidate: str) -> str | None:
    """A number the original says is more than something and the candidate less than the same
    thing (or the other way round), or None: "scored 20 more goals than Mark" as "scored 20
    fewer goals than Mark". The thing compared with must share a word in both, so a comparison
    turned round with its sides ("Mark scored 20 fewer goals than Richie") passes, and so does
    one whose sides share words ("a half-gallon jar costs $2 less than a gallon jar" for "a
    gallon jar costs $2 more than a half-gallon jar")."""
    theirs, ours = _comparisons(original), _comparisons(candidate)
    for value, was in theirs.items():
        now = ours.get(value)
        if now is None or now.way == was.way or not was.base & now.base:
            continue
        if now.base <= was.subject and was.base <= now.subject:
            continue  # turned round with its sides
        return f"says {value} {now.way} than {' '.join(sorted(was.base & now.base))}, not {was.way}"
    return None


def compared_with_another(original: str, candidate: str) -> str | None:
    """A number the original compares with someone and the candidate, the same way, with
    someone else, or None: "$50 more than Samantha" as "$50 more than Carmen", "twice as old as
    Brooke" as "twice as old as Seth", "Jamal has 4 more bananas than apples" as "Andrea has 4
    more bananas than apples". Both must be names; a comparison turned round with its sides
    ("Carmen has $25 less than Samantha" for "Samantha has $25 more than Carmen") is the same,
    and an amount or a multiple a text compares twice ("5 more than Ann, and Ann has 5 more than
    Bob") is left alone."""
    theirs = {**_comparisons(original), **_multiples(original)}
    ours = {**_comparisons(candidate), **_multiples(candidate)}
    for key, was in theirs.items():
        now = ours.get(key)
        if now is None or now.way != was.way or was.joined or now.joined:
            continue  # "than Ann and Bob" / "than Bob and Ann": whom with is unsure
        if why := _other_name(was.base, now.base, original, candidate):
            return f"compares {key} with {why}"
        if was.base & now.base and (
            why := _other_name(was.subject, now.subject, original, candidate)
        ):
            return f"says {key} {was.way} of {why}"
    return None


def _other_name(ours: frozenset[str], theirs: frozenset[str], *texts: str) -> str | None:
    named, other_named = written_as_names(ours, *texts), written_as_names(theirs, *texts)
    if named and other_named and not share_a_name(named, other_named):
        return f"{' '.join(sorted(other_named))}, not {' '.join(sorted(named))}"
    return None


@dataclass(frozen=True)
class _Compared:
    """A number compared with something: which way, and the words on either side."""

    #: "more", "less", or "as" ("twice as old as")
    way: str
    #: the words before it in its clause (who has it), and those it is compared with
    subject: frozenset[str]
    base: frozenset[str]
    #: the base goes on with "and" or "or" ("than Ann and Bob combined", "than Mark and ...")
    joined: bool = False


#: "twice as old as Brooke", "3 times as many apples as Jamal": the multiple, and whom with
_MULTIPLE = re.compile(
    r"\b(?P<times>twice|thrice|half|(?:\d[\d.,/]*|[a-z]+) times) as (?P<what>(?:[a-z]+ ){1,3}?)as "
    r"(?P<base>[\w']+(?: [\w']+){0,2})"
)


def _multiples(text: str) -> dict[Quantity, _Compared]:
    """Each multiple the text says once ("twice as old as Brooke"), keyed by its words."""
    lowered = normalized_text(text).lower()
    found = [
        (f"{match['times']} as {match['what'].strip()}", match)
        for match in _MULTIPLE.finditer(lowered)
    ]
    keys = Counter(key for key, _ in found)
    return {
        key: _Compared(
            "as", _words_of(lowered[: match.start()].split(".")[-1]), _words_of(match["base"])
        )
        for key, match in found
        if keys[key] == 1
    }


def _words_of(phrase: str) -> frozenset[str]:
    return frozenset(NAME_TOKEN.findall(phrase)) - _FUNCTION_WORDS


def _comparisons(text: str) -> dict[Quantity, _Compared]:
    """Each number written once and compared with "than" one way ("30 more ... than")."""
    found = {}
    for number in numbers_written_once(text, "en", window=_WINDOW + 1):
        if not number.than:
            continue
        words = set(number.after)
        way = "more" if words & _MORE else "less" if words & _LESS else ""
        if way and not (words & _MORE and words & _LESS):
            found[number.value] = _Compared(
                way,
                frozenset(number.before) - _FUNCTION_WORDS,
                frozenset(number.than) - _FUNCTION_WORDS,
                joined=number.than_next in ("and", "or"),
            )
    return found


def _directions(text: str) -> dict[Quantity, frozenset[str]]:
    return {
        number.value: directions
        for number in numbers_written_once(text, "en", window=_WINDOW)
        if (directions := _of(number))
    }


def _of(number: Surroundings) -> frozenset[str]:
    near = {*number.before, *number.after}
    found = set()
    if near & _UP or _put_on(number.before):
        found.add("up")
    if near & _DOWN:
        found.add("down")
    if (span := _after_time_unit(number)) is not None:
        if set(span[:2]) & _BACK:
            found.add("back")
        if set(span[:2]) & _AHEAD or span[:2] == ("from", "now") or number.before[-1:] == ("in",):
            found.add("ahead")
    return frozenset(found)


def _after_time_unit(number: Surroundings) -> tuple[str, ...] | None:
    """The words after a span of time ("12 years", "12 years ago"), or None when the number
    is no span of time."""
    if number.written.split()[-1].lower() in _TIME_UNITS:
        return number.after
    if number.after[:1] and number.after[0] in _TIME_UNITS:
        return number.after[1:]
    return None


def _put_on(before: tuple[str, ...]) -> bool:
    """ "put on 10 pounds": gained."""
    return before[-2:] == ("put", "on")


def _named(direction: str) -> str:
    return {"up": "up", "down": "down", "ahead": "ahead in time", "back": "back in time"}[direction]
