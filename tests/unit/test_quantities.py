"""Quantity invariance (docs/method.md §1.1 step 3): hand-made cases of every kind of number, in
English and Italian."""

from __future__ import annotations

from fractions import Fraction

import pytest

from steadfast.shared.quantities.answer_units import changed_answer_unit, dropped_answer_units
from steadfast.shared.quantities.changes import (
    count_dropped,
    money_swapped_with_a_count,
    number_given_to_the_rest,
    percent_by_said_as_to,
    ratio_of_a_new_number,
    repetition_folded,
)
from steadfast.shared.quantities.invariance import quantity_difference
from steadfast.shared.quantities.reading import mentions, numbers_in_digits


def values(text: str, language: str = "en") -> list[set[Fraction | str]]:
    return [set(m.values) for m in mentions(text, language)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("3 apples", [{3}]),
        ("1,000 pens and 2,500.75 more", [{1000}, {Fraction(250075, 100)}]),
        ("3.5 kg, .5 too", [{Fraction(7, 2)}, {Fraction(1, 2)}]),
        ("twenty-five of them", [{25}]),
        ("one hundred and ten coins", [{110}]),
        ("a hundred people, a dozen eggs, two dozen", [{100}, {12}, {24}]),
        ("three thousand four hundred", [{3400}]),
        ("1.5 million people", [{1_500_000}]),
        ("the 3rd, 21st and first", [{3}, {21}, {1}]),
        ("the third day, twenty-first century", [{3}, {21}]),
        (
            "2/3 of it, two thirds, three-quarters, a third of them",
            [{Fraction(2, 3)}] * 2
            + [
                {Fraction(3, 4)},
                {Fraction(1, 3)},
            ],
        ),
        ("½ cup", [{Fraction(1, 2)}]),
        ("half a dozen and 1/2 a dozen", [{6}, {6}]),
        # a number and a half; a mixed number
        ("one and a half, 2 and a half pizzas", [{Fraction(3, 2)}, {Fraction(5, 2)}]),
        ("1 1/2 dozen and 1 and a half dozen", [{18}, {18}]),
        ("a 2 3/4 inch nail, two and a half thousand people", [{Fraction(11, 4)}, {2500}]),
        ("an hour and a half", [{Fraction(3, 2)}]),
        ("twice as many, triple the amount", [{2}, {3}]),
        ("50% and fifty percent and 50 per cent", [{50}, {50}, {50}]),
        ("$4.50 or 25 cents", [{Fraction(9, 2)}, {25}]),
        ("in 2010, in the 1990s", [{2010}, {1990}]),
        ("-3 squared, minus five", [{-3}, {-5}]),
        ("on 20/07/1969", [{20}, {7}, {1969}]),
        ("３ apples and ٣ pears", [{3}, {3}]),
        ("CO2 and vitamin B12 are names, not numbers", []),
        ("one fifty-dollar bill", [{1}, {50}]),
    ],
)
def test_english_numbers_are_read_as_values(text: str, expected: list[set[object]]) -> None:
    assert values(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("tre mele e ventitré pere", [{3}, {23}]),
        ("duemilacinquecento euro", [{2500}]),
        ("nel millenovecentonovantotto", [{1998}]),
        ("centottanta, centotto, trentuno", [{180}, {108}, {31}]),
        ("il ventesimo secolo, il terzo giorno", [{20}, {3}]),
        ("tre quarti, un terzo", [{Fraction(3, 4)}, {Fraction(1, 3)}]),
        ("il 50 per cento, il 50%", [{50}, {50}]),
        ("mezz'ora", [{Fraction(1, 2)}]),
        ("un'ora e mezza, due e mezzo", [{Fraction(3, 2)}, {Fraction(5, 2)}]),
        ("3 milioni di persone", [{3_000_000}]),
        ("1.000 abitanti", [{1, 1000}]),  # Italian thousands, or an English decimal
        ("3,5 litri", [{Fraction(7, 2)}]),
        ("il centro del treno", []),  # words that merely begin like numbers
    ],
)
def test_italian_numbers_are_read_as_values(text: str, expected: list[set[object]]) -> None:
    assert values(text, "it") == expected


