"""What a maths question asks its numbers to become (``services/verify/domain/aggregates.py``):
a rewording may not ask a difference, an average, a total or each one's share in the place of
another."""

from __future__ import annotations

import pytest

from steadfast.services.verify.domain.aggregates import (
    aggregate_changed,
    asked_aggregates,
    remainder_asked_where_given,
    start_given_as_remainder,
    total_asked_for_a_rate,
)
from steadfast.services.verify.domain.direction import direction_difference

ROOMMATES = (
    "Jenna has 4 roommates. Each month the electricity bill is $100. How much will each "
    "roommate pay per year for electricity, if they divide the share equally?"
)
JARS = (
    "Cecelia went to the milk store and found out that a gallon jar costs $2 more than a "
    "half-gallon jar. If a gallon jar costs $5, calculate the total amount of money she spent on "
    "10-gallon jars and 16 half-gallon jars."
)
PARKS = (
    "The first park has a $26 fee for each adult and a $12 fee for each child; the second has a "
    "$14 fee for each adult and $10 for each child. If there are 2 adults and 2 children in "
    "their family, how much will they be able to save if they choose the second park over the "
    "first?"
)
BOOKS = (
    "Cindy's math and science books weigh 2 pounds each. Her French book weighs 4 pounds. If "
    "Cindy carries all of her books at once, what will be the total weight of the books she is "
    "carrying?"
)


@pytest.mark.parametrize(
    ("original", "candidate", "why"),
    [
        # the labelled meaning changes of math_pairs_heldout.jsonl the judge let through
        (
            ROOMMATES,
            "Jenna has 4 roommates. The electricity bill comes to $100 each month. If they "
            "divide it equally, how much will they all pay together for electricity per year?",
            "asks for a total where the original asks for each one's share",
        ),
        (
            JARS,
            "Cecelia learned that a gallon jar costs $2 more than a half-gallon jar. If a gallon "
            "jar costs $5, calculate how much more she spent on 10 gallon jars than on 16 "
            "half-gallon jars.",
            "asks for a difference where the original asks for a total",
        ),
        (
            PARKS,
            "The first park charges $26 for each adult and $12 for each child, the second $14 "
            "for each adult and $10 for each child. If their family has 2 adults and 2 children, "
            "how much would they pay in total if they visited both parks?",
            "asks for a total where the original asks for a difference",
        ),
        (
            BOOKS,
            "Cindy's math and science books weigh 2 pounds each. Her French book weighs 4 "
            "pounds. If Cindy carries all of her books at once, what is the average weight of "
            "the books she is carrying?",
            "asks for an average where the original asks for a total",
        ),
    ],
)
def test_another_aggregate_asked_is_refused(original: str, candidate: str, why: str) -> None:
    assert aggregate_changed(original, candidate) == why
    assert direction_difference(original, candidate) == why


