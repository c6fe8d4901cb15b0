"""A change said the other way is refused by quantity invariance: "scores 10 points" as "drops
10 points", "increased by 80%" as "fell by 80%", "in 12 years" as "12 years ago", "5 years less
than twice his son's age" as "5 years more than twice his son's age" (bench/equivalence/
math_changes.jsonl, which the defaults accepted before this check)."""

from __future__ import annotations

import pytest

from steadfast.shared.quantities.changes import (
    compared_with_another,
    more_said_as_fewer,
    turned_change,
    turned_comparison,
    turned_multiple,
)
from steadfast.shared.quantities.invariance import quantity_difference

JOEY = (
    "Joey has 214 points before his turn in Scrabble. He scores 26 points. Then Marcy, who has "
    "225 points, scores 10 points. By how many points is Joey now winning?"
)
TOY = (
    "In November, a toy was $40. In December, the price increased by 80%. In January, the price "
    "decreased by 50%. What was the price of the toy after it was discounted in January?"
)


@pytest.mark.parametrize(
    ("original", "candidate", "turned"),
    [
        (
            JOEY,
            "Joey sits at 214 points before his Scrabble turn and adds 26 points. Then Marcy, "
            "starting from 225 points, drops 10 points. What is Joey's lead now?",
            "says 10 goes down, not up",
        ),
        (
            TOY,
            "A toy cost $40 in November. Its price fell by 80% in December and then went up by "
            "50% in January. What did the toy cost after the January change?",
            "says 80 goes down, not up",
        ),
        (
            "Mark was unwell for 3 months, during which he lost 10 pounds per month. If his "
            "final weight was 70 pounds, what was his initial weight?",
            "Mark was sick for 3 months and put on 10 pounds every month. If he ended up at 70 "
            "pounds, how much did he weigh at the start?",
            "says 10 goes up, not down",
        ),
        (
            "Charmaine will be 16 years old in 12 years. How old will she be 4 years from now?",
            "Charmaine was 16 years old 12 years ago. What age will she be 4 years from today?",
            "says 12 goes back in time, not ahead in time",
        ),
    ],
)
def test_a_change_said_the_other_way_is_refused(original: str, candidate: str, turned: str) -> None:
    assert turned_change(original, candidate) == turned
    difference = quantity_difference(original, candidate)
    assert difference is not None and turned in difference


@pytest.mark.parametrize(
    ("original", "candidate"),
    [
        # the same way in other words
        (
            JOEY,
            "Joey is on 214 points and gains 26; Marcy, on 225, then scores 10. How far ahead "
            "is Joey?",
        ),
        (
            TOY,
            "A $40 toy in November rose in price by 80% in December and dropped by 50% in "
            "January. What did it cost after the January discount?",
        ),
        ("He lost 10 pounds a month for 3 months.", "His weight dropped by 10 pounds each month."),
        ("In 10 years, Melanie will be 18.", "Melanie will be 18 years old 10 years from now."),
        # a direction left out is left to the other checks
        ("The price increased by 80%.", "The new price is 80% above the old one."),
        # both ways in the original: nothing to hold the candidate to
        ("It rose 5 degrees, then fell 5 degrees.", "It fell 5 degrees after rising 5 degrees."),
    ],
)
def test_a_change_kept_or_not_said_passes(original: str, candidate: str) -> None:
    assert turned_change(original, candidate) is None


@pytest.mark.parametrize(
    ("original", "candidate", "turned"),
    [
        (
            "Carver just turned 45 years old, which makes him 5 years less than twice the age "
            "of his son. How old is his son?",
            "Carver has just reached the age of 45, which is 5 years more than twice his son's "
            "age. How old is his son?",
            "says 5 more than age twice, not less",
        ),
        (
            "Richie scored 20 more goals than Mark. Richie scored 80 goals. How many did Mark "
            "score?",
            "Richie got 20 fewer goals than Mark did. If Richie had 80, how many had Mark?",
            "says 20 less than mark, not more",
        ),
        (
            "A gallon jar costs $2 more than a half-gallon jar. A gallon jar costs $5.",
            "A gallon jar costs $2 less than a half-gallon jar. A gallon jar costs $5.",
            "says 2 less than gallon half jar, not more",
        ),
    ],
)
def test_a_comparison_turned_against_the_same_thing_is_refused(
    original: str, candidate: str, turned: str
) -> None:
    assert turned_comparison(original, candidate) == turned


