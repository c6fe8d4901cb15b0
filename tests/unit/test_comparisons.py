"""A rewording that turns a comparison round is refused by quantity invariance (the numbers
stage): the demo accepted "Silver coins are 30 more than gold coins" for "There are 30 more gold
coins than silver coins", and the model's right answer to it was counted as a conflict."""

from __future__ import annotations

import pytest

from steadfast.shared.quantities.comparisons import (
    difference_as_amount,
    difference_as_ratio,
    difference_from_a_total,
    difference_said_as_addition,
    difference_without_direction,
    difference_without_its_base,
    dropped_comparison_side,
    reversed_comparison,
)
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


@pytest.mark.parametrize(
    "candidate",
    [
        "Calculate the number of gold coins Gretchen has, knowing that she has 110 coins and that "
        "the ratio of gold to silver is 30 to 1.",
        "Determine how many gold coins Gretchen owns: her coins total 110 and gold to silver is "
        "30:1.",
    ],
)
def test_a_difference_stated_as_a_ratio_is_refused(candidate: str) -> None:
    """Both were accepted in a demo run; the model answered them 30 and 35, a flip it never
    made."""
    why = difference_as_ratio(GRETCHEN, candidate)
    assert why == "states a difference as a ratio: coin gold is 30 more than silver"
    assert why in (quantity_difference(GRETCHEN, candidate) or "")


@pytest.mark.parametrize(
    ("original", "candidate"),
    [
        # the difference kept, in other words
        (
            GRETCHEN,
            "Gretchen has 110 coins; gold coins outnumber silver coins by 30. How many gold?",
        ),
        (
            GRETCHEN,
            "Of 110 coins, Gretchen has 30 more gold coins than silver ones: how many gold?",
        ),
        # a ratio in the original too
        (
            "The ratio of boys to girls is 3:2 and there are 5 more boys than girls. How many?",
            "With boys to girls at 3:2, how many boys are there if boys outnumber girls by 5?",
        ),
        # no difference in the original
        ("Tom has 3 apples and buys 5 more.", "Tom's apples went from 3 to 8 after buying 5."),
    ],
)
def test_a_difference_kept_or_a_ratio_in_the_original_passes(original: str, candidate: str) -> None:
    assert difference_as_ratio(original, candidate) is None


@pytest.mark.parametrize(
    "candidate",
    [
        # accepted in a demo run; the model answered it 30, counted as a flip
        "Given Gretchen's total of 110 coins, which includes 30 gold coins, how many gold coins "
        "does she have?",
        "Gretchen has 110 coins, 30 of them gold. How many gold coins does she have?",
    ],
)
def test_a_difference_stated_as_an_amount_is_refused(candidate: str) -> None:
    why = "states a difference as an amount: coin gold is 30 more than silver"
    assert difference_as_amount(GRETCHEN, candidate) == why
    assert why in (quantity_difference(GRETCHEN, candidate) or "")


@pytest.mark.parametrize(
    "candidate",
    [
        "How many gold coins does Gretchen have if she has 110 coins and 30 more gold than silver?",
        "Gretchen's 110 coins: the difference between gold and silver is 30. How many are gold?",
        "Gretchen owns 110 coins; gold ones outnumber silver ones by 30. How many are gold?",
        "Gretchen has 110 coins and gold exceeds silver by 30. How many gold coins?",
        # no amount stated: left to the numbers check
        "How many gold coins does Gretchen have?",
    ],
)
def test_a_difference_kept_in_other_words_passes(candidate: str) -> None:
    assert difference_as_amount(GRETCHEN, candidate) is None


def test_an_original_without_a_difference_is_never_refused_for_one() -> None:
    original = "Gretchen has 110 coins, 30 of them gold. How many are silver?"
    assert (
        difference_as_amount(original, "Of Gretchen's 110 coins 30 are gold: how many silver?")
        is None
    )


@pytest.mark.parametrize(
    "candidate",
    [
        # accepted in an experiment (judge and embedding passed it): the 30 are no longer
        # counted from the silver coins
        "Gretchen has 110 coins and 30 more of them are gold. How many gold coins does she have?",
        "Gretchen has 110 coins, and there are 30 more gold coins. How many gold coins does she "
        "have?",
    ],
)
def test_a_comparison_that_loses_a_side_is_refused(candidate: str) -> None:
    dropped = dropped_comparison_side(GRETCHEN, candidate)
    assert dropped is not None and dropped.startswith("drops a side of a comparison")
    assert quantity_difference(GRETCHEN, candidate) == dropped