@pytest.mark.parametrize(
    ("original", "candidate"),
    [
        # the same aggregate in other words
        (
            ROOMMATES,
            "Jenna lives with 4 roommates and the monthly electricity bill is $100. Split "
            "equally, what does every roommate pay in a year?",
        ),
        (
            JARS,
            "A gallon jar costs $2 more than a half-gallon jar, and a gallon jar costs $5. "
            "What did she spend altogether on 10-gallon jars and 16 half-gallon jars?",
        ),
        (
            PARKS,
            "With 2 adults and 2 children, how much less would the family pay at the second park "
            "than at the first, if the first charges $26 for each adult and $12 for each child "
            "and the second $14 for each adult and $10 for each child?",
        ),
        # an aggregate only added, or only dropped, is left to the other checks
        (
            "Hannah will see 40% of the city's 300 fireworks. How many fireworks will Hannah see?",
            "Hannah will see 40% of the city's 300 fireworks. How many fireworks will Hannah see "
            "in total?",
        ),
        # a rate in time is no one's share ("per year", "every lunch")
        (
            "A household eats 0.2 kg of rice every meal, 5 of them every lunch and dinner. How "
            "many weeks will a 42 kg bag of rice last?",
            "A household eats 0.2 kg of rice per meal, 5 of them at both lunch and dinner. How "
            "many weeks will a 42 kg bag of rice last?",
        ),
        # written by the generator in a bench run and refused until conditions were cut off:
        # "each sprint" is a condition of the question, not what it asks
        (
            "James runs 3 sprints 3 times a week. He runs 60 meters each sprint. How many total "
            "meters does he run a week?",
            "How far does James run in a week by running 3 sprints 3 times a week, given that "
            "each sprint is 60 meters?",
        ),
        (
            "James runs 3 sprints 3 times a week. He runs 60 meters each sprint. How many total "
            "meters does he run a week?",
            "How many meters does James run every week if he runs 3 sprints 3 times a week each "
            "time for 60 meters?",
        ),
        # refused in a demo run until conditions were cut off; "with" opens one too
        (
            "Dan plants 3 rose bushes. Each rose bush has 25 roses. Each rose has 8 thorns. How "
            "many thorns are there total?",
            "Can you determine the aggregate number of thorns present in the 3 rose bushes, with "
            "each bush holding 25 roses and each rose featuring 8 thorns?",
        ),
        (
            "Dan plants 3 rose bushes. Each rose bush has 25 roses. Each rose has 8 thorns. How "
            "many thorns are there total?",
            "How many thorns are there in 3 rose bushes with 25 roses each and each rose having "
            "8 thorns?",
        ),
        # a rate the question states is no share it asks (gsmplus_2389)
        (
            "An orchard sold 2000 apples in bags of 10. How much did the orchard earn for "
            "selling this at $5 per bag?",
            "An orchard sold 2000 apples in bags of 10. If each bag is priced at $5, what is the "
            "total revenue the orchard made?",
        ),
        # the question may come first, as a request; the sentences after it ask nothing
        (
            "Hannah's city sets off 15 boxes of 20 fireworks each. How many fireworks will "
            "Hannah see in total?",
            "Find the total number of fireworks Hannah will see. Her city sets off 15 boxes of "
            "20 fireworks each.",
        ),
        # a clause after a comma opening with "where" states terms, it asks nothing (a demo
        # run refused six of these as asking for each one's share)
        (
            "Dan plants 3 rose bushes. Each rose bush has 25 roses. Each rose has 8 thorns. How "
            "many thorns are there total?",
            "Calculate the total number of thorns in 3 rose bushes, where each bush contains 25 "
            "roses and each rose has 8 thorns.",
        ),
        (
            "Dan plants 3 rose bushes. Each rose bush has 25 roses. Each rose has 8 thorns. How "
            "many thorns are there total?",
            "How many total thorns are there in 3 rose bushes, where each rose has 8 thorns, and "
            "each rose bush has 25 roses?",
        ),
    ],
)
def test_the_same_aggregate_or_one_only_added_passes(original: str, candidate: str) -> None:
    assert aggregate_changed(original, candidate) is None


def test_a_share_asked_in_place_of_a_total_is_still_refused_after_a_condition() -> None:
    original = (
        "James runs 3 sprints 3 times a week. He runs 60 meters each sprint. How many total "
        "meters does he run a week?"
    )
    changed = "How far does James run in each sprint, if he runs 3 sprints each week?"
    assert aggregate_changed(original, changed) == (
        "asks for each one's share where the original asks for a total"
    )


@pytest.mark.parametrize(
    "changed",
    [
        "Dan has 3 rose bushes, so how many roses does each bush have?",
        # a request first, the question after a comma: the question is the clause that asks
        "Find out, how many roses does each of Dan's 3 bushes have?",
    ],
)
def test_a_share_asked_after_a_comma_is_still_refused(changed: str) -> None:
    original = "Dan has 3 rose bushes with 25 roses each. How many roses are there in total?"
    assert aggregate_changed(original, changed) == (
        "asks for each one's share where the original asks for a total"
    )


