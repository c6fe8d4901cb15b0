"""Numbers a faithful rewording adds or drops while saying the same: a count of a list the
original names ("his three main meals - breakfast, lunch, and dinner" for "breakfast, lunch and
dinner"), a day's place in the week said beside its name ("the fourth day, Wednesday"), and a
multiple said the other way round ("Brooke's age is half of Seth's" for "Seth is
twice as old as Brooke"): each was a labelled faithful GSM-Plus rewording the numbers stage
refused. And a name's number said in the name's initials ("WFC3" for "Wide Field Camera 3",
refused three times on one question of a bench run). A thing cut "in half" said cut "into two
halves" (a labelled faithful factual rewording), and "another" said as the ordinal it stands for
("another one that had 1/4 the number" as "a third set containing a quarter", a labelled
GSM-Plus one). Each is read narrowly, so a changed
count or a multiple kept the same way round is still a difference. ``restated`` takes lists
the caller built and returns new ones."""

from __future__ import annotations

import re
from fractions import Fraction

from steadfast.shared.names import NAME_TOKEN, WEEKDAYS, WEEKEND, written_as_names
from steadfast.shared.quantities.mention import Mention

#: the words between a count and its list, and the list: "three main meals - breakfast, lunch,
#: and dinner"
_LISTED = re.compile(
    r"(?:\s+[^\W\d_]+){0,3}\s*[-\u2013\u2014:(,]?\s*((?:[^\W\d_]+,\s+){1,8}(?:and|or)\s+[^\W\d_]+)"
)
_SENTENCE = re.compile(r"[^.?!]*")
#: a day's place said beside its name: "the fourth day, Wednesday", "the first day (Sunday)"
_DAY_NAMED = re.compile(
    rf"\s+day\b(?:\s+of\s+the\s+week)?\s*[,(\u2013\u2014-]?\s*({'|'.join(WEEKDAYS + WEEKEND)})\b",
    re.IGNORECASE,
)


def restated(
    missing: list[Mention], added: list[Mention], original: str, candidate: str
) -> tuple[list[Mention], list[Mention]]:
    """``missing`` and ``added`` without the numbers a rewording restates."""
    added = [
        c
        for c in added
        if not _counts_a_list(c, candidate, original)
        and not _names_a_day(c, candidate, original)
        and not _in_initials(c, candidate, original)
        and not _ordinal_for_another(c, candidate, original)
    ]
    missing = [
        m
        for m in missing
        if not _in_initials(m, original, candidate) and not _names_counted(m, original, candidate)
    ]
    kept = []
    for their in missing:
        turned = next(
            (
                c
                for c in added
                if _turned_multiple(their, c, original, candidate)
                or _halves(their, c, original, candidate)
            ),
            None,
        )
        if turned is None:
            kept.append(their)
        else:
            added.remove(turned)
    return kept, added


def _counts_a_list(mention: Mention, candidate: str, original: str) -> bool:
    """Whether the number counts a list of as many things, every one of them the original's."""
    if mention.span is None or len(mention.values) != 1:
        return False
    count = next(iter(mention.values))
    listed = _LISTED.match(candidate, mention.span[1])
    if listed is None:
        return False
    items = [item for item in re.split(r",\s*|\s+(?:and|or)\s+", listed.group(1)) if item]
    said = original.lower()
    return len(items) == count and all(
        re.search(rf"\b{re.escape(item.lower())}\b", said) for item in items
    )


#: "the three" standing for people the story names: "how many pets do the three have?"
_THE_COUNT = re.compile(r"\b(?:the|all)\s+$", re.IGNORECASE)
_NOT_A_NOUN = re.compile(
    r"\s*(?:[?.,;!]|(?:of them|together|combined|have|had|has|do|did|are|were)\b)"
)
#: names listed: "Jan, Marcia, and Cindy"
_NAMES_LISTED = re.compile(r"\b([A-Z][a-z]+(?:,\s+[A-Z][a-z]+)*,?\s+and\s+[A-Z][a-z]+)\b")


def _names_counted(mention: Mention, original: str, candidate: str) -> bool:
    """Whether the original's "the three" (with no noun after it) stands for as many people
    as the candidate names in a list, every one of them named in the original ("how many pets
    do Jan, Marcia, and Cindy have together?" for "... do the three have?")."""
    if mention.span is None or len(mention.values) != 1:
        return False
    start, end = mention.span
    if not _THE_COUNT.search(original[:start]) or not _NOT_A_NOUN.match(original, end):
        return False
    count = next(iter(mention.values))
    for listed in _NAMES_LISTED.findall(candidate):
        names = [n for n in re.split(r",?\s+and\s+|,\s*", listed) if n]
        if len(names) == count and all(re.search(rf"\b{n}\b", original) for n in names):
            return True
    return False


#: a name's initials with its number: "WFC3", "WFC-3"
_INITIALS = re.compile(r"\b([A-Z]{2,6})-?(\d+)\b")