@pytest.mark.parametrize(
    ("original", "candidate"),
    [
        ("She has 3 apples.", "She has three apples."),
        ("It costs 1,000 dollars.", "The price is one thousand dollars."),
        ("It costs 1000 dollars.", "The price is 1,000 dollars."),
        ("Half of them left.", "50% of them left."),
        ("The price fell by 50%.", "The price fell by fifty percent."),
        ("The price fell by 50%.", "The price was cut in half."),
        ("Walter ate 2/5 of them.", "Walter ate 40% of them."),
        ("three-fourths of the students", "75% of the students"),
        ("He has to be there in 60 minutes.", "He must arrive within an hour."),
        ("A cat eats in 30 minutes.", "In half an hour, a cat eats."),
        ("How much does she make in 1 week?", "What does she earn in a week?"),
        ("It costs $0.25.", "It costs 25 cents."),
        ("Who won the award in 2010?", "In the year 2010, who won the award?"),
        ("Which one is the largest?", "What is the largest?"),
        ("the two websites", "both websites"),
        ("a 1-hour episode and a 30-minute show", "a 60-minute episode and a half-hour show"),
        ("the 2nd edition", "the second edition"),
        ("the first half of the year", "the first six months"),
        ("a dose of the second medicine", "a dose of a second drug"),
        ("Wait a second, please.", "Please wait one second."),
        ("When did it first air?", "When was its debut?"),  # "first" as an adverb
        ("What is her first and last name?", "What are her given name and surname?"),
        ("Who won the 2014 World Cup?", "Who won the World Cup of twenty fourteen?"),
        ("in the 1985 election", "in the election of nineteen eighty-five"),
        ("the 2021-2022 season", "the 2021–22 season"),
        ("When did world war 2 end?", "When did World War II end?"),
        ("When did World War II end?", "When did the Second World War end?"),
        # a multiplier written another way
        ("Sam has twice as many as Tom.", "Sam has 2 times as many as Tom."),
        ("Sam has twice as many as Tom.", "Sam has double what Tom has."),
        ("It doubles its height every day.", "Its height grows twofold each day."),
        ("Ha il doppio dei libri.", "Ha due volte i libri."),
        # how often: "twice a day" is "two times a day", "3 days a week" is "three times a week"
        ("She feeds them twice a day.", "She feeds them two times a day."),
        ("It is rented 3 days a week.", "It is rented three times a week."),
        # "of the second" is the second of two things, not half a second
        (
            "The first house needs 1/2 of the second.",
            "The first house needs half as much as the second one.",
        ),
        ("It took a quarter of an hour.", "It took 15 minutes."),
        # an hour and a half, a number and a half, a mixed number
        ("Tom walks for an hour and a half.", "Tom walks for 1.5 hours."),
        ("Tom walks for an hour and a half.", "Tom walks for 90 minutes."),
        ("Tom walks for an hour and a half.", "Tom walks for one and a half hours."),
        ("She eats 2 and a half pizzas.", "She eats 2.5 pizzas."),
        ("1 1/2 dozen brownies were eaten.", "They ate 1 and a half dozen brownies."),
        ("1 1/2 dozen brownies were eaten.", "They ate 18 brownies."),
    ],
)
def test_the_same_quantities_written_differently_agree(original: str, candidate: str) -> None:
    assert quantity_difference(original, candidate) is None


@pytest.mark.parametrize(
    ("original", "candidate", "difference"),
    [
        ("She has three apples.", "She has four apples.", 'missing "three"; added "four"'),
        ("Who won the award in 2010?", "Who has won the award?", 'missing "2010"'),
        ("Who won in 2010?", "Who won in 2012?", 'missing "2010"; added "2012"'),
        ("in 24 hours", "in 1 hour", 'missing "24 hours"'),
        (
            "Gretchen has 110 coins, 30 of them gold.",
            "How many coins has Gretchen?",
            ('missing "110", "30"'),
        ),
        ("the second largest city", "the third largest city", 'missing "second"; added "third"'),
        ("the first person to do it", "a person who did it", 'missing "first"'),
        ("the Society's first show", "the Society's last show", 'missing "first"'),
        ("a 10% rise", "a 20% rise", 'missing "10%"; added "20%"'),
        ("It costs $4.50.", "It costs $5.40.", 'missing "$4.50"; added "$5.40"'),
        ("a third of them", "a quarter of them", 'missing "a third"; added "a quarter"'),
        ("It is -3.", "It is 3.", 'missing "-3"; added "3"'),
        ("He ate 9 of them.", "He ate 9 of them in 2 hours.", 'added "2 hours"'),
        # a multiplier is no count: a bench run accepted the first (turned round, "twice"
        # standing in for "2 bolts")
        (
            "A robe takes 2 bolts of blue fiber and half that much white fiber.",
            "A robe needs blue fiber, half the bolts of the white, and white fiber twice the blue.",
            'missing "2"; added "twice"',
        ),
        (
            "Seth is twice as old as Brooke. In 2 years",
            "Seth is twice as old. In several years",
            'missing "2 years"',
        ),
        ("It costs 2 dollars.", "It costs double.", 'missing "2 dollars"; added "double"'),
        # "and a half" dropped: no longer read as a lone half that a "1/2" elsewhere matches
        (
            "Tom walks for an hour and a half.",
            "Tom walks for an hour.",
            'missing "an hour and a half"',
        ),
        (
            "She eats 2 and a half pizzas.",
            "She eats 2 pizzas.",
            'missing "2 and a half"; added "2"',
        ),
    ],
)
def test_a_dropped_changed_or_added_quantity_is_named(
    original: str, candidate: str, difference: str
) -> None:
    assert quantity_difference(original, candidate) == difference


