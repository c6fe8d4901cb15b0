"""A number said in another unit is refused by quantity invariance: "600 inches" said as "600
feet" keeps every number (bench/equivalence/math_changes.jsonl, which the defaults accepted
before this check)."""

from __future__ import annotations

import pytest

from steadfast.shared.quantities.invariance import quantity_difference
from steadfast.shared.quantities.said_units import changed_unit

BAMBOO = (
    "Mrs. Jameson's bamboo in the backyard grows up to 30 inches a day. Today, its height is 20 "
    "feet. In how many days will its height be 600 inches?"
)


@pytest.mark.parametrize(
    ("original", "candidate", "said"),
    [
        (
            BAMBOO,
            "Mrs. Jameson has bamboo that can grow as much as 30 inches per day. It stands 20 feet "
            "tall today. How many days will it take to reach a height of 600 feet?",
            '"600 inches" said as "600 feet"',
        ),
        (
            "Tracy cut a wire 4 feet long into pieces 6 inches long. How many pieces?",
            "Tracy snipped a 4-yard wire into 6 inch sections. How many sections?",
            '"4 feet" said as "4 yards"',
        ),
        (
            "The container weighs 20 pounds. What do the animals and it weigh?",
            "With a container of 20 ounces, what is the total weight?",
            '"20 pounds" said as "20 ounces"',
        ),
        (
            "Il sacco pesa 5 chilogrammi. Quanto pesano 3 sacchi?",
            "Se un sacco pesa 5 grammi, quanto pesano 3 sacchi?",
            '"5 kilograms" said as "5 grams"',
        ),
        # an amount read with its unit keeps its size
        (
            "Tim works 2 hours a day. How long in 5 days?",
            "Tim works 2 minutes daily. 5 days?",
            '"2 hours" said as "2 minutes"',
        ),
        (
            "A can of pop costs $5. How much for 3?",
            "If one can costs 5 cents, what do 3 cost?",
            '"$5" said as "5 cents"',
        ),
    ],
)
def test_a_number_said_in_another_unit_is_refused(original: str, candidate: str, said: str) -> None:
    assert changed_unit(original, candidate) == said
    difference = quantity_difference(original, candidate)
    assert difference is not None and "says a number in another unit" in difference


@pytest.mark.parametrize(
    ("original", "candidate"),
    [
        # the same unit written another way
        ("Benny saw a 10-foot shark.", "Benny saw a shark that was 10 feet long."),
        ("The rope is 12 ft long.", "The rope measures 12 feet."),
        ("It weighs 3 lbs.", "Its weight is 3 pounds."),
        # the unit left out or put first, and a unit the original writes after that number too
        ("The bamboo is 20 feet tall.", "The bamboo stands at a height of 20."),
        ("He ran 5 miles and 5 km.", "He ran 5 km and then 5 miles."),
        # an amount in another unit of the same size
        ("Tim works 2 hours.", "Tim works 120 minutes."),
        ("A quarter is worth 25 cents.", "A quarter is worth $0.25."),
        # an area the table does not name, said as an area
        ("A small shirt is 3 square feet.", "A small t-shirt gives 3 square feet of fabric."),
    ],
)
def test_a_unit_kept_or_not_said_passes(original: str, candidate: str) -> None:
    assert changed_unit(original, candidate) is None