def test_what_a_question_asks_is_read_from_its_asking_sentence() -> None:
    assert asked_aggregates(ROOMMATES) == frozenset({"each one's share"})
    assert asked_aggregates(BOOKS) == frozenset({"a total"})
    assert asked_aggregates("Each box holds 5 pens. How many pens are there?") == frozenset()


def test_a_difference_between_two_sides_where_the_original_compares_nothing_is_refused() -> None:
    # hm3-036 of math_pairs_heldout3.jsonl, judge 0.52
    original = (
        "John buys 3 goats for $500 each and 2 cows for $1500 each. How much money did he spend?"
    )
    changed = (
        "John buys 3 goats for $500 each and 2 cows for $1500 each. How much more money did he "
        "spend on the cows than on the goats?"
    )
    assert aggregate_changed(original, changed) == (
        "asks for a difference between two sides where the original compares nothing"
    )
    # the original compares already: "how much less ... than" for "how much more ... than"
    compared = "Cows cost $1500 and goats $500. How much more does a cow cost than a goat?"
    assert (
        aggregate_changed(
            compared, "Cows cost $1500 and goats $500. How much less does a goat cost than a cow?"
        )
        is None
    )


GRANDMA = (
    "Grandma Jones baked 5 apple pies for the fireman's luncheon.  She cut each pie into 8 pieces "
    "and set the five pies out on the buffet table for the guests to serve themselves.  At the "
    "end of the evening, after the guests had taken and eaten their pieces of pie, there were 14 "
    "pieces of pie remaining.  How many pieces were taken by the guests?"
)


