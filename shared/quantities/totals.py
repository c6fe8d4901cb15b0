"""A total of two things said of one of them.

"The combined weight of the driver and the empty truck is 3755 pounds" reworded "the driver
weighs 3755 pounds" or "the driver's weight is 3755 pounds" (both accepted in a bench run, judge
0.71 and 0.70) leaves the truck's weight unknown. The original's sentence says a total
("combined", "total", "together", "altogether", "sum", "in all", "between them") and joins two
things with "and" ("the driver and the empty truck"); a number it writes once is refused when,
in the candidate, the stretch between "and"s that holds the number names one of the two and not
the other, and its clause says no total nor joins the two ("the driver and the truck weigh
3755 pounds", "the truck with its driver weighs 3755 pounds" pass).

English only.
"""

from __future__ import annotations

import re

from steadfast.shared.inflections import same_word
from steadfast.shared.quantities.bindings import FUNCTION_WORDS
from steadfast.shared.quantities.mention import Quantity
from steadfast.shared.quantities.numerals import SENTENCE_END
from steadfast.shared.quantities.reading import mentions, normalized_text

_CLAUSE_END = re.compile(r"[,;:.?!](?:\s|$)")
_AND = re.compile(r"\s+(?:and|&)\s+")
#: a total said ("both" says each, not a sum: "Both Tom and Ann are 12 years old")
_TOTAL = re.compile(
    r"\b(?:combined|total|totals|together|altogether|sum|in all|between them|jointly|"
    r"collectively|including|plus|along with)\b"
)
#: the number's stretch says it of each of them: "Tom and Jerry each have $10"
_EACH = re.compile(r"\b(?:both|each|too|also|as well)\b")
#: a clause before the number's that brings the other thing in: "With the driver inside, ..."
_BRINGS_IN = re.compile(r"\b(?:with|counting|including|inside|plus|along)\b")
#: "the driver and the empty truck", "the truck with its driver": the word before the joining
#: word, then up to three after it; a verb ends a thing
_THINGS = r"\b([A-Za-z]+)(?:'s)?\s+(?:{})\s+((?:[A-Za-z]+\s+){{0,2}}[A-Za-z]+)"
_AND_JOINED = re.compile(_THINGS.format("and|&"))
_JOINED = re.compile(_THINGS.format("and|&|with|plus"))
_DETERMINERS = frozenset(
    ["the", "a", "an", "his", "her", "their", "its", "my", "our", "your", "each", "this", "that"]
)
_ENDS_A_THING = frozenset(
    {"is", "are", "was", "were", "has", "have", "had", "weigh", "weighs", "weighed", "cost"}
    | {"costs", "together", "combined", "total", "make", "makes", "made", "come", "comes", "came"}
    | {"spent", "spend", "spends", "paid", "pay", "pays", "earned", "earn", "earns", "own", "owns"}
)


def total_said_of_one(original: str, candidate: str) -> str | None:
    """Which number the original gives two things together and the candidate gives one of
    them, or None."""
    original, candidate = normalized_text(original), normalized_text(candidate)
    for value, (first, second) in _totals(original).items():
        for stretch, clause, previous in _stretches(candidate, value):
            if _TOTAL.search(clause) or _EACH.search(stretch) or _joined(clause, first, second):
                continue
            names = [thing for thing in (first, second) if _names(stretch, thing)]
            other = second if names == [first] else first
            if len(names) != 1 or (_BRINGS_IN.search(previous) and _names(previous, other)):
                continue
            return (
                f"gives {_written(original, value)} to '{names[0]}' alone where the original "
                f"gives it to '{first}' and '{second}' together"
            )
    return None


def _totals(text: str) -> dict[Quantity, tuple[str, str]]:
    """Each number written once in a sentence that says a total of two things joined with
    "and": the head word of each thing."""
    found = [m for m in mentions(text, "en") if not m.soft and len(m.values) == 1]
    once = {v for m in found for v in m.values if sum(v in n.values for n in found) == 1}
    totals = {}
    for sentence in SENTENCE_END.split(text):
        if not _TOTAL.search(sentence.lower()):
            continue
        # the number's own clause joins the two: "Together, Mark and his brother weigh 300
        # pounds, and Mark weighs 160 pounds" gives 160 to Mark alone
        for clause in _CLAUSE_END.split(sentence):
            if (joined := _things_joined(clause)) is None:
                continue
            for mention in mentions(clause, "en"):
                value = next(iter(mention.values))
                if value in once and not mention.soft:
                    totals[value] = joined
    return totals


def _things_joined(sentence: str) -> tuple[str, str] | None:
    """The two things a sentence joins with "and", each a name or after a determiner ("the
    driver and the empty truck", "Tom and Ann"; not "he ordered and wanted to sell")."""
    for match in _AND_JOINED.finditer(sentence):
        first, following = match[1], match[2].split()
        before = sentence[: match.start(1)].split()[-1:]
        if not (_a_thing(first, before) and _a_thing(following[0], [])):
            continue
        after = []
        for word in following:
            if word.lower() in _ENDS_A_THING:
                break
            after.append(word.lower())
        content = [word for word in after if word not in FUNCTION_WORDS]
        if first.lower() not in FUNCTION_WORDS | _ENDS_A_THING and content:
            return first.lower(), content[-1]
    return None


def _a_thing(word: str, before: list[str]) -> bool:
    """Whether a word opens or ends a thing's name: a name, or a word after a determiner (or a
    determiner itself)."""
    determined = [w.lower() for w in (*before, word)]
    return word[:1].isupper() or bool(_DETERMINERS.intersection(determined))


def _stretches(text: str, value: Quantity) -> list[tuple[str, str, str]]:
    """For each time ``text`` writes ``value``: the words between the "and"s around it, its
    clause, and the clause before it when that writes no number."""
    found = []
    for mention in mentions(text, "en"):
        if value not in mention.values or mention.span is None:
            continue
        start, end = mention.span
        ends = [0, *(m.end() for m in _CLAUSE_END.finditer(text, 0, start))]
        clause_end = next((m.start() for m in _CLAUSE_END.finditer(text, end)), len(text))
        clause = text[ends[-1] : clause_end].lower()
        previous = text[ends[-2] : ends[-1]].lower() if len(ends) >= 2 else ""
        if mentions(previous, "en"):
            previous = ""
        at = start - ends[-1]
        stretch_start = max((m.end() for m in _AND.finditer(clause, 0, at)), default=0)
        stretch_end = next((m.start() for m in _AND.finditer(clause, at)), len(clause))
        found.append((clause[stretch_start:stretch_end], clause, previous))
    return found


def _names(stretch: str, thing: str) -> bool:
    return any(same_word(word, thing) for word in re.findall(r"[a-z]+", stretch))


def _joined(clause: str, first: str, second: str) -> bool:
    """Whether the clause joins the two things ("the truck and its driver", "the truck with
    its driver")."""
    for match in _JOINED.finditer(clause):
        words = [match[1], *match[2].split()]
        if _names(" ".join(words), first) and _names(" ".join(words), second):
            return True
    return False


def _written(text: str, value: Quantity) -> str:
    return next(m.written for m in mentions(text, "en") if value in m.values)
