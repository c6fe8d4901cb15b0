"""Which sentence of a text asks (``services/verify/domain/asking.py``), read by the direction
and aggregate checks alike."""

from __future__ import annotations

import pytest

from steadfast.services.verify.domain.aggregates import asked_aggregates
from steadfast.services.verify.domain.asking import asking_sentence, questions_asked


@pytest.mark.parametrize(
    ("text", "asking"),
    [
        ("Gretchen has 110 coins. How many gold coins does she have?", "How many gold coins"),
        # a courtesy question after the question asks nothing of its own
        ("At what temperature does water boil? Could you tell me?", "At what temperature"),
        # a courtesy question alone is still the sentence that asks
        ("Water boils at sea level. Could you tell me?", "Could you tell me?"),
        # a request may come before the story
        ("Find the total number of fireworks Hannah will see. She watches 3 shows.", "Find the"),
        # no question and no request: the last sentence
        ("The bill is $100. They split it.", "They split it."),
        # "$2.50 each." ends no sentence before a lower-case word or a number
        ("Pens cost $2.50 each. how many can she buy with $10?", "Pens cost"),
        # an initial or a title ends no sentence: "Kuiper Prize in 2001?" asks nothing alone
        ("Who won the Gerard P. Kuiper Prize in 2001?", "Who won"),
        ("Dr. Smith has 3 cats. Mr. T. Jones has 2. How many do they have?", "How many"),
        # a question after a capital's full stop is a sentence of its own
        ("She moved to the U.S. When did she arrive there?", "When did"),
    ],
)
def test_the_sentence_that_asks(text: str, asking: str) -> None:
    assert asking_sentence(text).startswith(asking)


def test_a_request_before_the_story_is_read_for_what_it_asks() -> None:
    story = "Find the total weight of the books. Each math book weighs 2 pounds."
    assert asked_aggregates(story) == {"a total"}
    # the courtesy question after the question leaves the question's aggregate
    assert asked_aggregates("How much does each roommate pay? Could you tell me?") == {
        "each one's share"
    }


@pytest.mark.parametrize(
    ("text", "asked"),
    [
        # a condition written with a question mark asks nothing of its own (refused in a demo
        # run as two questions)
        (
            "How many gold coins does Gretchen have? If she has 110 coins and silver coins are 30 "
            "less than gold coins?",
            1,
        ),
        # a courtesy question neither
        ("What is the capital of Australia? Do you know?", 1),
        # a condition that asks after all, and a second question
        ("What is the sum? If she has 30 more gold coins, how many gold coins are there?", 2),
        ("Where is the college? What is its name?", 2),
    ],
)
def test_the_questions_a_text_asks(text: str, asked: int) -> None:
    assert len(questions_asked(text)) == asked