def test_italian_pairs_compare_with_italian_number_words() -> None:
    assert quantity_difference("Quante mele ha? Tre.", "Quante mele possiede? 3.") is None
    assert quantity_difference("Nel 1973 tre quarti dei soci", "Nel 1973 il 75% dei soci") is None
    assert quantity_difference(
        "Quando è iniziata la crisi del 1973?", "Quando è iniziata la crisi?"
    )
    assert quantity_difference("Chi sei tu?", "Tu chi sei?") is None  # "sei": "you are"
    assert quantity_difference("Ha sei mele.", "Ha sette mele.") == 'added "sette"'
    # in English, "due" and "tre" are no numbers
    assert quantity_difference("When is the rent due?", "By when must the rent be paid?") is None


def test_an_amount_di_dollari_is_money_as_one_after_a_dollar_sign_is() -> None:
    (spelt,) = mentions("Costò 2,2 miliardi di dollari.", "it")
    (signed,) = mentions("Costò $2,2 miliardi.", "it")
    assert spelt.written == "2,2 miliardi di dollari"
    assert (
        (spelt.dimension, spelt.base) == (signed.dimension, signed.base) == ("money", 220000000000)
    )
    assert mentions("il prezzo di dollari", "it") == []


def test_numbers_too_long_to_read_as_values_are_compared_as_written() -> None:
    huge = "9" * 5000
    assert values(f"{huge} sheep, {huge}/{huge} of a goat") == [{huge}, {f"{huge}/{huge}"}]
    assert quantity_difference(f"Count {huge} sheep.", f"Count sheep numbering {huge}.") is None
    assert quantity_difference(f"Count {huge} sheep.", "Count the sheep.") == (
        'missing "999999999999…"'
    )


@pytest.mark.parametrize(
    ("original", "candidate", "difference"),
    [
        # rewordings the demo's judge accepted
        (
            "At what temperature in degrees Celsius does water boil at sea level?",
            "How hot is water when it boils at sea level?",
            'drops the answer\'s unit "degrees Celsius"',
        ),
        (
            "At what temperature in degrees Celsius does water boil at sea level?",
            "At what temperature in Fahrenheit does water boil at sea level?",
            'drops the answer\'s unit "degrees Celsius"',
        ),
        (
            "What is the length in meters of Abdullah Bridge?",
            "How long is Abdullah Bridge?",
            'drops the answer\'s unit "metres"',
        ),
        (
            "Quanto è lungo il ponte, espresso in chilometri?",
            "Quanto è lungo il ponte?",
            'drops the answer\'s unit "kilometres"',
        ),
    ],
)
def test_a_dropped_answer_unit_is_named(original: str, candidate: str, difference: str) -> None:
    assert quantity_difference(original, candidate) == difference


@pytest.mark.parametrize(
    ("original", "candidate"),
    [
        (
            "At what temperature in degrees Celsius does water boil at sea level?",
            "What is water's boiling point at sea level, in °C?",
        ),
        ("What is the length in meters of the bridge?", "How many metres long is the bridge?"),
        ("How far is it, in kilometres?", "How many km away is it?"),
        ("How much money, in dollars, did they raise?", "How many $ did they raise?"),
        ("She paid $40. How much is left, in dollars?", "She paid $40. How much is left?"),
        ("Who won the award in 2010?", "In 2010, who received the award?"),  # no unit asked
        ("He ran in the rain in recent years.", "Lately he ran when it rained."),
        # "in" + a unit's word that asks for no unit
        ("Who came in second in the 1998 World Cup?", "Which team was the 1998 runner-up?"),
        ("What happened in year 2000 in Italy?", "What happened in Italy in 2000?"),
        ("What was the warmest winter in years?", "Which winter was the warmest lately?"),
        ("Which region is rich in ore deposits?", "Which region has many ore deposits?"),
        ("What is the GDP in euro countries?", "What is the eurozone's GDP?"),
        ("What was described in minute detail?", "What was described very precisely?"),
        ("How much did he give in dollar bills?", "How much did he hand over in notes?"),
        # the unit kept in an abbreviation or another form
        ("What is its length in meters?", "How long is it, in m?"),
        ("What is its mass in kilograms?", "How many kilos does it weigh?"),
        ("How long is the flight, in hours?", "How many hrs is the flight?"),
        ("What is the area in square kilometers?", "What is the area in sq km?"),
        ("At what temperature in degrees Celsius does water boil?", "At what ºC does water boil?"),
    ],
)
def test_an_answer_unit_kept_in_other_words_or_none_asked_agrees(
    original: str, candidate: str
) -> None:
    assert dropped_answer_units(original, candidate) == []


