"""Lexical overlap, docs/method.md §1.1 step 2: the verify service's filter, and what the
perturb service tells the generator to change."""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Iterable

# The study's ``[A-Za-z0-9']+`` made Unicode-aware: a token is a run of letters, digits,
# combining marks of any script (a Devanagari vowel sign belongs to its word) and apostrophes,
# so "don't" and "dell'anno" stay one token and "students'" is not "students", as in the study.
# the apostrophe's other code points; an opening quotation mark (‘) is no apostrophe
_APOSTROPHES = str.maketrans({"’": "'", "ʼ": "'", "＇": "'"})


def fold_accents(text: str) -> str:
    """``"Città"`` → ``"Citta"``: decompose and drop the combining marks."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(char for char in decomposed if not unicodedata.combining(char))


def _word_char(char: str) -> bool:
    return char.isalnum() or unicodedata.category(char)[0] == "M"


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens of ``text``."""
    normalized = unicodedata.normalize("NFC", text).translate(_APOSTROPHES).lower()
    words = "".join(char if char == "'" or _word_char(char) else " " for char in normalized)
    return words.split()


def overlap(a: str, b: str) -> float:
    """|multiset(a) ∩ multiset(b)| / max(1, min(|a|, |b|)); 0 when either has no tokens."""
    tokens_a, tokens_b = tokens(a), tokens(b)
    if not tokens_a or not tokens_b:
        return 0.0
    shared = sum((Counter(tokens_a) & Counter(tokens_b)).values())
    return shared / max(1, min(len(tokens_a), len(tokens_b)))


def max_overlap(candidate: str, references: Iterable[str]) -> float:
    return max((overlap(candidate, reference) for reference in references), default=0.0)