@pytest.mark.parametrize(
    ("original", "candidate", "why"),
    [
        # accepted in a bench run (judge 0.52): the given and the asked trade places
        (
            GRANDMA,
            "What number of pieces of pie were left after Grandma Jones cut 5 pies into 8 slices "
            "and then guests ate 14 pieces, if she started with 5 pies?",
            "asks what is 'were left', which the original gives, where it asks something else",
        ),
        (
            GRANDMA,
            "Grandma Jones cut 5 apple pies into 8 pieces each and the guests took 14. How many "
            "pieces remain?",
            "asks what is 'remain', which the original gives, where it asks something else",
        ),
        (
            "Tom had 12 apples and had 5 left after lunch. How many did he eat?",
            "Tom had 12 apples and ate 5 at lunch. How many did he have left?",
            "asks what is 'have left', which the original gives, where it asks something else",
        ),
        # the remainder given after its word: "the remaining 3", "left was 4"
        (
            "Tom shared his 12 marbles and kept the remaining 3. How many did he share?",
            "Tom shared his 12 marbles. How many marbles were left?",
            "asks what is 'were left', which the original gives, where it asks something else",
        ),
        (
            "Mia baked 20 cookies; what was left was 4. How many did she give away?",
            "Mia baked 20 cookies and gave some away. How many cookies remained?",
            "asks what is 'remained', which the original gives, where it asks something else",
        ),
        # the remainder a few words from its number ("14 pieces of the pie remaining")
        (
            "Grandma cut 5 pies into 8 pieces. At the end there were 14 pieces of the pie "
            "remaining. How many pieces were taken?",
            "What number of pieces of pie were left after Grandma cut 5 pies into 8 pieces and "
            "the guests took 14?",
            "asks what is 'were left', which the original gives, where it asks something else",
        ),
        # a remainder with no number of its clause is not given ("12 apples. Some were left")
        (
            "Tom had 12 apples. Some were left after lunch. How many did he eat?",
            "Tom had 12 apples and ate some at lunch. How many apples were left?",
            None,
        ),
        # what is left stays a condition, or only names what is asked about
        (
            GRANDMA,
            "How many pieces did the guests take before only 14 pieces remained?",
            None,
        ),
        # the original asks what is left in other words (a helper's review)
        (
            "There were 40 guests. By 10 pm, 12 guests had left. How many guests were still at "
            "the party?",
            "There were 40 guests and 12 had left by 10 pm. How many guests remained?",
            None,
        ),
        (
            "Jenna had 30 marbles. She gave 10 to Ann and 1/3 of the remaining marbles to Bo. How "
            "many marbles does Jenna have now?",
            "Jenna had 30 marbles, gave 10 to Ann and then 1/3 of the rest to Bo. How many "
            "marbles does she have left?",
            None,
        ),
        (
            GRANDMA,
            "Grandma Jones baked 5 apple pies and cut each into 8 pieces. If 14 pieces were left "
            "at the end of the evening, how many pieces did the guests take?",
            None,
        ),
        (
            GRANDMA,
            "Grandma Jones cut each of her 5 apple pies into 8 pieces for the luncheon. How many "
            "pieces did the guests take if 14 pieces remained at the end?",
            None,
        ),
        (
            "Sara had $50. She spent $20 on food and the rest on books. How much did she spend on "
            "books?",
            "Sara had $50 and spent $20 of it on food. How much of the remaining money did she "
            "spend on books?",
            None,
        ),
        (
            "Yesterday Tom had fifteen pencils left over. Today he buys 10 more and gives away 3. "
            "How many pencils does he have at the end of the day?",
            "Tom had fifteen pencils left over yesterday; today he bought 10 more and gave 3 "
            "away. How many pencils does he have left at the end of the day?",
            None,
        ),
        # the original asks what is left itself
        (
            "Tom had 12 apples and ate 5. How many apples are left?",
            "Tom ate 5 of his 12 apples. How many apples remain?",
            None,
        ),
        # a verb "left" is no remainder
        (
            "Tom left home at 3 pm and walked 2 miles, with 1 mile remaining. How far had he "
            "walked?",
            "How far had Tom walked after he left home at 3 pm, walking 2 miles with 1 mile "
            "remaining?",
            None,
        ),
    ],
)
def test_what_is_left_asked_where_the_original_gives_it(
    original: str, candidate: str, why: str | None
) -> None:
    assert remainder_asked_where_given(original, candidate) == why
    if why:
        assert direction_difference(original, candidate) == why


JEAN = (
    "Jean has 30 lollipops. Jean eats 2 of the lollipops. With the remaining lollipops, Jean "
    "wants to package 2 lollipops in one bag. How many bags can Jean fill?"
)