@pytest.mark.parametrize(
    ("text", "language", "expected"),
    [
        ("Who won the cup in twenty fourteen?", "en", "Who won the cup in 2014?"),
        ("When did World War II end?", "en", "When did World War 2 end?"),
        ("Gretchen has one hundred and ten coins", "en", "Gretchen has 110 coins"),
        ("a nine-hundred-square-mile zone", "en", "a 900-square-mile zone"),
        ("Ha tre gatti e ventuno cani", "it", "Ha 3 gatti e 21 cani"),
        # ordinals, amounts, ratios, digits and soft words stay as written
        ("The third largest city", "en", "The third largest city"),
        ("It costs five dollars", "en", "It costs five dollars"),
        ("fifty percent of them", "en", "fifty percent of them"),
        ("Sam has 12 apples and one pear", "en", "Sam has 12 apples and one pear"),
        ("Half of the class", "en", "Half of the class"),
    ],
)
def test_number_words_are_rewritten_in_digits(text: str, language: str, expected: str) -> None:
    assert numbers_in_digits(text, language) == expected


@pytest.mark.parametrize(
    ("original", "candidate", "why"),
    [
        # accepted in a bench run: the same numbers, another unit asked
        (
            "James decides to run 3 sprints 3 times a week.  He runs 60 meters each sprint.  "
            "How many total meters does he run a week?",
            "How many miles does James run each week, if he runs 60 meters in each of his 3 "
            "sprints, and he runs 3 times a week?",
            "asks for the answer in miles where the original asks in metres",
        ),
        (
            "Sandy walked for 8 hours. How many minutes did she walk in total?",
            "Sandy walked for 8 hours. In total, how many hours did she walk?",
            "asks for the answer in hours where the original asks in minutes",
        ),
        # the same unit asked another way, or no unit asked: no change of unit
        (
            "Sandy walked for 8 hours. How many minutes did she walk in total?",
            "Sandy walked for 8 hours. How long did she walk in total, in minutes?",
            None,
        ),
        (
            "James runs 3 sprints 3 times a week, 60 meters each. How many total meters does he "
            "run a week?",
            "What is the total distance James runs in a week if he runs 3 sprints 3 times a "
            "week, 60 meters each?",
            None,
        ),
    ],
)
def test_another_unit_asked_for_the_answer(original: str, candidate: str, why: str | None) -> None:
    assert changed_answer_unit(original, candidate) == why
    if why:
        assert why in (quantity_difference(original, candidate) or "")


@pytest.mark.parametrize(
    ("candidate", "why"),
    [
        # accepted in a bench run: 150% of the price is not the price and 150% more
        (
            "Josh intends to flip a house for $80,000. After adding $50,000, the house's value "
            "rises to 150% of its initial price. How much profit does he expect to make?",
            "says the change is to 150% where the original says by 150%",
        ),
        (
            "Josh buys a house for $80,000 and puts in $50,000 in repairs, which raises its "
            "value to 150%. How much profit did he make?",
            "says the change is to 150% where the original says by 150%",
        ),
        # the same change in other words
        (
            "Josh purchased a house for $80,000 and put in an additional $50,000 in repairs, "
            "resulting in a 150% increase in value. How much profit did he earn?",
            None,
        ),
        (
            "Josh bought a house for $80,000 and spent $50,000 on repairs, which raised the "
            "house's value by 150 percent. What was his profit?",
            None,
        ),
    ],
)
def test_a_change_by_a_percentage_said_as_a_change_to_it(candidate: str, why: str | None) -> None:
    original = (
        "Josh decides to try flipping a house.  He buys a house for $80,000 and then puts in "
        "$50,000 in repairs.  This increased the value of the house by 150%.  How much profit "
        "did he make?"
    )
    assert percent_by_said_as_to(original, candidate) == why
    if why:
        assert why in (quantity_difference(original, candidate) or "")


def test_half_of_one_thing_for_half_a_thing_passes() -> None:
    original = "A cake needs half a cup of sugar. How many cups of sugar do 3 cakes need?"
    candidate = "If one cake takes half of one cup of sugar, how many cups do 3 cakes need?"
    assert ratio_of_a_new_number(original, candidate) is None


ROBE = (
    "A robe takes 2 bolts of blue fiber and half that much white fiber.  How many bolts in total "
    "does it take?"
)


@pytest.mark.parametrize(
    ("candidate", "why"),
    [
        # accepted in a bench run: half a bolt, not half of 2
        (
            "How many bolts of blue and white fiber does it take to make a robe if 2 bolts of "
            "blue fiber and 0.5 of 1 bolt of white fiber are required?",
            "takes 0.5 of 1, a number the original does not have",
        ),
        (
            "A robe takes 2 bolts of blue fiber and half of one bolt of white fiber. How many "
            "bolts does it take?",
            "takes half of one, a number the original does not have",
        ),
        # half of the original's number, said outright or not
        (
            "How many bolts of fiber are used in a robe when 2 bolts of blue fiber and half of "
            "those (half of 2) are combined?",
            None,
        ),
        ("How many bolts does a robe need with 2 bolts of blue and half that of white?", None),
    ],
)
def test_a_fraction_taken_of_a_number_the_original_does_not_have(
    candidate: str, why: str | None
) -> None:
    assert ratio_of_a_new_number(ROBE, candidate) == why
    if why:
        assert why in (quantity_difference(ROBE, candidate) or "")


SPRINTS = (
    "James decides to run 3 sprints 3 times a week.  He runs 60 meters each sprint.  How many "
    "total meters does he run a week?"
)


