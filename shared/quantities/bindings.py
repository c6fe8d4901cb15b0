"""Numbers swapped between the things they count: "He planted 5 tomato plants and 8 plants of
eggplant" reworded "He put in 8 tomato plants and 5 eggplant plants" keeps every number and
every word, and asks another problem.

A number counts the words right after it, up to the end of its clause ("5 tomato plants",
"2 pounds of Parmesan"). A word that follows several of a text's numbers ("plants", "pounds")
tells them apart from none and is dropped. The candidate is refused when two of the original's
numbers, each written once in both texts, have traded what they count: each now counts a word
the other counted, and neither still counts one of its own. One number moved to another thing
("3 of them" said as "3 apples") is no swap and is left to the other checks.
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations

from steadfast.shared.inflections import word_forms
from steadfast.shared.quantities.mention import Quantity
from steadfast.shared.quantities.surroundings import numbers_written_once

#: how many words after a number may say what it counts
_WINDOW = 4
_FUNCTION_TEXT = (
    "the a an of for at in on to with by from each every per apiece more less fewer as is are "
    "was were be been that which who his her their its them it he she they this these those "
    "some all only just about around over under nearly almost up down each other another"
)
FUNCTION_WORDS = frozenset(_FUNCTION_TEXT.split())


def swapped_numbers(original: str, candidate: str, language: str = "en") -> str | None:
    """Two numbers whose counted things the candidate swaps, or None."""
    theirs, ours = _counted(original, language), _counted(candidate, language, shared=True)
    for first, second in combinations(sorted(set(theirs) & set(ours), key=str), 2):
        now_first, now_second = ours[first], ours[second]
        if (
            now_first & theirs[second]
            and now_second & theirs[first]
            and not now_first & theirs[first]
            and not now_second & theirs[second]
        ):
            return (
                f"swaps what {first} and {second} count "
                f"({_word(theirs[first])} / {_word(theirs[second])})"
            )
    return None


def _counted(text: str, language: str, shared: bool = False) -> dict[Quantity, frozenset[str]]:
    """Each number written once (amounts of money or time, which say what they are, are not
    read; fractions and percentages, which do not, are), with the stems of the words it
    counts. Words that more than one number of its kind (a count, a fraction) counts are left
    out, unless ``shared``: a candidate's "half her running speed" must not hide that its
    "two-thirds of the time running" counts running now, nor "25% of the sheep" that "12
    cows and 20 sheep" became "20 cows and 12 sheep"."""
    read = [
        (number, words)
        for number in numbers_written_once(
            text, language, window=_WINDOW, amounts=False, ratios=True
        )
        if (words := frozenset(stem(w) for w in number.after if w not in FUNCTION_WORDS))
    ]
    if shared:
        return {number.value: words for number, words in read}
    counts = Counter((number.ratio, word) for number, words in read for word in words)
    return {
        number.value: kept
        for number, words in read
        if (kept := frozenset(w for w in words if counts[number.ratio, w] == 1))
    }


def stem(word: str) -> str:
    """One name for a word's forms ("plants" / "plant"), the shortest."""
    return min(word_forms(word), key=lambda form: (len(form), form))


def _word(stems: frozenset[str]) -> str:
    return "/".join(sorted(stems))
