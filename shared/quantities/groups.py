"""A number must stay with its group: "Gretchen has 110 coins. There are 30 more gold coins than
silver coins." counts all the coins as 110; "... add 30 to the 110 silver coins" (a demo's
accepted paraphrase) counts only the silver ones, and so asks another problem with the very same
numbers and nearly the same words.

Only English is read, and only groups the original itself names: a noun written after two or
more different words ("gold coins", "silver coins") is divided into groups, and the words before
it are the groups' names. A candidate is refused only when a number the original follows with
that noun is followed, in the candidate, by the noun with another group's name ("110 coins" →
"110 silver coins", "30 more gold coins" → "30 more silver coins"), states the number as the
total of another group ("Gretchen's gold coins total 110 coins", accepted in an experiment of
the demo's sets) or says it is another group's number ("Gretchen's total number of gold coins,
which consists of 30 more than her silver coins, equals 110", accepted in a demo run). The
words after "than" name the side a number is compared with, not its group: "gold coins are 30
more than silver coins" keeps the 30 with the gold coins. A rewording that writes the number
elsewhere in its sentence ("the total of 110 coins", "110 in all") is left to the other
checks."""

from __future__ import annotations

import itertools
import re
from collections import defaultdict

_TOKEN = re.compile(r"[a-z]+(?:'[a-z]+)?|\d[\d,.]*\d|\d|[^\sa-z\d]")
#: words that never name a group nor are divided into groups
_FUNCTION_TEXT = (
    "the a an of and or to in on at for is are was were be has have had with more than fewer "
    "less each every per by as his her their its he she they it there how what many much does do "
    "did that this these those some all any total extra additional other"
)
_FUNCTION = frozenset(_FUNCTION_TEXT.split())
#: the words that state a group's total right before its number ("gold coins total 110")
_TOTALLING_TEXT = "total totals totaled totalled totaling totalling number numbering"
_TOTALLING = frozenset(_TOTALLING_TEXT.split())
_TOTALLING_PAIRS = frozenset(
    {
        ("amount", "to"),
        ("amounts", "to"),
        ("come", "to"),
        ("comes", "to"),
        ("add", "up"),
        ("adds", "up"),
    }
)
#: the words that state what a group's number is right before the number ("... equals 110")
_EQUATING = frozenset({"equals", "equal", "is", "are", "was", "were"})
#: words right after a number that make it an amount compared, not a group's number
_COMPARED = frozenset(
    ["more", "fewer", "less", "than", "times", "greater", "larger", "bigger", "higher", "over"]
)
#: how many words after a number may still describe what it counts ("30 more shiny gold coins")
_REACH = 4

Grouping = tuple[str, frozenset[str]]


def regrouped_number(original: str, candidate: str) -> str | None:
    """Why the candidate moves one of the original's numbers to another group (None when it
    does not)."""
    original_words, candidate_words = _tokens(original), _tokens(candidate)
    divided = _divided_nouns(original_words)
    if not divided:
        return None
    ours = _groupings(original_words, divided)
    for number, groupings in _groupings(candidate_words, divided).items():
        for noun, names in sorted(groupings, key=_in_order):
            theirs = {named for counted, named in ours.get(number, set()) if counted == noun}
            if theirs and names and names not in theirs:
                was = " ".join([number, *sorted(min(theirs, key=sorted)), noun])
                now = " ".join([number, *sorted(names), noun])
                return f'moves a number to another group: "{now}" where the original has "{was}"'
    return None


def _in_order(grouping: Grouping) -> tuple[str, list[str]]:
    return grouping[0], sorted(grouping[1])


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower().replace("’", "'"))


def _divided_nouns(words: list[str]) -> dict[str, set[str]]:
    """The nouns the text divides into groups, with the groups' names: a word written after two
    or more different words ("gold coins", "silver coins" → coins: {gold, silver})."""
    names: dict[str, set[str]] = defaultdict(set)
    for name, noun in itertools.pairwise(words):
        if _plain_word(name) and _plain_word(noun):
            names[noun].add(name)
    return {noun: found for noun, found in names.items() if len(found) >= 2}


