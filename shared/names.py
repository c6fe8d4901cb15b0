"""Which words of a text are names, read from how the texts write them: a word written
capitalised wherever it appears ("Carmen", "Gordy's"), never in lower case. No list of people's
names: a maths story's people are whoever it names (only titles and the days and occasions of a
story are listed, as no one)."""

from __future__ import annotations

import re

#: a word as the name readers read it: letters, and a possessive's "'s" ("Gordy's")
NAME_TOKEN = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday")
WEEKEND = ("saturday", "sunday")
#: capitalised, yet no one of a story: its days and occasions, and the titles before a name
#: ("Mr. Jones" and "Jones" are one person)
_NO_ONE_TEXT = """
january february march april may june july august september october november december
christmas easter halloween thanksgiving
mr mrs ms miss mister dr sir madam aunt uncle
"""
_NO_ONE = frozenset(_NO_ONE_TEXT.split()) | frozenset(WEEKDAYS) | frozenset(WEEKEND)


def written_as_names(words: frozenset[str] | set[str], *texts: str) -> frozenset[str]:
    """Those of ``words`` (lower-cased; a possessive's "'s" taken off) that ``texts`` write
    capitalised only, in the plural too (the "cookie" of "Cookie Monster" is no name where the
    story counts "cookies"), and that are no day, month, holiday or title."""
    bare = {word.removesuffix("'s") for word in words} - _NO_ONE
    return frozenset(
        word
        for word in bare
        if any(re.search(rf"\b{re.escape(word.capitalize())}\b", text) for text in texts)
        and not any(re.search(rf"\b{re.escape(word)}(?:e?s)?\b", text) for text in texts)
    )


def share_a_name(ours: frozenset[str], theirs: frozenset[str]) -> bool:
    """Whether two sets of names (lower-cased) share one, a family's plural counting as its
    name ("the Smiths" / "the Smith family")."""
    return any(a == b or a == f"{b}s" or b == f"{a}s" for a in ours for b in theirs)
