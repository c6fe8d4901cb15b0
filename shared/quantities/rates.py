"""A rate must stay with what it is counted per: "Each rose bush has 25 roses. Each rose has 8
thorns." gives 25 roses to a bush; "... 3 rose bushes, where each rose has 25 roses and each rose
has 8 thorns" (a demo's accepted paraphrase) gives them to a rose, and so asks another problem
with the very same numbers and nearly the same words.

Only English is read, and only rates stated with "each" or "every" ("each rose bush has 25
roses", "3 rose bushes, each with 25 roses", "3 rose bushes with 25 roses each", "25 roses on
each bush") or "per" ("8 thorns per rose"); a rate joined to one of these with "and" and a verb
has the same owner ("3 rose bushes, each of which holds 25 roses and has 8 thorns", accepted in
a demo run, gives the thorns to the bushes). A candidate is refused only when it gives one of
the original's rates (the same number of the same thing) to something else the original counts
per, or to the very thing counted ("each rose has 25 roses"); a rate written another way is
left to the other checks."""

from __future__ import annotations

import re
from dataclasses import dataclass

from steadfast.shared.inflections import same_word

_NUMBER = r"\$?\d[\d,.]*"
_WORD = r"[a-z]+(?:'s)?"
#: what is counted per: one to three words
_OWNER = rf"(?P<owner>(?:{_WORD} ){{0,2}}?{_WORD})"
#: what is counted: the two words after the number ("25 roses", "25 red roses")
_COUNTED = rf"(?P<n>{_NUMBER}) (?P<counted>[a-z]+(?: (?!and\b|or\b)[a-z]+)?)"
_HOLDS = (
    r"(?:has|have|having|had|with|contains?|containing|holds?|holding|carr(?:y|ies|ying)|"
    r"bears?|bearing|produces?|producing|gets?|getting|grows?|growing|needs?|needing|"
    r"consists? of|consisting of|compris(?:es|ing)|made up of)"
)
_RATES = (
    # each rose bush has 25 roses; each of Dan's 3 rose bushes contains 25 roses
    re.compile(
        rf"\b(?:each|every) (?:one )?(?:of {_WORD} )?(?:{_NUMBER} )?{_OWNER},? {_HOLDS} {_COUNTED}"
    ),
    # 3 rose bushes, each with 25 roses; bushes that each have 25 roses; bushes, each of which
    # holds 25 roses
    re.compile(
        rf"\b{_OWNER},? (?:that |which )?each(?: of (?:which|them|these|those)| one)? {_HOLDS} "
        rf"{_COUNTED}"
    ),
    # 3 rose bushes with 25 roses each; bushes that have 25 roses each
    re.compile(
        rf"\b{_OWNER},? (?:(?:that|which) )?(?:with|having|have|has|containing|holding) "
        rf"{_COUNTED} each\b"
    ),
    # 25 roses on each bush; 8 thorns per rose
    re.compile(
        rf"{_COUNTED} (?:(?:on|in|for|from|of) (?:each|every)|per) (?:single )?(?P<owner>{_WORD})"
    ),
)
#: a second rate of the same owner: "each of which holds 25 roses and has 8 thorns"
_AND_HOLDS = re.compile(rf",? and {_HOLDS} {_COUNTED}")
_SKIPPED_TEXT = (
    "the a an one single of his her their its and or each every which them these those whom"
)
_SKIPPED = frozenset(_SKIPPED_TEXT.split())


@dataclass(frozen=True)
class Rate:
    """A number of a thing stated per something else ("each rose bush has 25 roses")."""

    number: str
    #: the words that may name what is counted
    counted: frozenset[str]
    owner: str
    #: the first word after the number, to show
    written: str

    def counts_as(self, other: Rate) -> bool:
        """The same number of the same thing."""
        return self.number == other.number and any(
            same_word(mine, theirs) for mine in self.counted for theirs in other.counted
        )


#: a bare number said to be what each thing is: "where each rose is 25 and each rose has 8
#: thorns" (accepted in a demo run of 2026-12-06 at judge 0.75 for "Each rose bush has 25
#: roses. Each rose has 8 thorns.", and answered 24)
_BARE = re.compile(
    rf"\b(?:each|every) (?:one )?(?:of {_WORD} )?{_OWNER},? (?:is|are|was|were|equals|=) "
    rf"(?P<n>{_NUMBER})(?=\s*(?:[,.;:?!]|and\b|$))"
)


def moved_rate(original: str, candidate: str) -> str | None:
    """Why the candidate gives one of the original's rates to something else (None when it
    does not)."""
    ours = _rates(original)
    if not ours:
        return None
    owners = {rate.owner for rate in ours}
    if bare := _bare_rate(candidate, ours, owners):
        return bare
    for rate in _rates(candidate):
        stated = [r for r in ours if r.counts_as(rate)]
        if not stated or any(same_word(r.owner, rate.owner) for r in stated):
            continue
        elsewhere = any(same_word(rate.owner, owner) for owner in owners)
        if elsewhere or any(same_word(rate.owner, word) for word in rate.counted):
            return (
                f'gives "{rate.number} {rate.written}" each to "{rate.owner}", where the original '
                f'gives them to "{stated[0].owner}"'
            )
    return None


def _bare_rate(candidate: str, ours: list[Rate], owners: set[str]) -> str | None:
    """A number of one of the original's rates said bare of another thing the original counts
    per: "each rose is 25" where the original gives 25 roses to each rose bush."""
    for match in _BARE.finditer(candidate.lower().replace("’", "'")):
        owner, number = _head(match["owner"]), match["n"].replace(",", "").lstrip("$")
        if owner is None or not any(same_word(owner, other) for other in owners):
            continue
        stated = [r for r in ours if r.number == number and not same_word(r.owner, owner)]
        if stated:
            return (
                f'says each "{owner}" is {number}, where the original gives "{number} '
                f'{stated[0].written}" to each "{stated[0].owner}"'
            )
    return None


def _rates(text: str) -> list[Rate]:
    lowered = text.lower().replace("’", "'")
    found = []
    for pattern in _RATES:
        for match in pattern.finditer(lowered):
            owner = _head(match["owner"])
            if owner is None:
                continue
            stated: re.Match[str] | None = match
            while stated is not None:
                counted = frozenset(stated["counted"].split()) - _SKIPPED
                if counted:
                    number = stated["n"].replace(",", "").lstrip("$")
                    found.append(Rate(number, counted, owner, stated["counted"].split()[0]))
                stated = _AND_HOLDS.match(lowered, stated.end())
    return found


def _head(words: str) -> str | None:
    """The word an owner phrase names ("rose bushes" → "bushes", "dan's bushes" → "bushes")."""
    kept = [w for w in words.split() if w not in _SKIPPED and not w.endswith("'s")]
    return kept[-1] if kept else None