@pytest.mark.parametrize(
    ("candidate", "why"),
    [
        # two accepted in a bench run: 3 sprints a week, not 9
        (
            "What is the total number of meters that James runs in 3 sprint training sessions "
            "each week if he runs 60 meters in each sprint?",
            'writes 3 once where the original writes it twice, once as how many times ("3 '
            'times"): a repetition folded into one count',
        ),
        (
            "James runs 60 meters a sprint, 3 sprints a week. How many meters does he run a week?",
            'writes 3 once where the original writes it twice, once as how many times ("3 '
            'times"): a repetition folded into one count',
        ),
        # the repetition kept, in words or digits, before or after
        (
            "James decides to run 3 sprints three times a week. Since he runs 60 meters per "
            "sprint, how much distance does he cover in a week?",
            None,
        ),
        (
            "Three times a week, James runs 3 sprints of 60 meters each. How many meters does he "
            "run in a week?",
            None,
        ),
    ],
)
def test_a_repetition_folded_into_one_count(candidate: str, why: str | None) -> None:
    assert repetition_folded(SPRINTS, candidate) == why
    if why:
        assert why in (quantity_difference(SPRINTS, candidate) or "")


SETH = (
    "Seth is twice as old as Brooke. In 2 years, the sum of their ages will be 28. How old is Seth?"
)
MEALS = (
    "John likes to have a glass of water with breakfast, lunch and dinner. How many glasses of "
    "water does John drink in a week?"
)


def test_a_day_s_place_said_beside_its_name_is_no_difference() -> None:
    original = (
        "Peter spends an equal amount each day. From Sunday through Wednesday, he bought wooden "
        "figures which cost $6 each. How many figures will he have?"
    )
    # gsmplus_1557, labelled faithful
    said = (
        "From the first day of the week, Sunday, to the fourth day, Wednesday, Peter bought "
        "wooden figures at $6 each, spending an equal amount each day. How many figures will he "
        "have?"
    )
    assert quantity_difference(original, said) is None
    # a day's place without its name, or beside a day the original does not name
    assert quantity_difference(original, said.replace(", Wednesday", "")) == 'added "fourth"'
    assert quantity_difference(original, said.replace("Wednesday", "Thursday")) == (
        'added "fourth"'
    )


@pytest.mark.parametrize(
    ("original", "candidate", "why"),
    [
        # gsmplus_1805, labelled faithful: the multiple said the other way round
        (
            SETH,
            "Brooke's age is half of Seth's age. Two years from now, their combined ages will "
            "total 28 years. What is Seth's current age?",
            None,
        ),
        # the inverse, but the same way round: Seth is now the younger
        (
            SETH,
            "Seth's age is half of Brooke's age. Two years from now, their combined ages will "
            "total 28 years. What is Seth's current age?",
            'missing "twice"; added "half"',
        ),
        # gsmplus_1997, labelled faithful: a count of the original's list
        (
            MEALS,
            "John drinks a glass of water with his three main meals - breakfast, lunch, and "
            "dinner. How many glasses of water does he drink in a week?",
            None,
        ),
        # a count that does not match its list, or a list the original does not have
        (
            MEALS,
            "John drinks a glass of water with his two meals, breakfast, lunch and dinner. How "
            "many glasses of water does he drink in a week?",
            'added "two"',
        ),
        (
            MEALS,
            "John drinks a glass of water with his four meals: breakfast, lunch, tea and dinner. "
            "How many glasses of water does he drink in a week?",
            'added "four"',
        ),
    ],
)
def test_a_number_restated_is_no_difference(original: str, candidate: str, why: str | None) -> None:
    assert quantity_difference(original, candidate) == why


DRIVE = (
    "John drives for 3 hours at a speed of 60 mph and then turns around because he realizes he "
    "forgot something very important at home.  He tries to get home in 4 hours but spends the "
    "first 2 hours in standstill traffic.  He spends the next half-hour driving at a speed of "
    "30mph, before being able to drive the remaining time of the 4 hours going at 80 mph.  How "
    "far is he from home at the end of those 4 hours?"
)
DRIVE_START = (
    "John drove for 3 hours at 60 mph, then turned around because he realized he forgot "
    "something very important at home. He tried to return home in 4 hours, but spent the first "
    "2 hours in traffic. He spent the next half-hour driving at 30 mph,"
)


@pytest.mark.parametrize(
    ("candidate", "why"),
    [
        # accepted in a bench run: the remaining time is 1.5 hours
        (
            f"{DRIVE_START} then continued for the remaining 2 hours at 80 mph. How far away was "
            "he from home at the end of those 4 hours?",
            "gives 2 hours to what is left, where the original does not",
        ),
        (
            f"{DRIVE_START} then drove the rest of the 4 hours at 80 mph. How far away was he "
            "from home at the end of those 4 hours?",
            None,
        ),
        # a number repeated where it names the same thing again
        (
            f"{DRIVE_START} then drove at 80 mph until the 4 hours were over. After the first 2 "
            "hours and the half-hour, how far from home was he at the end of the 4 hours?",
            None,
        ),
    ],
)
def test_a_number_given_to_what_is_left(candidate: str, why: str | None) -> None:
    assert number_given_to_the_rest(DRIVE, candidate) == why
    if why:
        assert why in (quantity_difference(DRIVE, candidate) or "")


