"""English word forms (``shared.inflections``), which let an answer's restatement of the
question's verb count as the question's word."""

from __future__ import annotations

import pytest

from steadfast.shared.inflections import same_word, word_forms


@pytest.mark.parametrize(
    ("word", "form"),
    [
        ("end", "ended"),
        ("release", "released"),
        ("commit", "committed"),
        ("carry", "carried"),
        ("appear", "appears"),
        ("lose", "lost"),
        ("write", "written"),
        ("wrote", "written"),
        ("buy", "bought"),
        ("become", "became"),
    ],
)
def test_a_word_has_its_forms(word: str, form: str) -> None:
    assert form in word_forms(word)


def test_other_words_are_not_forms() -> None:
    assert "viola" not in word_forms("violin")
    assert "born" not in word_forms("die")
    assert word_forms("of") == {"of"}  # short words are kept as they are


def test_two_forms_of_one_word_are_the_same_word_either_way_round() -> None:
    assert same_word("painted", "paint") and same_word("paint", "painted")
    assert same_word("bush", "bushes") and same_word("wrote", "write")
    assert not same_word("rose", "bush")
    assert not same_word("painting", "painter")