@pytest.mark.parametrize(
    ("original", "candidate"),
    [
        (GRETCHEN, "Gretchen has 110 coins, 30 more gold than silver. What is the number of gold?"),
        (
            GRETCHEN,
            "Gretchen has 110 coins and a 30-gold coin excess over silver coins. How many gold "
            "coins does she have?",
        ),
        (  # a side named in the possessive
            "Carmen has $100, Samantha has $25 more than Carmen. How much does Samantha have?",
            "Carmen possesses $100, and Samantha's money exceeds Carmen's by $25. How much does "
            "Samantha have?",
        ),
        (  # a side named in the possessive in the original
            "Samantha's savings are $25 more than Carmen's. Carmen has $100. How much does "
            "Samantha have?",
            "Carmen has $100, and Samantha's savings exceed Carmen's by $25. How much does "
            "Samantha have?",
        ),
        (  # "twice" said as "double" is no side of its own
            "Frankie's score was 15 more than twice as high as Binkie's. Binkie scored 90. What "
            "was Frankie's score?",
            "Frankie scored 15 points more than double Binkie's score of 90. What was Frankie's "
            "score?",
        ),
    ],
)
def test_a_comparison_with_both_sides_named_passes(original: str, candidate: str) -> None:
    assert dropped_comparison_side(original, candidate) is None


@pytest.mark.parametrize(
    ("original", "candidate", "reason"),
    [
        # the last demo run's only conflict: 110 is now the larger side, so gold is 30, not 70
        (
            GRETCHEN,
            "Gretchen has 110 coins, which is 30 more than the number of silver coins. How many "
            "gold coins does she have?",
            "counts a difference from 110: coin gold is 30 more than silver",
        ),
        (
            GRETCHEN,
            "She has 110 coins, which is 30 more than her silver coins. How many gold coins?",
            "counts a difference from 110: coin gold is 30 more than silver",
        ),
        # the number is a side's own: Ann's 3 apples are 5 fewer than Tom's
        (
            "Tom has 5 more apples than Ann. Ann has 3 apples. How many does Tom have?",
            "Ann has 3 apples, which is 5 fewer than Tom. How many apples does Tom have?",
            None,
        ),
        (
            GRETCHEN,
            "Gretchen has 110 coins and there are 30 more gold coins than silver coins; what is "
            "the number of gold coins she has?",
            None,
        ),
    ],
)
def test_a_difference_counted_from_another_number_asks_another_problem(
    original: str, candidate: str, reason: str | None
) -> None:
    assert difference_from_a_total(original, candidate) == reason


ANDREA = (
    "Andrea has 8 more apples than Jamal. She buys 8 more apples. How many apples does Andrea "
    "have if Jamal has 5?"
)


@pytest.mark.parametrize(
    "candidate",
    [
        # accepted in a demo run (judge 0.57) and answered "G+30": counted as a flip
        "Gretchen's coin collection includes 110 coins. If 30 more gold coins are silver, how "
        "many gold coins does Gretchen have?",
        "Gretchen has 110 coins: silver coins, and 30 more gold coins. How many gold coins?",
    ],
)
def test_a_difference_said_without_what_it_is_more_than_is_refused(candidate: str) -> None:
    why = difference_without_its_base(GRETCHEN, candidate)
    assert (
        why is not None
        and why.startswith("says '30 more")
        and why in (quantity_difference(GRETCHEN, candidate) or "")
    )


@pytest.mark.parametrize(
    ("original", "candidate"),
    [
        (
            GRETCHEN,
            "Gretchen possesses 110 coins. She also owns 30 more gold coins compared to silver "
            "ones. What is the total count of gold coins she holds?",
        ),
        (GRETCHEN, "Gretchen owns 110 coins; gold coins are 30 more than silver coins. How many?"),
        (
            GRETCHEN,
            "Gretchen owns 110 coins; how many of these are gold, if she has 30 more gold coins "
            "than silver coins?",
        ),
        # the original says "8 more" without a base too
        (
            ANDREA,
            "If Jamal has 5 apples and Andrea has 8 more apples than him, how many does Andrea "
            "have after buying 8 more apples?",
        ),
    ],
)
def test_a_difference_said_with_what_it_is_compared_with_passes(
    original: str, candidate: str
) -> None:
    assert difference_without_its_base(original, candidate) is None


