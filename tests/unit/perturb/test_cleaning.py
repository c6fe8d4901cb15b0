from __future__ import annotations

import pytest

from steadfast.services.perturb.domain.cleaning import (
    candidate_lines,
    clean_candidate,
    complete_lines,
    same_text,
)


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("  How old is he?  ", "How old is he?"),
        # the writer's note on the tone it was asked for, after the question had ended
        (
            "Which is the capital of Australia? (confident, no hedging)",
            "Which is the capital of Australia?",
        ),
        ("2. Name the capital of Australia. (formal)", "Name the capital of Australia."),
        # parentheses inside the question stay
        (
            "What is the capital of Georgia (the country)?",
            "What is the capital of Georgia (the country)?",
        ),
        ("What is 2 (two) + 3?", "What is 2 (two) + 3?"),
        ('"How old is he?"', "How old is he?"),
        ("“How old is he?”", "How old is he?"),
        ("«Quanti anni ha?»", "Quanti anni ha?"),
        ("'How old is he?'", "How old is he?"),
        ("\"'How old is he?'\"", "'How old is he?'"),  # only one pair of quotes goes
        ('"How old" is he?', '"How old" is he?'),  # quotes not around the whole line stay
        ("How   old\tis  he?", "How old is he?"),
        ("- How old is he?", "How old is he?"),
        ("* How old is he?", "How old is he?"),
        ("• How old is he?", "How old is he?"),
        ("1. How old is he?", "How old is he?"),
        ("12) How old is he?", "How old is he?"),
        ('3. "How old is he?"', "How old is he?"),
        ('"1. What is the capital of Italy?"', "What is the capital of Italy?"),
        ("-3 squared is what number?", "-3 squared is what number?"),  # a minus, no bullet
        ("-How old is he?", "-How old is he?"),
        ("*Why* is the sky blue?", "*Why* is the sky blue?"),  # emphasis, no bullet
        ("**Why** is the sky blue?", "**Why** is the sky blue?"),
        ("1.5 liters are left; how many cups?", "1.5 liters are left; how many cups?"),
        ("3 apples cost how much?", "3 apples cost how much?"),
        ("\n\nHow old is he?\nI hope this helps.", "How old is he?"),
        ("   ", ""),
        ('""', ""),
    ],
)
def test_cleaning_rules(raw: str, clean: str) -> None:
    assert clean_candidate(raw) == clean


def test_same_text_ignores_case_and_spacing() -> None:
    assert same_text("How  old is HE?", "how old is he?")
    assert not same_text("How old is he?", "How old is she?")


@pytest.mark.parametrize(
    ("reply", "lines"),
    [
        ("1. Who wrote it?\n2. Whose play is it?\n3. Name its author.", 3),
        # a reply cut short, or ended early, leaves an item's number alone: no candidate
        ("1. Who wrote it?\n2. Whose play is it?\n3.", 2),
        ("1. Who wrote it?\n2. Whose play is it?\n3", 2),
        ("1) Who wrote it?\n(2)", 1),
        ("Here are three:\n1. Who wrote it?", 1),
        # a number that starts a candidate stays
        ("1. 3.5 km from here, what town is it?", 1),
    ],
)
def test_candidate_lines_are_the_items_with_words(reply: str, lines: int) -> None:
    found = candidate_lines(reply, 5)
    assert len(found) == lines, found
    assert all(any(char.isalpha() for char in line) for line in found)


@pytest.mark.parametrize(
    ("text", "whole"),
    [
        ("1. How many apples?\n2. What is the tot", "1. How many apples?\n"),
        ("1. How many apples?\n", "1. How many apples?\n"),
        ("1. How many app", ""),
        ("", ""),
    ],
)
def test_a_reply_cut_at_its_time_limit_keeps_its_whole_lines(text: str, whole: str) -> None:
    assert complete_lines(text) == whole
