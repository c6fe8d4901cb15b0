from __future__ import annotations

import pytest

from steadfast.shared.lexical import max_overlap, overlap, tokens


def test_tokens_are_lower_cased_words_with_inner_apostrophes() -> None:
    assert tokens("Don't STOP: it's 3 o'clock!") == ["don't", "stop", "it's", "3", "o'clock"]


def test_tokens_are_unicode_aware() -> None:
    assert tokens("Qual è la capitale dell’Italia?") == [
        "qual",
        "è",
        "la",
        "capitale",
        "dell'italia",
    ]
    assert tokens("Сколько лет Москве?") == ["сколько", "лет", "москве"]
    assert tokens("Wie heißt die Straße?") == ["wie", "heißt", "die", "straße"]
    # vowel signs and viramas are combining marks, not word breaks
    assert tokens("हिन्दी किसकी भाषा है?") == ["हिन्दी", "किसकी", "भाषा", "है"]


def test_apostrophes_belong_to_tokens_wherever_they_stand() -> None:
    # METHOD's [A-Za-z0-9']+: a plural possessive is not its plural, an underscore breaks words
    assert tokens("the students' books") == ["the", "students'", "books"]
    assert tokens("'quoted' a''b under_score") == ["'quoted'", "a''b", "under", "score"]
    assert overlap("the students' books", "the students books") == pytest.approx(2 / 3)
    # typographic and fullwidth apostrophes are apostrophes; an opening quote is not
    assert tokens("it’s it＇s ‘quoted’") == ["it's", "it's", "quoted'"]


def test_overlap_of_identical_texts_is_one() -> None:
    assert overlap("What is the capital of France?", "what is the CAPITAL of france") == 1.0


def test_overlap_counts_the_multiset_intersection_over_the_shorter_text() -> None:
    # shared: "is", "capital" → 2 of the shorter text's 5 tokens
    assert overlap("What is the capital of France?", "Which city is France's capital?") == 0.4
    # multisets: {the:2, cat:1} ∩ {the:1, cat:2} = 2 tokens of 3
    assert overlap("the the cat", "the cat cat") == pytest.approx(2 / 3)
    # a short text fully contained in a long one
    assert overlap("capital of France", "What is the capital of France today?") == 1.0


def test_overlap_is_zero_when_either_text_has_no_tokens() -> None:
    assert overlap("", "anything at all") == 0.0
    assert overlap("?!", "anything at all") == 0.0
    assert overlap("", "") == 0.0


def test_overlap_in_italian() -> None:
    original = "Quanti anni aveva Garibaldi quando è morto?"
    reworded = "A che età è morto Garibaldi?"
    # shared: "garibaldi", "è", "morto" → 3 of the shorter text's 6 tokens
    assert overlap(original, reworded) == 0.5


def test_max_overlap_takes_the_closest_reference() -> None:
    assert max_overlap("a b c d e", ["x y z", "a b c d x", "a b x y z"]) == 0.8
    assert max_overlap("a b", []) == 0.0
