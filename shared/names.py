"""Which words of a text are names, read from how the texts write them: a word written
capitalised wherever it appears ("Carmen", "Gordy's"), never in lower case. No list of people's
names: a maths story's people are whoever it names (only titles and the days and occasions of a
story are listed, as no one)."""

from __future__ import annotations

import re

#: capitalised, yet the day or the occasion of a story, not one of its people or things
_DATE_NAMES_TEXT = """
monday tuesday wednesday thursday friday saturday sunday
january february march april may june july august september october november december
christmas easter halloween thanksgiving
"""
DATE_NAMES = frozenset(_DATE_NAMES_TEXT.split())
#: capitalised before a name, yet no name ("Mr. Jones" and "Jones" are one person)
_TITLES = frozenset(["mr", "mrs", "ms", "miss", "mister", "dr", "sir", "madam", "aunt", "uncle"])


def written_as_names(words: frozenset[str] | set[str], *texts: str) -> frozenset[str]:
    """Those of ``words`` (lower-cased; a possessive's "'s" taken off) that ``texts`` write
    capitalised only, in the plural too: the "cookie" of "Cookie Monster" is no name where the
    story counts "cookies"."""
    bare = {word.removesuffix("'s") for word in words} - _TITLES
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