def _in_initials(mention: Mention, text: str, other: str) -> bool:
    """Whether the number ends a name of capitalised words that ``other`` writes as their
    initials with the number ("Wide Field Camera 3" as "WFC3")."""
    if mention.span is None:
        return False
    words = NAME_TOKEN.findall(text[: mention.span[0]])
    for letters, digits in _INITIALS.findall(other):
        named = words[-len(letters) :]
        if digits != text[mention.span[0] : mention.span[1]].strip() or len(named) < len(letters):
            continue
        if all(word[0].isupper() for word in named) and letters == "".join(w[0] for w in named):
            return True
    return False


def _names_a_day(mention: Mention, candidate: str, original: str) -> bool:
    """Whether an ordinal is a day's place said beside the day the original names."""
    if not mention.ordinal or mention.span is None:
        return False
    day = _DAY_NAMED.match(candidate, mention.span[1])
    return day is not None and day.group(1).lower() in original.lower()


#: "in half", "into halves", "in two", "into two halves", "into two equal parts": one cut
_IN_HALF = re.compile(r"\s*(?:in|into)\s+$", re.IGNORECASE)
_TWO_PARTS = re.compile(r"\s+(?:equal\s+)?(?:halves|parts|pieces)\b", re.IGNORECASE)


def _halves(their: Mention, our: Mention, original: str, candidate: str) -> bool:
    """Whether the original's "in half" is said "into two halves" (or "in two", "into two
    equal parts"): one cut into two parts either way."""
    if their.span is None or our.span is None:
        return False
    if original[their.span[0] : their.span[1]].lower() != "half":
        return False
    if not _IN_HALF.search(original[: their.span[0]]) or not _IN_HALF.search(
        candidate[: our.span[0]]
    ):
        return False
    written = candidate[our.span[0] : our.span[1]].lower()
    if written == "two halves":
        return True
    return written == "two" and (
        _TWO_PARTS.match(candidate, our.span[1]) is not None
        or not re.match(r"\s+[^\W\d_]", candidate[our.span[1] :])
    )


#: "another", "the other": a further one of what the text lists
_ANOTHER = re.compile(r"\b(?:another|the\s+other)\b", re.IGNORECASE)


def _ordinal_for_another(mention: Mention, candidate: str, original: str) -> bool:
    """Whether an ordinal after "a" ("a second", "a third set") counts the things the original
    lists with "another": the candidate says "another" fewer times, no more such ordinals
    than it dropped, and the original's first one and its "another"s come to at least that
    many. "the second batch" picks one of them out, which the original does not."""
    if not mention.ordinal or len(mention.values) != 1 or mention.span is None:
        return False
    place = next(iter(mention.values))
    if not isinstance(place, Fraction) or not _A_BEFORE.search(candidate[: mention.span[0]]):
        return False
    others = len(_ANOTHER.findall(original))
    dropped = others - len(_ANOTHER.findall(candidate))
    return 2 <= place <= others + 1 and 0 < len(_A_ORDINAL.findall(candidate)) <= dropped


_A_BEFORE = re.compile(r"\ban?\s+$", re.IGNORECASE)
_A_ORDINAL = re.compile(r"\ban?\s+(?:second|third|fourth|fifth)\b", re.IGNORECASE)


def _turned_multiple(their: Mention, our: Mention, original: str, candidate: str) -> bool:
    """Whether ``our`` says ``their`` multiple the other way round: its inverse, with the two
    names it compares in the other order."""
    if len(their.values) != 1 or len(our.values) != 1 or their.span is None or our.span is None:
        return False
    value, inverse = next(iter(their.values)), next(iter(our.values))
    if not (isinstance(value, Fraction) and isinstance(inverse, Fraction)) or value * inverse != 1:
        return False
    if not (their.multiple or their.dimension == "ratio"):
        return False
    before, after = _names_around(their, original, candidate)
    now_before, now_after = _names_around(our, candidate, original)
    return bool(before and after) and (before, after) == (now_after, now_before)


def _names_around(mention: Mention, text: str, other: str) -> tuple[str, str]:
    """The first name before the number in its sentence and the first after it (names both
    texts write), or empty strings."""
    assert mention.span is not None
    start, end = mention.span
    sentence_start = max(text.rfind(".", 0, start), text.rfind("?", 0, start)) + 1
    sentence_end = _SENTENCE.match(text, end)
    words_before = NAME_TOKEN.findall(text[sentence_start:start])
    words_after = NAME_TOKEN.findall(text[end : sentence_end.end() if sentence_end else None])
    names = written_as_names({word.lower() for word in words_before + words_after}, text, other)
    before = next((w for w in _bare(words_before) if w in names), "")
    after = next((w for w in _bare(words_after) if w in names), "")
    return before, after


def _bare(words: list[str]) -> list[str]:
    return [word.lower().removesuffix("'s") for word in words]
