"""Lexical-overlap filter, METHOD.md §1.1 step 2."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable

# Unicode-aware version of the study's ``[A-Za-z0-9']+``: letters and digits of any script,
# with inner apostrophes kept so "don't" and "dell'anno" stay one token.
_TOKEN = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
_APOSTROPHES = str.maketrans({"’": "'", "‘": "'", "ʼ": "'"})


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens of ``text``."""
    normalized = unicodedata.normalize("NFC", text).translate(_APOSTROPHES).lower()
    return _TOKEN.findall(normalized)


def overlap(a: str, b: str) -> float:
    """|multiset(a) ∩ multiset(b)| / max(1, min(|a|, |b|)); 0 when either has no tokens."""
    tokens_a, tokens_b = tokens(a), tokens(b)
    if not tokens_a or not tokens_b:
        return 0.0
    shared = sum((Counter(tokens_a) & Counter(tokens_b)).values())
    return shared / max(1, min(len(tokens_a), len(tokens_b)))


def max_overlap(candidate: str, references: Iterable[str]) -> float:
    return max((overlap(candidate, reference) for reference in references), default=0.0)