@pytest.mark.parametrize(
    ("original", "candidate"),
    [
        # turned round with its sides: the same comparison
        (
            "Max has 12 more cookies than the Cookie Monster.",
            "The Cookie Monster has 12 fewer cookies than Max.",
        ),
        ("Katarina has 5 less cookies than Max.", "Max has 5 more cookies than Katarina."),
        # sides that share words, turned round (a held-out faithful rewording refused before)
        (
            "Cecelia found out that a gallon jar costs $2 more than a half-gallon jar.",
            "At the milk store, Cecelia found out that a half-gallon jar costs $2 less than a "
            "gallon jar.",
        ),
        # the same way
        (
            "Richie scored 20 more goals than Mark.",
            "Mark was outscored by Richie, who had 20 more goals than Mark.",
        ),
    ],
)
def test_a_comparison_kept_or_turned_with_its_sides_passes(original: str, candidate: str) -> None:
    assert turned_comparison(original, candidate) is None


CARMEN = (
    "Carmen has $100, Samantha has $25 more than Carmen, and Daisy has $50 more than Samantha. "
    "How much do all three girls have combined?"
)


@pytest.mark.parametrize(
    ("original", "candidate", "why"),
    [
        (
            CARMEN,
            "Carmen holds $100. Samantha has $25 more than Carmen does, and Daisy has $50 more "
            "than Carmen. What is the total amount the three girls have together?",
            "compares 50 with carmen, not samantha",
        ),
        (
            "Seth is twice as old as Brooke. In 2 years, the sum of their ages will be 28. How "
            "old is Seth?",
            "Brooke is twice as old as Seth. In 2 years, their ages will add up to 28. What is "
            "Seth's age?",
            "compares twice as old with seth, not brooke",
        ),
        (
            "Kim picked 12 apples and Andrea picked 9. Jamal picked 3 times as many apples as "
            "Andrea. How many apples did Jamal pick?",
            "Kim picked 12 apples, Andrea 9, and Jamal 3 times as many apples as Kim. How many "
            "apples did Jamal pick?",
            "compares 3 times as many apples with kim, not andrea",
        ),
        (
            "Andrea has 8 more apples than Jamal. Jamal has 4 more bananas than apples. How many "
            "fruits are there if Andrea has 52 apples?",
            "Andrea owns 8 more apples than Jamal does. Andrea also has 4 more bananas than "
            "apples. If Andrea has 52 apples, how many pieces of fruit are there?",
            "says 4 more of andrea, not jamal",
        ),
    ],
)
def test_a_comparison_with_another_person_is_refused(
    original: str, candidate: str, why: str
) -> None:
    assert compared_with_another(original, candidate) == why
    difference = quantity_difference(original, candidate)
    assert difference is not None and why in difference


