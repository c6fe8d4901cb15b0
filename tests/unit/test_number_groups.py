"""A rewording that moves a number to another group is refused by quantity invariance (the
numbers stage): a demo accepted "... add 30 to the 110 silver coins" for "Gretchen has 110
coins. There are 30 more gold coins than silver coins.", and the model's right answer to it (140)
was counted as a conflict."""

from __future__ import annotations

import pytest

from steadfast.shared.quantities.groups import regrouped_number
from steadfast.shared.quantities.invariance import quantity_difference

GRETCHEN = (
    "Gretchen has 110 coins. There are 30 more gold coins than silver coins. How many gold "
    "coins does Gretchen have?"
)
ORCHARD = "An orchard has 40 apple trees and 25 pear trees. How many trees are there?"


@pytest.mark.parametrize(
    ("original", "candidate", "now", "was"),
    [
        (
            GRETCHEN,
            "In Gretchen's collection, what is the total number of gold coins when we add 30 to "
            "the 110 silver coins?",
            "110 silver coins",
            "110 coins",
        ),
        (
            GRETCHEN,
            "Gretchen has 110 coins, with 30 more silver coins than gold coins in total. How many "
            "gold coins?",
            "30 silver coins",
            "30 gold coins",
        ),
        (
            ORCHARD,
            "How many trees does an orchard with 40 pear trees and 25 apple trees have?",
            "40 pear trees",
            "40 apple trees",
        ),
        # accepted in an experiment on the demo's sets: the 110 stated as the gold coins' total
        (
            GRETCHEN,
            "Gretchen's gold coins total 110 coins plus 30 more than the silver coins. How many "
            "gold coins does she have?",
            "110 gold coins",
            "110 coins",
        ),
        (
            GRETCHEN,
            "Gretchen's silver coins add up to 110, and there are 30 more gold coins than silver "
            "coins. How many gold coins?",
            "110 silver coins",
            "110 coins",
        ),
        # accepted in a demo run (judge 0.73): the 110 said to be the gold coins' number
        (
            GRETCHEN,
            "Gretchen's total number of gold coins, which consists of 30 more than her silver "
            "coins, equals 110. What is the total count of gold coins in her collection?",
            "110 gold coins",
            "110 coins",
        ),
        (
            GRETCHEN,
            "If the number of silver coins is equal to 110 and gold coins are 30 more than silver "
            "coins, how many gold coins does Gretchen have?",
            "110 silver coins",
            "110 coins",
        ),
        (
            ORCHARD,
            "The pear trees are 40 and the apple trees are 25. How many trees are in the orchard?",
            "40 pear trees",
            "40 apple trees",
        ),
    ],
)
def test_a_number_moved_to_another_group_is_refused(
    original: str, candidate: str, now: str, was: str
) -> None:
    why = regrouped_number(original, candidate)
    assert why == f'moves a number to another group: "{now}" where the original has "{was}"'
    assert why in (quantity_difference(original, candidate) or "")


@pytest.mark.parametrize(
    ("original", "candidate"),
    [
        # the same groups, in other words or another order
        (
            GRETCHEN,
            "Gretchen has 110 coins; gold coins outnumber silver coins by 30. How many gold "
            "coins does she have?",
        ),
        (
            GRETCHEN,
            "Of Gretchen's 110 coins, 30 more are gold coins than silver coins: how many gold?",
        ),
        # the side compared with, after "than", is not the number's group
        (
            GRETCHEN,
            "Gretchen owns 110 coins; gold coins are 30 more than silver coins. How many gold "
            "coins does she own?",
        ),
        # all the groups named are the whole
        (GRETCHEN, "Gretchen has 110 gold and silver coins, 30 more gold coins than silver ones."),
        (
            GRETCHEN,
            "Gretchen's gold and silver coins total 110, with 30 more gold coins than silver "
            "coins. How many gold coins?",
        ),
        (
            GRETCHEN,
            "Gretchen's coins number 110, 30 more gold coins than silver ones: how many gold?",
        ),
        (
            GRETCHEN,
            "Her silver coins plus her gold coins total 110, with 30 more gold coins than "
            "silver coins. How many gold coins?",
        ),
        (ORCHARD, "How many trees grow in an orchard with 25 pear trees and 40 apple trees?"),
        # a group's number said with "is", "equals": the same group, or all of them
        (
            GRETCHEN,
            "The number of gold and silver coins Gretchen has is 110, and the gold coins are 30 "
            "more than the silver coins. How many are gold?",
        ),
        (
            GRETCHEN,
            "Gretchen's coins, gold and silver, are 110 in all; the gold coins are 30 greater "
            "than the silver coins. How many gold coins?",
        ),
        (
            GRETCHEN,
            "Gretchen has 110 coins, and her gold coins, which outnumber the silver ones, are 30 "
            "more than the silver coins. How many gold coins?",
        ),
        (
            ORCHARD,
            "In an orchard the apple trees are 40 and the pear trees are 25: how many trees?",
        ),
        (
            GRETCHEN,
            "Gretchen's silver coins plus her gold coins are 110, and there are 30 more gold "
            "coins than silver coins. How many gold coins?",
        ),
        (
            GRETCHEN,
            "The gold and silver coins Gretchen owns are 110; 30 more gold coins than silver "
            "coins. How many gold coins?",
        ),
        # a group's name dropped is left to the other checks
        (ORCHARD, "An orchard has 40 apple trees and 25 other trees: how many trees in all?"),
        # a noun the original does not divide into groups
        (
            "Tom has 3 apples and buys 5 more. How many apples does he have now?",
            "After buying 5 more red apples, how many does Tom have if he had 3?",
        ),
    ],
)
def test_a_number_kept_in_its_group_passes(original: str, candidate: str) -> None:
    assert regrouped_number(original, candidate) is None
