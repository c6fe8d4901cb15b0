"""A rewording that turns a comparison round is refused by quantity invariance (the numbers
stage): the demo accepted "Silver coins are 30 more than gold coins" for "There are 30 more gold
coins than silver coins", and the model's right answer to it was counted as a conflict."""

from __future__ import annotations

import pytest

from steadfast.shared.quantities.comparisons import reversed_comparison
from steadfast.shared.quantities.invariance import quantity_difference

GRETCHEN = (
    "Gretchen has 110 coins. There are 30 more gold coins than silver coins. How many gold "
    "coins does Gretchen have?"
)
MARCIA = "Marcia has two more pets than Cindy. If Cindy has four pets, how many does Marcia have?"


@pytest.mark.parametrize(
    ("original", "candidate"),
    [
        (
            GRETCHEN,
            "Silver coins are 30 more than gold coins. Gretchen has 110 coins in total, how many "
            "of them are gold?",
        ),
        (GRETCHEN, "There are 30 more silver coins than gold coins. Gretchen has 110 coins."),
        (MARCIA, "Cindy has two more pets than Marcia. If Cindy has four pets, how many does "
                 "Marcia have?"),
        ("John is 5 years older than Mary.", "Mary is 5 years older than John."),
    ],
)  # fmt: skip
def test_a_comparison_turned_round_is_refused(original: str, candidate: str) -> None:
    assert reversed_comparison(original, candidate) is not None
    difference = quantity_difference(original, candidate)
    assert difference is not None and "reverses a comparison" in difference


@pytest.mark.parametrize(
    ("original", "candidate"),
    [
        (
            GRETCHEN,
            "Gretchen has 110 coins, and there are 30 more gold coins than silver coins. What's "
            "the number of gold coins she has?",
        ),
        # the same relation the other way about: fewer of the smaller
        (GRETCHEN, "There are 30 fewer silver coins than gold coins. Gretchen has 110 coins."),
        (MARCIA, "Cindy has two fewer pets than Marcia. If Cindy has four pets, how many does "
                 "Marcia have?"),
        (MARCIA, "If Cindy has four pets and Marcia two more than her, how many has Marcia?"),
        ("John is 5 years older than Mary.", "Mary is 5 years younger than John."),
        # no comparison of an amount: nothing to turn round
        ("Who is older, John or Mary?", "Is Mary older than John?"),
    ],
)  # fmt: skip
def test_a_comparison_kept_or_said_the_other_way_about_passes(
    original: str, candidate: str
) -> None:
    assert reversed_comparison(original, candidate) is None