@pytest.mark.parametrize(
    ("original", "candidate"),
    [
        # the original gives it to the rest already
        (
            "Tom has 20 cookies. He eats 5 and gives the remaining 15 to his friends, 3 each. How "
            "many friends get cookies?",
            "Tom has 20 cookies and eats 5. If he shares the remaining 15 among friends, 3 each, "
            "how many friends share the remaining 15 cookies?",
        ),
        # "last" the verb
        (
            "Each battery lasts 5 hours. How many hours do 3 batteries last?",
            "There are 3 batteries that last 5 hours each. If each battery can last 5 hours, how "
            "long do they last?",
        ),
    ],
)
def test_a_number_repeated_for_the_same_rest(original: str, candidate: str) -> None:
    assert number_given_to_the_rest(original, candidate) is None


DANCE = (
    "In a dance class of 20 students, 20% enrolled in contemporary dance, 25% of the remaining "
    "enrolled in jazz dance, and the rest enrolled in hip-hop dance. What percentage of the "
    "entire students enrolled in hip-hop dance?"
)


@pytest.mark.parametrize(
    ("original", "candidate", "why"),
    [
        # accepted in a bench run: the class of 20 is gone, "20%" stood in for it
        (
            DANCE,
            "What percentage of the total students enrolled in hip-hop dance is there if 20% are "
            "in contemporary dance and 25% of the remaining students are in jazz dance?",
            'missing "20"',
        ),
        (
            DANCE,
            "Of the 20 students in a dance class, 20% chose contemporary, 25% of the rest chose "
            "jazz and the others hip-hop. What percentage of all the students chose hip-hop?",
            None,
        ),
        # a bare number the original does not also write as a percentage may still be said so
        (
            "A shirt costs $40 and is 25 off. How much does it cost?",
            "A $40 shirt is 25% off. What does it cost?",
            None,
        ),
    ],
)
def test_a_number_said_only_as_the_percentage_beside_it(
    original: str, candidate: str, why: str | None
) -> None:
    assert quantity_difference(original, candidate) == why


CHARLIE = (
    "Charlie wants to sell beeswax candles.  For every pound of beeswax, he can make 10 tapered "
    "candles.  One pound of beeswax and the wicks cost $10.00 in supplies.   If he sells each "
    "candle for $2.00 each, what is his net profit if he makes and sells 20 candles?"
)


@pytest.mark.parametrize(
    ("original", "candidate", "why"),
    [
        # accepted in a bench run (judge 0.72): the 10 candles a pound makes are gone, "$10.00"
        # stood in for them
        (
            CHARLIE,
            "What is Charlie's net profit if he makes and sells 20 candles by selling beeswax "
            "candles for $2.00 each, considering his supply costs of $10.00 per pound of beeswax "
            "and wicks?",
            'missing "10"',
        ),
        (
            CHARLIE,
            "A pound of beeswax, which with wicks costs Charlie $10.00, makes 10 tapered candles. "
            "Selling each candle for $2.00, what net profit does he make on 20 candles?",
            None,
        ),
        # a count said in words (a helper's review)
        (
            "Two friends paid $2 each for the tickets. How much did they pay?",
            "A pair of friends each paid $2 for the tickets. How much did they pay?",
            None,
        ),
        (
            "Ann reads 3 books in 3 hours. How many books does she read per hour?",
            "Ann reads one book an hour for 3 hours. How many books does she read per hour?",
            None,
        ),
        # a number whose unit the original leaves to the reader may be said with it
        (
            "He worked 8 hours on Monday and 8 on Tuesday. How many hours did he work?",
            "He put in 8 hours on Monday and 8 hours on Tuesday. How many hours in all?",
            None,
        ),
        (
            "He worked 8 hours on Monday and 8 on Tuesday. How many hours did he work?",
            "He put in 8 hours on each of Monday and Tuesday. How many hours in all?",
            None,
        ),
    ],
)
def test_a_count_said_only_as_the_amount_beside_it(
    original: str, candidate: str, why: str | None
) -> None:
    assert quantity_difference(original, candidate) == why


MCBEAL = (
    "What is the surname of the psychiatrist who prescribes medication for Marie Hanson for her "
    "periodic blackouts in Season 1, Episode 20 of Ally McBeal?"
)