@pytest.mark.parametrize(
    ("original", "candidate", "why"),
    [
        # accepted in a bench run (judge 0.67): 30 is what she starts with
        (
            JEAN,
            "How many bags can Jean fill if she has 30 lollipops left after eating 2 and "
            "packages 2 in each bag?",
            "gives 30 as what is left where the original gives it before anything happens",
        ),
        (
            "A shop has 50 shirts. It sells 20 on Monday. How many does it have now?",
            "After selling 20 shirts on Monday, the shop had 50 shirts remaining. How many does "
            "it have?",
            "gives 50 as what is left where the original gives it before anything happens",
        ),
        # what is left given after what happened, as the original does (a helper's review)
        (
            "Mary had 8 apples. She gave 3 to Tom. She has 5 apples. How many did Tom get?",
            "After giving 3 to Tom, Mary has 5 apples left. She had 8. How many did Tom get?",
            None,
        ),
        # the original's own sentence says a later time, or what is left
        (
            "After eating 2, Jean has 28 lollipops. She puts 2 in each bag. How many bags can "
            "she fill?",
            "Jean has 28 lollipops left after eating 2 and puts 2 in each bag. How many bags can "
            "she fill?",
            None,
        ),
        (
            "At the end of the day the shop had 12 shirts unsold. It sold 20. How many did it "
            "have in the morning?",
            "The shop had 12 shirts left after selling 20 at the end of the day. How many did it "
            "have in the morning?",
            None,
        ),
        # no "after", "left" as leaving, a time left, a share of what is left
        (
            "5 friends went to the party at 8 pm. How many hours did they stay if they went home "
            "at 11 pm?",
            "5 friends left the party at 11 pm after arriving at 8 pm. How many hours did they "
            "stay?",
            None,
        ),
        (
            "A game lasts 40 minutes. With 10 minutes to go, the score is 2 to 1. How many "
            "minutes have been played?",
            "In a 40-minute game the score is 2 to 1 with 10 minutes remaining after a goal. How "
            "many minutes have been played?",
            None,
        ),
        (
            "Ann had 12 apples. She gave 3 to Bo and 1/3 of the others to Cy. How many did Cy get?",
            "After giving 3 of her 12 apples to Bo, Ann gave 1/3 of what was left to Cy. How many "
            "did Cy get?",
            None,
        ),
        (
            "Ten students are left-handed and 3 are not. How many students are there?",
            "After counting, 3 students are not left-handed and ten are. How many are there?",
            None,
        ),
        # what she starts with, said as such
        (
            JEAN,
            "If Jean starts with 30 lollipops, eats 2 and puts 2 of the rest in each bag, how "
            "many bags can she fill?",
            None,
        ),
    ],
)
def test_a_start_given_as_what_is_left(original: str, candidate: str, why: str | None) -> None:
    assert start_given_as_remainder(original, candidate) == why
    if why:
        assert direction_difference(original, candidate) == why


SHIELA = (
    "Shiela bought five cell phones for $150 each for a 3-month installment. A 2% interest will "
    "be charged for each unit. How much will Shiela pay each month for 3 months?"
)


@pytest.mark.parametrize(
    ("original", "candidate", "why"),
    [
        # accepted in a bench run (judge 0.59): the whole cost, not a month's
        (
            SHIELA,
            "Calculate the total cost of five cell phones at $150 each with a 2% interest over "
            "three months.",
            "asks a total where the original asks how much 'each month'",
        ),
        # a rate in time asked too, or the original asks a total itself
        (
            SHIELA,
            "Find the monthly installment amount for five cell phones at $150 each with a 2% "
            "interest over three months.",
            None,
        ),
        (
            SHIELA,
            "What is the total Shiela pays each month for five $150 phones with 2% interest per "
            "unit over 3 months?",
            None,
        ),
        (
            "Tom earns $15 an hour for 40 hours. How much does he earn per week?",
            "What are Tom's total earnings in one week at $15 an hour for 40 hours?",
            None,
        ),
        (
            "Tom works 5 days a week at $20 a day. How much does he earn in total each week?",
            "What is Tom's total pay for a week of 5 days at $20 a day?",
            None,
        ),
    ],
)
def test_a_total_asked_for_a_rate_in_time(original: str, candidate: str, why: str | None) -> None:
    assert total_asked_for_a_rate(original, candidate) == why
    if why:
        assert direction_difference(original, candidate) == why


INCE = (
    "On June 24, 2018, how many more votes did the winning candidate get in total than "
    "Muharrem İnce?"
)


@pytest.mark.parametrize(
    ("candidate", "why"),
    [
        # accepted in a bench run (judge 0.71): "the winner got more" answers it
        (
            "How did the winner's vote count compare to Muharrem İnce's on June 24, 2018?",
            "asks how two sides compare where the original asks by how much they differ",
        ),
        # by how much, in other words
        (
            "What was the difference between the winning candidate's and Muharrem İnce's vote "
            "tallies on June 24, 2018?",
            None,
        ),
        ("By how much did the winner's vote count exceed Muharrem İnce's on June 24, 2018?", None),
    ],
)
def test_how_two_sides_compare_asked_for_by_how_much(candidate: str, why: str | None) -> None:
    assert aggregate_changed(INCE, candidate) == why