@pytest.mark.parametrize(
    ("candidate", "refused"),
    [
        # accepted in a demo run; the model read it as 30 more silver coins than gold ones
        (
            "Gretchen has 110 coins and 30 more than the number of silver coins. How many gold "
            "coins does she have?",
            True,
        ),
        (
            "Gretchen has 110 coins, with 30 more gold coins than silver coins. What is the "
            "count of gold coins she has?",
            False,
        ),
        (
            "Gretchen has 110 coins and 30 more gold than silver. How many gold coins does she "
            "own in total?",
            False,
        ),
        (
            "Gretchen has 110 coins. The gold ones outnumber the silver ones by 30. How many "
            "gold coins are there?",
            False,
        ),
    ],
)
def test_a_side_left_out_of_the_comparisons_sentence(candidate: str, refused: bool) -> None:
    why = dropped_comparison_side(GRETCHEN, candidate)
    assert (
        why == "states 30 in a sentence that leaves out a side of the comparison (gold)"
    ) is refused
    assert (why is None) is not refused


@pytest.mark.parametrize(
    ("candidate", "refused"),
    [
        # both accepted in a demo run and answered 40: "she has 30 more than silver coins"
        # may as well mean 30 more coins in all than silver ones
        (
            "How many gold coins does Gretchen have, if she has 30 more than silver coins, and "
            "she starts with 110 coins?",
            True,
        ),
        (
            "Tell me the number of gold coins Gretchen has, if she starts with 110 coins and "
            "has 30 more than silver coins.",
            True,
        ),
        (
            "How many gold coins does Gretchen have if she has 110 coins and 30 more than "
            "silver ones?",
            True,
        ),
        # accepted in a later demo run and answered 40: the side at the very end of the text
        (
            "How many gold coins does Gretchen have if she has 110 coins and has 30 more than "
            "silver?",
            True,
        ),
        (
            "Gretchen has 110 coins, and there are 30 more gold than silver coins. What is the "
            "total number of gold coins she has?",
            False,
        ),
        (
            "Gretchen has 110 coins, of which the gold ones number 30 more than the silver "
            "ones. How many gold coins does she have?",
            False,
        ),
        (
            "Of her 110 coins, Gretchen's gold coins are 30 more than her silver coins. How "
            "many gold coins does she have?",
            False,
        ),
    ],
)
def test_the_thing_that_is_more_left_out_of_its_clause(candidate: str, refused: bool) -> None:
    why = dropped_comparison_side(GRETCHEN, candidate)
    assert (
        why == "says '30 more than silver' in a clause that does not say what is more (gold)"
    ) is refused
    assert (why is None) is not refused


def test_a_comparison_with_a_person_may_leave_the_thing_to_its_sentence() -> None:
    # the labelled faithful rewording gsmplus_733: "8 more than the number of apples Jamal
    # has" compares with a person, whose apples the clause need not name again
    original = (
        "Andrea has 8 more apples than Jamal and half as many bananas as Jamal. Jamal has 4 "
        "more bananas than apples. How many fruits are there if Andrea has 52 apples?"
    )
    candidate = (
        "If Andrea possesses 52 apples, which is 8 more than the number of apples Jamal has, "
        "and she also has half the number of bananas that Jamal has, while Jamal has 4 bananas "
        "more than his apples, can you calculate the total number of fruits they have?"
    )
    assert dropped_comparison_side(original, candidate) is None


@pytest.mark.parametrize(
    ("candidate", "refused"),
    [
        # accepted in three demo runs, answered 140 (110 + 30) in two
        (
            "What is Gretchen's total number of gold coins, considering she has 110 coins and an "
            "additional 30 gold coins over silver?",
            True,
        ),
        (
            "Gretchen has 110 coins, with 30 extra gold coins over silver ones. How many are gold?",
            True,
        ),
        # the difference said as one, or compared with what it is more than
        (
            "Gretchen has 110 coins, and she has 30 more gold coins than silver coins. How many "
            "gold coins does she have?",
            False,
        ),
        (
            "Of Gretchen's 110 coins, the gold ones are an additional 30 compared to the silver "
            "ones. How many gold coins does she have?",
            False,
        ),
    ],
)
def test_a_difference_said_as_an_addition_over_the_other_side(
    candidate: str, refused: bool
) -> None:
    why = difference_said_as_addition(GRETCHEN, candidate)
    assert (why == "says the difference of 30 as an addition ('additional ... over')") is refused
    assert (why is None) is not refused