@pytest.mark.parametrize(
    ("candidate", "why"),
    [
        # accepted in a bench run: which season's episode 20?
        (
            "What is the psychiatrist's surname when he prescribes medication for Marie Hanson in "
            "the 20th episode of Ally McBeal?",
            'missing "1"',
        ),
        (
            "In the first season of Ally McBeal, episode 20, what is the surname of the "
            "psychiatrist prescribing medication for Marie Hanson for her periodic blackouts?",
            None,
        ),
        (
            "In season one, episode 20 of Ally McBeal, what is the surname of the psychiatrist "
            "prescribing Marie Hanson medication for her periodic blackouts?",
            None,
        ),
    ],
)
def test_the_1_of_a_numbered_season_must_reappear(candidate: str, why: str | None) -> None:
    assert quantity_difference(MCBEAL, candidate) == why


def test_a_1_elsewhere_may_be_said_as_a() -> None:
    assert (
        quantity_difference("He buys 1 apple and 3 pears.", "He buys an apple and 3 pears.") is None
    )


BILLY = (
    "Billy sells DVDs. He has 8 customers on Tuesday. His first 3 customers buy one DVD each.  "
    "His next 2 customers buy 2 DVDs each.  His last 3 customers don't buy any DVDs. How many "
    "DVDs did Billy sell on Tuesday?"
)


@pytest.mark.parametrize(
    ("candidate", "why"),
    [
        # accepted in a bench run (judge P(YES) 0.76): what each customer bought is gone
        (
            "On Tuesday, Billy had 8 customers. He sold DVDs to the first 3, then to the next 2, "
            "and finally to the last 3. How many DVDs did he sell?",
            "writes 2 once where the original writes it twice, each time for another thing "
            "(2 customers / 2 dvds)",
        ),
        # every count kept, in words or digits
        (
            "How many DVDs did Billy sell on Tuesday, considering he has 8 customers, with the "
            "first three customers buying one DVD each, the next two buying two DVDs each, and "
            "the last three not buying any DVDs?",
            None,
        ),
    ],
)
def test_a_count_written_for_two_things_must_stay_with_both(
    candidate: str, why: str | None
) -> None:
    assert count_dropped(BILLY, candidate) == why
    if why:
        assert why in (quantity_difference(BILLY, candidate) or "")


@pytest.mark.parametrize(
    ("original", "candidate"),
    [
        # a review's faithful rewordings: the same number said again without writing it
        (
            "Tom has 3 dogs and 3 cats. How many pets?",
            "Tom has 3 dogs and as many cats. How many pets?",
        ),
        (
            "Jane buys 4 shirts and 4 pants. How many items?",
            "Jane buys 4 shirts and the same number of pants. How many items does she buy?",
        ),
        (
            "His next 2 customers buy 2 DVDs each. How many DVDs?",
            "His next 2 customers buy a pair of DVDs each. How many DVDs did they buy?",
        ),
        # a number followed by "and" counts nothing it is read for
        (
            "She won in 1990 and in 1990 she also won Best Director. How many awards in 1990?",
            "At the 1990 Academy Awards she won twice, once as Best Director. How many awards?",
        ),
    ],
)
def test_a_count_said_again_in_other_words_passes(original: str, candidate: str) -> None:
    assert count_dropped(original, candidate) is None


def test_a_number_written_twice_for_one_thing_or_as_an_ordinal_may_be_written_once() -> None:
    # "the first 3 customers ... the last 3 customers": one thing counted twice
    assert count_dropped(BILLY, BILLY.replace("His last 3 customers", "The rest")) is None
    # the ordinal "second" said as "the following day" (GSM-Plus, labelled faithful)
    original = "On the first day they used 2 boxes. On the second day they used 5 boxes."
    candidate = "They used 2 boxes the first day and 5 boxes the following day."
    assert count_dropped(original, candidate) is None


TERRY = (
    "Terry eats 2 yogurts a day.  They are currently on sale at 4 yogurts for $5.00.  How much "
    "does he spend on yogurt over 30 days?"
)


@pytest.mark.parametrize(
    ("candidate", "why"),
    [
        # accepted in a bench run (judge P(YES) 0.72): $0.80 a yogurt, not $1.25
        (
            "How much money does Terry spend on yogurt for 30 days if he consumes 2 yogurts per "
            "day and they are on sale for $4 per 5?",
            "swaps an amount of money and a count: $4 where the original says $5",
        ),
        (
            "Over the next 30 days, if Terry consumes 2 yogurts per day and they are on sale for "
            "$5.00 per 4 yogurts, what will his total expenditure on yogurt be?",
            None,
        ),
    ],
)
def test_money_and_a_count_swapped_are_refused(candidate: str, why: str | None) -> None:
    assert money_swapped_with_a_count(TERRY, candidate) == why
    if why:
        assert why in (quantity_difference(TERRY, candidate) or "")


