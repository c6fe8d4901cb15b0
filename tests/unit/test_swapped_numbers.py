"""Numbers swapped between the things they count are refused by quantity invariance: "5 tomato
plants and 8 plants of eggplant" said as "8 tomato plants and 5 eggplant plants" keeps every
number and word (bench/equivalence/math_changes.jsonl, which the defaults accepted before this
check)."""

from __future__ import annotations

import pytest

from steadfast.shared.quantities.bindings import swapped_numbers
from steadfast.shared.quantities.invariance import quantity_difference

RICARDO = (
    "Ricardo grows tomatoes and eggplants in his garden. Each tomato plant yields 22 tomatoes "
    "while each plant of eggplant yields 4 eggplants. He planted 5 tomato plants and 8 plants of "
    "eggplant. How many fruits can Ricardo get from his plants?"
)
DANA = (
    "Dana can run at a rate of speed four times faster than she can walk, but she can skip at a "
    "rate of speed that is half as fast as she can run. If she can skip at 3 miles per hour, how "
    "many miles can she travel in six hours if she spends one-third of the time running and "
    "two-thirds of the time walking?"
)
AMOR = (
    "The price of Parmesan cheese is $11 per pound. Mozzarella cheese is $6 per pound. Amor buys "
    "2 pounds of Parmesan and 3 pounds of mozzarella cheese. If she starts with $50 cash, how "
    "much money will she have left?"
)


@pytest.mark.parametrize(
    ("original", "candidate", "swapped"),
    [
        (
            RICARDO,
            "Ricardo has tomatoes and eggplants growing in his garden. A tomato plant produces 22 "
            "tomatoes and an eggplant plant produces 4 eggplants. He put in 8 tomato plants and 5 "
            "eggplant plants. How many fruits will Ricardo harvest from all his plants?",
            "swaps what 5 and 8 count",
        ),
        (
            AMOR,
            "Parmesan sells for $11 per pound and mozzarella for $6 per pound. Amor buys 3 pounds "
            "of Parmesan and 2 pounds of mozzarella cheese. If she has $50 to start with, how much "
            "will she have left?",
            "swaps what 2 and 3 count",
        ),
        (
            "Scarlett bought 2 bags of rocks for $2.50 each and 3 pieces of coral at $2.00 apiece. "
            "How much did she spend?",
            "Scarlett picked up 3 bags of rocks costing $2.50 apiece and 2 coral pieces costing "
            "$2.00 each. What did she spend?",
            "swaps what 2 and 3 count",
        ),
        # a bench run's accepted paraphrase (judge 0.51): fractions count things too, and a
        # word the candidate writes after two of its numbers ("running") still tells them apart
        (
            DANA,
            "Dana can run four times as fast as she walks, and skip at half her running speed. "
            "If she skips at 3 miles per hour, how far can she travel in six hours spending "
            "one-third of the time walking and two-thirds of the time running?",
            "swaps what 1/3 and 2/3 count",
        ),
        (
            "In a school, 20% of the boys and 30% of the girls play chess. If there are 100 "
            "pupils of each, how many play chess?",
            "A school has 100 boys and as many girls; 30% of the boys and 20% of the girls play "
            "chess. How many pupils play chess?",
            "swaps what 20 and 30 count",
        ),
        # a percentage of one of the swapped groups does not hide the swap
        (
            "A farmer has 12 cows and 20 sheep. He sells 25% of the sheep. How many animals are "
            "left?",
            "A farmer owns 20 cows and 12 sheep. If he sells 25% of the sheep, how many animals "
            "does he have left?",
            "swaps what 12 and 20 count",
        ),
    ],
)
def test_two_numbers_that_trade_what_they_count_are_refused(
    original: str, candidate: str, swapped: str
) -> None:
    found = swapped_numbers(original, candidate)
    assert found is not None and found.startswith(swapped)
    difference = quantity_difference(original, candidate)
    assert difference is not None and swapped in difference


@pytest.mark.parametrize(
    ("original", "candidate"),
    [
        # the same counts reworded
        (
            RICARDO,
            "In his garden Ricardo planted 5 tomato plants, each giving 22 tomatoes, and 8 "
            "eggplant plants, each giving 4 eggplants. How many fruits does he get?",
        ),
        (
            AMOR,
            "Amor, with $50, buys 3 pounds of mozzarella ($6 per pound) and 2 pounds of "
            "Parmesan ($11 per pound). How much money is left?",
        ),
        # one number said of another thing is no swap ("3 of them" / "3 apples")
        (
            "He bought 5 apples and 3 of them were red. How many were not red?",
            "Of the 5 apples he bought, 3 apples were red. How many were not?",
        ),
        # fractions and percentages kept with what they count, in another order
        (
            DANA,
            "Running is four times faster than walking for Dana, and her skipping speed is half "
            "her running speed. Skipping at 3 miles per hour, how many miles does she cover in "
            "six hours if two-thirds of the time she walks and one-third of the time she runs?",
        ),
        (
            DANA,
            "Dana runs four times as fast as she walks and skips half as fast as she runs. At a "
            "skipping speed of 3 miles per hour, how many miles can she go in six hours, running "
            "one-third of the time and walking two-thirds of it?",
        ),
        (
            "In a class, 20% of the boys and 30% of the girls play chess. There are 40 boys and "
            "50 girls. How many pupils play chess?",
            "Of the 50 girls in a class, 30% play chess, and so do 20% of its 40 boys. How many "
            "pupils play chess?",
        ),
        # a word both numbers count tells them apart from none
        (
            "Martha invited 2 families with 6 people and 3 families with 4 people.",
            "Martha invited 3 families with 4 people and 2 families with 6 people.",
        ),
    ],
)
def test_counts_kept_or_moved_alone_pass(original: str, candidate: str) -> None:
    assert swapped_numbers(original, candidate) is None
