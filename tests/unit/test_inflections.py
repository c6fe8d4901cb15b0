"""English word forms (``shared.inflections``), which let an answer's restatement of the
question's verb count as the question's word."""

from __future__ import annotations

import pytest

from steadfast.shared.inflections import every_form, irregular_verb_form, same_word, word_forms


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
        ("ring", "rang"),
        ("rung", "ring"),
        ("drink", "drank"),
        ("strike", "struck"),
    ],
)
def test_a_word_has_its_forms(word: str, form: str) -> None:
    assert form in word_forms(word)


def test_other_words_are_not_forms() -> None:
    # a participle that is an adjective too counts other things: "broken eggs" / "break"
    assert "broken" not in word_forms("break") and "frozen" not in every_form("froze")
    assert "viola" not in word_forms("violin")
    assert "born" not in word_forms("die")
    assert word_forms("of") == {"of"}  # short words are kept as they are


def test_two_forms_of_one_word_are_the_same_word_either_way_round() -> None:
    assert same_word("painted", "paint") and same_word("paint", "painted")
    assert same_word("bush", "bushes") and same_word("wrote", "write")
    assert not same_word("rose", "bush")
    assert not same_word("painting", "painter")


@pytest.mark.parametrize(
    ("word", "form"),
    [
        ("lives", "live"),
        ("lives", "living"),
        ("ended", "end"),
        ("ended", "ends"),
        ("carries", "carry"),
        ("writing", "write"),
        ("painting", "paint"),
    ],
)
def test_every_form_reaches_the_forms_of_the_word_a_form_comes_from(word: str, form: str) -> None:
    assert form in every_form(word)


def test_every_form_takes_short_words_and_double_s_as_they_are() -> None:
    assert every_form("news") == word_forms("news")  # four letters: no "new"
    assert "clas" not in every_form("class")


def test_forms_of_irregular_verbs_are_known() -> None:
    assert all(irregular_verb_form(word) for word in ("won", "got", "built", "born", "begin"))
    assert not any(irregular_verb_form(word) for word in ("signed", "declaration", "mohammed"))