@pytest.mark.parametrize(
    ("original", "candidate", "refused"),
    [
        # a demo run's accepted paraphrase: 40 gold coins answers it as well as 70
        (
            GRETCHEN,
            "How many gold coins does Gretchen have if she has 110 coins and the difference "
            "between gold and silver coins is 30?",
            True,
        ),
        (
            GRETCHEN,
            "Gretchen's 110 coins are gold and silver, with a difference of 30 between the two "
            "kinds. How many gold coins does she have?",
            True,
        ),
        (
            "Ann is 5 years older than Tom. Tom is 12. How old is Ann?",
            "The age difference between Ann and Tom is 5 years, and Tom is 12. How old is Ann?",
            True,
        ),
        # the sentence with the amount says which side is larger
        (
            GRETCHEN,
            "Gretchen has 110 coins; the difference between gold and silver coins is 30, with "
            "gold the larger. How many gold coins does she have?",
            False,
        ),
        (
            GRETCHEN,
            "Gretchen has 110 coins and the difference between them is 30 in favour of gold. How "
            "many are gold?",
            False,
        ),
        (
            GRETCHEN,
            "Gretchen owns 110 coins, and gold coins exceed silver coins by 30. How many gold "
            "coins does she have?",
            False,
        ),
        (
            GRETCHEN,
            "Gretchen has 110 coins, and gold and silver coins differ by 30. How many gold coins "
            "does she have?",
            True,
        ),
        (
            "Ann is 5 years older than Tom. Tom is 12. How old is Ann?",
            "Ann and Tom are 5 years apart in age, and Tom is 12. How old is Ann?",
            True,
        ),
        # a word that says no direction ("after sorting", "at most", "over the years")
        (
            GRETCHEN,
            "After sorting them, Gretchen finds she has 110 coins, and the difference between "
            "gold and silver coins is 30. How many are gold?",
            True,
        ),
        (
            GRETCHEN,
            "Gretchen has 110 coins. The difference between gold and silver coins is 30. How many "
            "gold coins does she have at most?",
            True,
        ),
        # the direction said another way, or in another sentence (a helper's review)
        (
            "Ann is 5 years older than Tom. Tom is 12. How old is Ann?",
            "Ann was born 5 years before Tom, an age difference of 5 years. Tom is 12. How old "
            "is Ann?",
            False,
        ),
        (
            GRETCHEN,
            "Gretchen has 110 coins; the difference between gold and silver coins is 30, with "
            "gold coins being the majority. How many are gold?",
            False,
        ),
        (
            GRETCHEN,
            "Gretchen has 110 coins, and the difference of 30 between gold and silver coins "
            "favours gold. How many gold coins does she have?",
            False,
        ),
        (
            GRETCHEN,
            "Gretchen has 110 coins. Gold coins are more numerous. The difference between gold and "
            "silver coins is 30. How many gold coins does she have?",
            False,
        ),
        (
            "Ann is 5 years older than Tom. Tom is 12. How old is Ann?",
            "Tom is 12 and Ann was born first, an age difference of 5 years. How old is Ann?",
            False,
        ),
        (
            "Jake has 6 fewer peaches than Steven. Steven has 13 peaches. How many does Jake have?",
            "Jake trails Steven by a difference of 6 peaches, and Steven has 13. How many peaches "
            "does Jake have?",
            False,
        ),
        # no difference named at all, or the original's amount in no single sentence
        (
            GRETCHEN,
            "Gretchen has 110 coins and 30 more gold than silver ones. How many gold coins?",
            False,
        ),
        (
            "Marcia has two more pets than Cindy. If Cindy has four pets, how many does Marcia "
            "have?",
            "Cindy has four pets and Marcia has a different number. How many does Marcia have?",
            False,
        ),
    ],
)
def test_a_difference_said_without_which_side_is_larger(
    original: str, candidate: str, refused: bool
) -> None:
    why = difference_without_direction(original, candidate)
    assert (why is not None) is refused
    if refused:
        assert why is not None and why.startswith("says a difference of ")
        assert quantity_difference(original, candidate) is not None