@pytest.mark.parametrize(
    ("original", "candidate", "differs"),
    [
        # a bench run refused three such rewordings ("missing 3")
        (
            "On which day did the Hubble Telescope enter a partial safe mode following problems "
            "in its Wide Field Camera 3 instrument?",
            "On what day did the Hubble Telescope enter partial safe mode after problems in its "
            "WFC3 instrument?",
            False,
        ),
        (
            "When did the WFC-3 camera fail?",
            "On what date did the Wide Field Camera 3 fail?",
            False,
        ),
        # another number, or initials that are not the name's
        (
            "Which problems did the Wide Field Camera 3 have?",
            "Which problems did the WFC4 have?",
            True,
        ),
        (
            "Which problems did the Wide Field Camera 3 have?",
            "Which problems did the NASA3 have?",
            True,
        ),
    ],
)
def test_a_number_said_in_a_names_initials(original: str, candidate: str, differs: bool) -> None:
    assert (quantity_difference(original, candidate) is not None) == differs


@pytest.mark.parametrize(
    ("original", "candidate", "differs"),
    [
        # a labelled faithful factual rewording the numbers stage refused
        (
            "What happens if an earthworm is cut in half?",
            "What is the result of cutting an earthworm into two halves?",
            False,
        ),
        ("What happens if an earthworm is cut in half?", "What if it is cut in two?", False),
        (
            "What happens if an earthworm is cut in half?",
            "What happens if an earthworm is cut into two equal parts?",
            False,
        ),
        # two of the thing, or more parts, is another question
        (
            "What happens if an earthworm is cut in half?",
            "What happens if two earthworms are cut into halves?",
            True,
        ),
        (
            "What happens if an earthworm is cut in half?",
            "What happens if an earthworm is cut into two worms?",
            True,
        ),
        (
            "What happens if an earthworm is cut in half?",
            "What happens if an earthworm is cut into three pieces?",
            True,
        ),
    ],
)
def test_cut_in_half_said_as_two_halves(original: str, candidate: str, differs: bool) -> None:
    assert (quantity_difference(original, candidate) is not None) == differs


@pytest.mark.parametrize(
    ("original", "candidate", "differs"),
    [
        # a labelled faithful GSM-Plus rewording the numbers stage refused ("added third")
        (
            "He'd dumped a lego set with 500 pieces, and another one that had 3 times more "
            "pieces than the 500 piece one, and another one that had 1/4 the number of pieces.",
            "He had emptied a lego set containing 500 pieces, another set containing thrice the "
            "number of pieces, and a third set containing only a quarter of the pieces of the "
            "500-piece set.",
            False,
        ),
        (
            "Tom read a book on Monday and another book on Tuesday.",
            "Tom read a book on Monday and a second book on Tuesday.",
            False,
        ),
        # a place the original's "another"s do not reach, or no "another" given up for it
        (
            "Tom read a book on Monday and another book on Tuesday.",
            "Tom read a book on Monday and a third book on Tuesday.",
            True,
        ),
        ("Tom read a book on Monday.", "Tom read a second book on Monday.", True),
        (
            "Tom read a book on Monday and another book on Tuesday.",
            "Tom read a book on Monday, another book on Tuesday and a second one on Friday.",
            True,
        ),
    ],
)
def test_another_said_as_the_ordinal_it_stands_for(
    original: str, candidate: str, differs: bool
) -> None:
    assert (quantity_difference(original, candidate) is not None) == differs


@pytest.mark.parametrize(
    "candidate",
    [
        # a review's changes: "the second" picks one out; two ordinals for one "another"
        "A baker makes 12 cakes in the morning and 8 cakes in the afternoon. He sells half of "
        "the second batch. How many cakes are left?",
        "Amy has one cat that weighs 8 pounds and a second that weighs 10 pounds. How much does "
        "the second cat weigh?",
    ],
)
def test_an_ordinal_that_picks_one_out_is_no_another(candidate: str) -> None:
    original = {
        "A": "A baker makes 12 cakes in the morning and another 8 cakes in the afternoon. He sells "
        "half of all the cakes. How many cakes are left?",
        "Am": "Amy has one cat that weighs 8 pounds and another that weighs 10 pounds. How much "
        "do the cats weigh together?",
    }["Am" if candidate.startswith("Amy") else "A"]
    assert quantity_difference(original, candidate) is not None


JAN = (
    "Jan has three times the number of pets as Marcia. Marcia has two more pets than Cindy. If "
    "Cindy has four pets, how many total pets do the three have?"
)


@pytest.mark.parametrize(
    ("candidate", "differs"),
    [
        # refused four times in a bench run ("missing three"): the three named
        (
            "Jan owns three times as many pets as Marcia, and Marcia has two more pets than "
            "Cindy. If Cindy has four pets, how many pets do Jan, Marcia, and Cindy have together?",
            False,
        ),
        # two of them, or someone the story does not name, is another count
        (
            "Jan owns three times as many pets as Marcia, and Marcia has two more pets than "
            "Cindy. If Cindy has four pets, how many pets do Jan and Marcia have together?",
            True,
        ),
        (
            "Jan owns three times as many pets as Marcia, and Marcia has two more pets than "
            "Cindy. If Cindy has four pets, how many pets do Jan, Marcia, and Bob have together?",
            True,
        ),
    ],
)
def test_the_three_said_as_their_names(candidate: str, differs: bool) -> None:
    assert (quantity_difference(JAN, candidate) is not None) == differs