def _plain_word(word: str) -> bool:
    return word.isalpha() and word not in _FUNCTION


def _groupings(words: list[str], divided: dict[str, set[str]]) -> dict[str, set[Grouping]]:
    """For each number, the groups it counts: the divided noun written right after it with the
    group names before ("110 coins" → ("coins", {}); "30 more gold coins" → ("coins",
    {"gold"})), the group whose total it states, or the group it is said to be the number of
    ("gold coins are 40")."""
    found: dict[str, set[Grouping]] = defaultdict(set)
    for index, word in enumerate(words):
        if not word[0].isdigit():
            continue
        number = word.replace(",", "")
        if (equated := _equated_group(words, index, divided)) is not None:
            found[number].add(equated)  # "gold coins are 40 and the silver ..."
            continue
        if (counted := _counted_group(words, index, divided)) is not None:
            found[number].add(counted)
        if (totalled := _totalled_group(words, index, divided)) is not None:
            found[number].add(totalled)
    return found


def _counted_group(words: list[str], index: int, divided: dict[str, set[str]]) -> Grouping | None:
    """The divided noun written right after the number at ``index`` and the group names before
    it ("30 more gold coins" → ("coins", {"gold"}))."""
    phrase: list[str] = []
    for following in words[index + 1 : index + 1 + _REACH]:
        if not following.isalpha() or following == "than":
            return None  # after "than" comes the side compared with, not the group counted
        if following in divided:
            group = frozenset(name for name in phrase if name in divided[following])
            if group == divided[following]:  # "110 gold and silver coins": all of them
                group = frozenset()
            return following, group
        phrase.append(following)
    return None


def _totalled_group(words: list[str], index: int, divided: dict[str, set[str]]) -> Grouping | None:
    """The group whose total the number at ``index`` states: "gold coins total 110" → ("coins",
    {"gold"}); "gold and silver coins total 110" counts all of them."""
    start = index - 1
    if start >= 1 and (words[start - 1], words[start]) in _TOTALLING_PAIRS:
        start -= 1  # "amount to 110"
    elif (
        start >= 2 and words[start] == "to" and tuple(words[start - 2 : start]) in _TOTALLING_PAIRS
    ):
        start -= 2  # "add up to 110"
    elif start < 0 or words[start] not in _TOTALLING:
        return None
    return _subject_group(words, start - 1, divided)


def _equated_group(words: list[str], index: int, divided: dict[str, set[str]]) -> Grouping | None:
    """The group whose number the number at ``index`` is said to be: "the number of gold coins,
    which is 30 more than the silver coins, equals 110" → ("coins", {"gold"}). An amount
    compared ("gold coins are 30 more than ...") is no group's number."""
    if any(word in _COMPARED for word in words[index + 1 : index + 3]):
        return None
    start = index - 1
    if start >= 1 and words[start] == "to" and words[start - 1] == "equal":
        start -= 1  # "is equal to 110"
        if start >= 1 and words[start - 1] in _EQUATING:
            start -= 1
    elif start < 0 or words[start] not in _EQUATING:
        return None
    subject_end = start - 1
    if subject_end >= 0 and words[subject_end] == ",":  # ", which consists of ..., equals"
        opening = [i for i in range(subject_end) if words[i] == ","]
        if not opening:
            return None
        subject_end = opening[-1] - 1
    return _subject_group(words, subject_end, divided)


def _subject_group(words: list[str], noun_at: int, divided: dict[str, set[str]]) -> Grouping | None:
    """The group a subject ending with a divided noun at ``noun_at`` names: "gold coins" →
    ("coins", {"gold"}); all of them when it names two ("gold and silver coins", "the silver
    coins plus the gold coins")."""
    if noun_at < 1 or words[noun_at] not in divided:
        return None
    noun, name = words[noun_at], words[noun_at - 1]
    if name not in divided[noun]:
        return None
    subject = itertools.takewhile(str.isalpha, reversed(words[max(0, noun_at - 8) : noun_at]))
    named = {word for word in subject if word in divided[noun]}
    return noun, frozenset() if len(named) >= 2 else frozenset({name})
