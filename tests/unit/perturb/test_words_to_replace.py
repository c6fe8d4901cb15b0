"""The words a rewording has to change, named to the generator
(``services/perturb/domain/words_to_replace.py``)."""

from __future__ import annotations

import pytest

from steadfast.services.perturb.domain.prompts import (
    METHOD_OVERLAP,
    PARAPHRASE_EXAMPLE_QUESTION,
    PARAPHRASE_EXAMPLE_REPLY,
    paraphrase_messages,
)
from steadfast.services.perturb.domain.words_to_replace import words_to_replace
from steadfast.shared.lexical import overlap, tokens


@pytest.mark.parametrize(
    ("question", "named"),
    [
        # question words and auxiliaries first, then small words, then the rest
        ("Who painted the Mona Lisa?", ["who", "the", "painted"]),
        ("What is the capital city of Australia?", ["what", "is", "the"]),
        # a small word inside a name is part of it
        ("Who wrote the play Romeo and Juliet?", ["who", "the", "wrote"]),
        ("When was the Statue of Liberty built?", ["when", "was", "the"]),
        # a name opening a sentence is kept; "Each" opening one is no name
        (
            "Dan plants 3 rose bushes. Each rose bush has 25 roses. How many roses are there?",
            ["has", "how", "many", "are", "there"],
        ),
        ("Chi ha dipinto la Gioconda?", ["chi", "ha", "la"]),
    ],
)
def test_the_words_named_leave_names_and_numbers(question: str, named: list[str]) -> None:
    assert words_to_replace(question, METHOD_OVERLAP) == named


def test_replacing_the_named_words_passes_the_lexical_filter() -> None:
    """One more word than the filter needs is named: a rewording that puts other words in their
    places and keeps every other word is below METHOD's 0.8."""
    for question in (
        "Who painted the Mona Lisa?",
        "What is the largest planet in the Solar System?",
        "At what temperature in degrees Celsius does water boil at sea level?",
        "Gretchen has 110 coins. There are 30 more gold coins than silver coins. How many gold "
        "coins does Gretchen have?",
    ):
        named = set(words_to_replace(question, METHOD_OVERLAP))
        replaced = " ".join("other" if word in named else word for word in tokens(question))
        assert named and overlap(question, replaced) < 0.8, question


def test_a_question_with_only_names_and_numbers_names_nothing() -> None:
    assert words_to_replace("Romeo and Juliet 1597?", METHOD_OVERLAP) == []
    assert words_to_replace("", METHOD_OVERLAP) == []


def test_a_long_question_names_at_most_six_words() -> None:
    words = [first + second for first in "bcdfg" for second in "aeiou"]  # 25 words, none repeated
    question = " ".join(words) + "?"
    assert len(words_to_replace(question, METHOD_OVERLAP)) == 6


def test_every_request_and_the_example_name_the_words_to_replace() -> None:
    messages = paraphrase_messages(
        "Who painted the Mona Lisa?", count=3, hint="compress slightly", tone=None, language=None
    )
    example, request = (m.content for m in messages if m.role == "user")
    assert 'keeping every name and number: "who", "the", "painted"\n' in request
    assert '"has", "how", "many", "does", "have"' in example


def test_the_example_reply_does_what_it_is_asked() -> None:
    """The example teaches by doing: its rewordings use none of the words it was told to
    replace and pass the lexical filter."""
    named = set(words_to_replace(PARAPHRASE_EXAMPLE_QUESTION, METHOD_OVERLAP))
    rewordings = [line.split(". ", 1)[1] for line in PARAPHRASE_EXAMPLE_REPLY.splitlines()]
    assert len(rewordings) == 3
    for rewording in rewordings:
        assert not named & set(tokens(rewording)), rewording
        assert overlap(PARAPHRASE_EXAMPLE_QUESTION, rewording) < 0.8, rewording


def test_a_stricter_filter_gets_more_words_named() -> None:
    """The words follow the request's overlap threshold, not METHOD's alone: at 0.6, "Who
    painted the Mona Lisa?" may keep only 2 of its 5 words, and the names are 2 of them."""
    question = "Who painted the Mona Lisa?"
    assert words_to_replace(question, METHOD_OVERLAP) == ["who", "the", "painted"]
    assert words_to_replace(question, 0.6) == ["who", "the", "painted"]  # all that may change
    long = "At what temperature in degrees Celsius does water boil at sea level?"
    assert len(words_to_replace(long, 0.5)) > len(words_to_replace(long, METHOD_OVERLAP))
