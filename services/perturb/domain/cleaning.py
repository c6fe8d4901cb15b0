"""Cleaning of one generated line, docs/method.md §1.1 step 1."""

from __future__ import annotations

import re

_QUOTE_PAIRS = {'"': '"', "'": "'", "“": "”", "‘": "’", "«": "»", "„": "“", "`": "`"}
#: a hyphen is a bullet only before a space: "-3 squared is what?" starts with minus three;
#: so is an asterisk: "*Why* is it?" starts with emphasis
_BULLET_OR_NUMBER = re.compile(r"^(?:[-*]\s+|[•·–—]\s*|\(?\d{1,3}[.)](?:\s+|$))")
#: a word's letter: a line without one ("3", an item's number alone) is no candidate
_LETTER = re.compile(r"[^\W\d_]")
_WHITESPACE = re.compile(r"\s+")
#: a note in parentheses after the sentence has ended is the writer's, not the question's:
#: "Which is the capital of Australia? (confident, no hedging)" (the tone it was asked for)
_TRAILING_NOTE = re.compile(r"^(.*[?.!])\s*\([^()]*\)$")


def complete_lines(text: str) -> str:
    """The text up to its last line break: what a reply cut at its time limit wrote in whole
    lines ("1. How many ...?\n2. What is the tot" keeps its first line)."""
    return text[: text.rfind("\n") + 1]


def first_line(text: str) -> str:
    """Models sometimes add lines despite the instruction; the first non-empty one is the reply."""
    return next((line for line in text.splitlines() if line.strip()), "")


def candidate_lines(text: str, limit: int) -> list[str]:
    """The candidates of a numbered list, cleaned, at most ``limit``: a line that ends in a
    colon is a heading, and one without a letter (an item's number alone, as a reply cut short
    or ended early leaves it) is no candidate."""
    lines = (clean_line(line) for line in text.splitlines())
    return [line for line in lines if _LETTER.search(line) and not line.endswith(":")][:limit]


def clean_candidate(text: str) -> str:
    """The first non-empty line of a reply, cleaned (:func:`clean_line`)."""
    return clean_line(first_line(text))


def clean_line(text: str) -> str:
    """Trim, drop one pair of surrounding quotes, collapse white space, drop a leading bullet or
    "N." numbering — on either side of the quotes (`3. "..."` and `"3. ..."` alike) — and a
    note in parentheses after the sentence's end."""
    line = _without_numbering(text.strip())
    if len(line) >= 2 and _QUOTE_PAIRS.get(line[0]) == line[-1]:
        line = _without_numbering(line[1:-1].strip())
    if note := _TRAILING_NOTE.match(line):
        line = note.group(1)
    return _WHITESPACE.sub(" ", line)


def _without_numbering(line: str) -> str:
    return _BULLET_OR_NUMBER.sub("", line, count=1).strip()


def text_key(text: str) -> str:
    """What two texts the same but for case and spacing share."""
    return _WHITESPACE.sub(" ", text).strip().casefold()


def same_text(a: str, b: str) -> bool:
    return text_key(a) == text_key(b)