@pytest.mark.parametrize(
    ("original", "candidate"),
    [
        # the same person, other words or a possessive
        (CARMEN, "Samantha has $25 more than Carmen's $100, and Daisy $50 more than Samantha."),
        # turned round with its sides
        ("Samantha has $25 more than Carmen.", "Carmen has $25 less than Samantha."),
        ("Seth is twice as old as Brooke.", "Brooke is half as old as Seth."),
        # a pronoun or a thing, not a name, on one side
        (
            "Gordy's truck can haul 800 pounds more than Gissela's truck.",
            "Gordy's truck takes 800 pounds more than hers.",
        ),
        (
            "The cooking class lasts 3 times as long as the yoga class.",
            "The cooking class lasts 3 times as long as Monday's yoga.",
        ),
        # a counted noun is no name, though "Cookie Monster" writes it capitalised
        (
            "Katarina has 5 less cookies than Max has. Max has 12 more cookies than the Cookie "
            "Monster. How many cookies does Max have if Katarina has 68?",
            "Max has 5 more cookies than Katarina, and the Cookie Monster has 12 fewer cookies "
            "than Max. If Katarina has 68 cookies, how many does Max have?",
        ),
        # an amount or a multiple compared twice: which comparison is which is unsure
        (
            "Tom has twice as many apples as Mary. Mary has twice as many apples as Sue. Sue has "
            "4 apples.",
            "Sue has 4 apples. Mary has twice as many apples as Sue, and Tom has twice as many "
            "apples as Mary.",
        ),
        (
            "Tom has 5 more marbles than Ann, and Ann has 5 more marbles than Bob.",
            "Ann has 5 more marbles than Bob, and Tom has 5 more marbles than Ann does.",
        ),
        # several compared with, in another order; a family; a title
        (
            "Tom has 5 more marbles than Ann and Bob combined.",
            "Tom has 5 more marbles than Bob and Ann together.",
        ),
        (
            "The Joneses have 5 more cats than the Smiths.",
            "The Joneses own 5 more cats than the Smith family.",
        ),
        (
            "Mrs. Smith has 12 more pencils than Mr. Jones.",
            "Mrs. Smith has 12 more pencils than Jones.",
        ),
        # another comparison said of the multiple
        ("Seth is twice as old as Brooke.", "Seth's age is twice as great as Brooke's."),
    ],
)
def test_a_comparison_with_the_same_person_or_no_name_passes(original: str, candidate: str) -> None:
    assert compared_with_another(original, candidate) is None


CARS = (
    "Hunter counted 50 cars in the parking lot in the morning. During the first break, he "
    "counted 20 more cars in the parking lot. How many cars did he count?"
)
SCRUB = (
    "Tanya fills a 10-ounce jar with salt, oil and zest. She uses twice as much oil as salt and "
    "twice as much salt as zest. How many ounces of oil does she use?"
)


@pytest.mark.parametrize(
    ("original", "candidate", "why"),
    [
        # labelled changes of math_pairs_heldout3.jsonl (hm3-046, hm3-034) the judge let through
        (
            CARS,
            "Hunter counted 50 cars in the parking lot in the morning. During the first break, "
            "he counted 20 fewer cars in the parking lot. How many cars did he count?",
            "says 20 fewer where the original says 20 more",
        ),
        (
            SCRUB,
            "Tanya fills a 10-ounce jar with salt, oil and zest. She uses twice as much salt as "
            "oil and twice as much salt as zest. How many ounces of oil does she use?",
            "says twice as much salt as oil, not oil as salt",
        ),
    ],
)
def test_more_said_as_fewer_or_a_multiple_turned_is_refused(
    original: str, candidate: str, why: str
) -> None:
    assert why in (quantity_difference(original, candidate) or "")
    assert (more_said_as_fewer(original, candidate) or turned_multiple(original, candidate)) == why


@pytest.mark.parametrize(
    ("original", "candidate"),
    [
        (
            CARS,
            "In the morning Hunter counted 50 cars in the parking lot, and during the first "
            "break 20 additional cars. How many cars did he count?",
        ),
        # "than" makes it a comparison, turned_comparison's to read
        ("Ann has 20 more cars than Bob.", "Bob has 20 fewer cars than Ann."),
        (
            SCRUB,
            "Tanya fills a 10-ounce jar with salt, oil and zest. The salt is twice as much as "
            "the zest, and she uses twice as much oil as salt. How many ounces of oil?",
        ),
    ],
)
def test_more_kept_or_a_multiple_kept_passes(original: str, candidate: str) -> None:
    assert more_said_as_fewer(original, candidate) is None
    assert turned_multiple(original, candidate) is None
