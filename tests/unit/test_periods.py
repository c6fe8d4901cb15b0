"""What a number is counted per, said otherwise, is refused by quantity invariance: a rate per
another span of time ("$25 per week" as "$25 a month") and a number for each thing said of all
of them ("Each window is 35 inches wide" as "... 35 inches in width altogether")
(bench/equivalence/math_changes.jsonl, which the defaults accepted before this check)."""

from __future__ import annotations

import pytest

from steadfast.shared.quantities.invariance import quantity_difference
from steadfast.shared.quantities.periods import (
    alternation_changed,
    changed_period,
    dropped_period,
    narrowed_days,
    pooled_or_split,
    rate_moved_to_another_number,
    year_relation_changed,
)

MADELINE = (
    "Every month, Madeline has to buy food, treats, and medicine for her dog. Food costs $25 per "
    "week. Treats cost $20 per month. Medicine costs $100 per month. How much money does "
    "Madeline spend on her dog per year if there are 4 weeks in a month?"
)
LUKE = (
    "Luke is buying fabric for new curtains. There are five windows. Each window is 35 inches "
    "wide and Luke needs to buy fabric equal to 2 times the total width of the windows. How "
    "much fabric should he buy?"
)


@pytest.mark.parametrize(
    ("original", "candidate", "said"),
    [
        (
            MADELINE,
            "Madeline's dog needs food, treats and medicine, which she buys monthly. She pays $25 "
            "a month for food, $20 a month for treats and $100 a month for medicine. Assuming 4 "
            "weeks make up a month, what is her yearly spending on the dog?",
            "says 25 per month, not per week",
        ),
        (
            "A cup of mushrooms weighs 100 grams and has 3 grams of protein. If John eats 200 "
            "grams of mushrooms every day how many grams of protein does he get per week?",
            "A 100-gram cup of mushrooms has 3 grams of protein. John eats 200 grams of "
            "mushrooms each week. How many grams of protein does he get per week?",
            "says 200 per week, not per day",
        ),
        (
            "Jessica makes $2,000.00 a month. How much does she make in a year?",
            "Jessica earns $2,000.00 weekly. What does she earn in a year?",
            "says 2000 per week, not per month",
        ),
    ],
)
def test_a_rate_said_per_another_span_of_time_is_refused(
    original: str, candidate: str, said: str
) -> None:
    assert changed_period(original, candidate) == said
    difference = quantity_difference(original, candidate)
    assert difference is not None and said in difference


@pytest.mark.parametrize(
    ("original", "candidate"),
    [
        (
            MADELINE,
            "Madeline pays $25 weekly for dog food, $20 monthly for treats and $100 "
            "monthly for medicine. With 4 weeks in a month, what does she spend in a year?",
        ),
        ("Tim spends 6 hours each day at work.", "Every day, Tim spends 6 hours at work."),
        ("Jessica makes $2,000.00 a month.", "Jessica's monthly pay is $2,000.00."),
    ],
)
def test_a_rate_kept_or_said_elsewhere_passes(original: str, candidate: str) -> None:
    assert changed_period(original, candidate) is None


@pytest.mark.parametrize(
    ("original", "candidate", "said"),
    [
        (
            LUKE,
            "Luke needs curtain fabric for five windows, which measure 35 inches in width "
            "altogether. The fabric must be 2 times that total width. How much should he buy?",
            "says 35 for all together, not for each",
        ),
        (
            "The 3 boxes hold 12 apples altogether. How many apples are in 2 boxes?",
            "The 3 boxes hold 12 apples each. How many apples do 2 boxes hold?",
            "says 12 for each, not for all together",
        ),
    ],
)
def test_a_number_for_each_said_of_all_together_is_refused(
    original: str, candidate: str, said: str
) -> None:
    assert pooled_or_split(original, candidate) == said


@pytest.mark.parametrize(
    ("original", "candidate"),
    [
        (
            LUKE,
            "There are five windows, each 35 inches wide, and Luke needs fabric 2 times "
            "their total width. How much fabric does he need?",
        ),
        ("They sold a total of 40 TVs.", "Altogether, 40 TVs were sold."),
        ("Each pack has 6 cookies.", "There are 6 cookies in a pack."),
    ],
)
def test_each_or_together_kept_or_left_out_passes(original: str, candidate: str) -> None:
    assert pooled_or_split(original, candidate) is None


@pytest.mark.parametrize(
    ("original", "candidate", "word"),
    [
        (
            "Claire makes a 3 egg omelet every morning for breakfast. How many dozens of eggs "
            "will she eat in 4 weeks?",
            "Claire whips up a 3 egg omelet for breakfast each weekday morning. Within a 4-week "
            "span, what number of dozens of eggs does she consume?",
            "weekday",
        ),
        (
            "Jill and her friends watch 4 movies every Saturday. If they watch movies every "
            "weekend, how many movies can they watch in 4 weeks?",
            "Every Saturday Jill and her friends watch 4 movies. If they do this every other "
            "weekend, how many movies will they get through in 4 weeks?",
            "every other",
        ),
        (
            "John eats 200 grams of mushrooms every day. How many grams does he eat in 2 weeks?",
            "On weekends John eats 200 grams of mushrooms a day. How many grams in 2 weeks?",
            "weekend",
        ),
    ],
)
def test_days_narrowed_are_refused(original: str, candidate: str, word: str) -> None:
    assert narrowed_days(original, candidate) == f"says '{word}' where the original does not"
    difference = quantity_difference(original, candidate)
    assert difference is not None and word in difference


@pytest.mark.parametrize(
    ("original", "candidate"),
    [
        # the days named are the weekdays, or the weekend
        (
            "Peyton has a 1 hour class on Monday, Tuesday, Wednesday, Thursday and Friday. How "
            "many hours is that?",
            "Peyton has a 1 hour class every weekday. How many hours is that?",
        ),
        (
            "She sells 60 chairs on Saturday and 60 on Sunday.",
            "Over the weekend she sells 60 chairs each day.",
        ),
        # the days named in the plural or short
        ("Amy works 6 hours on Saturdays and Sundays.", "Amy works 6 hours on weekends."),
        ("Ben walks 2 miles Mondays through Fridays.", "Ben walks 2 miles on weekdays."),
        ("Kim runs 3 miles Mon-Fri.", "Kim runs 3 miles every weekday."),
        # the same in other words, or no span of time
        ("She waters the plants every second day.", "Every other day, she waters the plants."),
        ("He is paid $800 biweekly.", "He is paid $800 every other week."),
        (
            "Tom and Jerry trade 5 stamps with one another.",
            "Tom and Jerry trade 5 stamps with each other.",
        ),
        ("He takes a different road.", "He takes an alternate road."),
        # the original says it already
        (
            "During the weekdays, 60 chairs are rented each day.",
            "On weekdays she rents out 60 chairs per day.",
        ),
    ],
)
def test_days_kept_pass(original: str, candidate: str) -> None:
    assert narrowed_days(original, candidate) is None


GLASSES = (
    "Kylar went to the store to buy glasses for his new apartment. One glass costs $5, but every "
    "second glass costs only 60% of the price. Kylar wants to buy 16 glasses. How much does he "
    "need to pay for them?"
)


@pytest.mark.parametrize(
    ("original", "candidate", "why"),
    [
        # four of five accepted rewordings of a bench run: 15 glasses at 60%, not 8
        (
            GLASSES,
            "For 16 glasses, how much will Kylar pay if the first glass is $5 and each "
            "subsequent one is 60% of the first?",
            "drops 'every second glass': the original says it of every second one only",
        ),
        (
            GLASSES,
            "Please determine the total cost of 16 glasses when one costs $5 and the other costs "
            "60% of that.",
            "drops 'every second glass': the original says it of every second one only",
        ),
        # and the other way round
        (
            "Each pen costs $2. How much do 10 pens cost?",
            "Every other pen costs $2. How much do 10 pens cost?",
            "says 'every other pen' where the original says it of every one",
        ),
        # the same in other words
        (
            GLASSES,
            "Kylar needs 16 glasses; one costs $5 and every other glass costs 60% of that price. "
            "How much does he pay?",
            None,
        ),
        (
            "She waters the plants every other day. How many times does she water them in 30 days?",
            "In 30 days, how many times does she water the plants if she does it on alternate "
            "days?",
            None,
        ),
        (
            "She waters the plants every other day. How many times does she water them in 30 days?",
            "How many times in 30 days does she water the plants, watering every 2 days?",
            None,
        ),
        # "second" the unit of time
        (
            "A ball falls 3 metres every second. How far does it fall in 10 seconds?",
            "Falling 3 metres each second, how far does a ball fall in 10 seconds?",
            None,
        ),
        ("A tap drips 3 drops every second it is open.", "A tap drips 3 drops per second.", None),
        # an interval, all the others, another name: no series taken one in two
        (
            "She takes a pill every 2 hours. How many pills does she take in 12 hours?",
            "Taking a pill once per 2 hours, how many pills does she take in 12 hours?",
            None,
        ),
        ("He is paid every two weeks.", "He is paid biweekly.", None),
        (
            "Jane scored 90 points and every other student scored 80. What is the average?",
            "Jane scored 90 points and all the other students scored 80. What is the average?",
            None,
        ),
        (
            "What is the alternate name of the Mandarin duck?",
            "What is another name for the Mandarin duck?",
            None,
        ),
    ],
)
def test_every_second_one_said_of_all(original: str, candidate: str, why: str | None) -> None:
    assert alternation_changed(original, candidate) == why
    if why:
        assert why in (quantity_difference(original, candidate) or "")


ICELAND = (
    "What is the name of the former Prime Minister of Iceland who worked as a cabin crew member "
    "until 1971?"
)


@pytest.mark.parametrize(
    ("original", "candidate", "why"),
    [
        # accepted in a bench run
        (
            ICELAND,
            "Who was the former Prime Minister of Iceland who served as a cabin crew member in "
            "1971?",
            "says 'in 1971' where the original says 'until 1971'",
        ),
        (
            "Who has been the CEO of Apple since 2011?",
            "Who was the CEO of Apple in the year 2011?",
            "says 'in 2011' where the original says 'since 2011'",
        ),
        # the same relation in other words
        (ICELAND, "Which former Icelandic Prime Minister was a flight attendant up to 1971?", None),
        (
            "Before 2013, what was the municipal division of Gusevsky District?",
            "Until 2013, what was the municipal division of Gusevsky District?",
            None,
        ),
        ("Who was the CEO of Apple in 2011?", "During 2011, who was Apple's CEO?", None),
        # a year written twice, or in a span, is left alone
        (
            "Who won in 2011 and again in 2011?",
            "Who won since 2011?",
            None,
        ),
        ("Who led the team from 2010-2014?", "Who led the team in 2010-2014?", None),
        ("Who led the team from 2010 \u2013 2014?", "Who led the team in 2010 \u2013 2014?", None),
        # a count, not a year; where a thing comes from; the same relation in other words
        ("The town grew by 1500 people.", "The town had a growth of 1500 people.", None),
        (
            "Who starred in the film from 1985 directed by Robert Zemeckis?",
            "Who starred in the Robert Zemeckis film released in 1985?",
            None,
        ),
        ("Who has been the CEO since 2011?", "Starting in 2011, who has been the CEO?", None),
        (
            ICELAND,
            "Which former Prime Minister of Iceland had a cabin crew job that ended in 1971?",
            None,
        ),
    ],
)
def test_a_year_related_otherwise_in_time(original: str, candidate: str, why: str | None) -> None:
    assert year_relation_changed(original, candidate) == why
    if why:
        assert why in (quantity_difference(original, candidate) or "")


CANDLE = (
    "A candle melts by 2 centimeters every hour that it burns. How many centimeters shorter will "
    "a candle be after burning from 1:00 PM to 5:00 PM?"
)


@pytest.mark.parametrize(
    ("candidate", "why"),
    [
        # accepted in a bench run (judge P(YES) 0.51): 2 centimeters once, by the end of an hour
        (
            "A candle burns 2 centimeters shorter by the end of an hour compared to its initial "
            "height. By what amount does the candle decrease by between 1:00 PM and 5:00 PM?",
            "drops the rate of 2 (per hour): says no 'every hour'",
        ),
        (
            "A candle is 2 centimeters shorter at the end of the hour. How many centimeters "
            "shorter is it after burning from 1:00 PM to 5:00 PM?",
            "drops the rate of 2 (per hour): says no 'every hour'",
        ),
        (
            "In the first hour a candle melts by 2 centimeters. How many centimeters shorter is it "
            "after burning from 1:00 PM to 5:00 PM?",
            "drops the rate of 2 (per hour): says no 'every hour'",
        ),
        # the rate said otherwise, or before its number
        (
            "A burning candle loses 2 centimeters an hour. How much shorter, in centimeters, "
            "is it after burning from 1:00 PM to 5:00 PM?",
            None,
        ),
        (
            "Each passing hour, a burning candle gets 2 centimeters shorter. How many "
            "centimeters shorter is it after burning from 1:00 PM to 5:00 PM?",
            None,
        ),
        (
            "A candle shrinks 2 cm/h while burning. How many centimeters shorter is it after "
            "burning from 1:00 PM to 5:00 PM?",
            None,
        ),
        (
            "A candle burns down hourly by 2 centimeters. How many centimeters shorter is it "
            "after burning from 1:00 PM to 5:00 PM?",
            None,
        ),
    ],
)
def test_a_rate_dropped_is_refused(candidate: str, why: str | None) -> None:
    assert dropped_period(CANDLE, candidate) == why
    if why:
        assert why in (quantity_difference(CANDLE, candidate) or "")


@pytest.mark.parametrize(
    ("original", "candidate"),
    [
        # "half an hour" is an amount, not a rate per hour; "every weekday" is per day
        (
            "Kris plays for half an hour every day for 2 weeks. How long does Kris play?",
            "For 2 weeks, Kris plays 30 minutes each day. How long does Kris play?",
        ),
        (
            "Judy teaches 5 dance classes, every day, on the weekdays. How many classes a week?",
            "Every weekday, Judy teaches 5 dance classes. How many classes does she teach a week?",
        ),
        # "a monthly interest" says per month
        (
            "Mandy owes $100 with an interest of 2% every month. How much after 3 months?",
            "Mandy owes $100 at a monthly interest of 2%. How much does she owe after 3 months?",
        ),
        # "at the end of each month" is a rate though "of" comes before it
        (
            "The number of students doubles at the end of every month. How many after 3 months?",
            "At the end of each month the students double. How many are there after 3 months?",
        ),
    ],
)
def test_a_rate_kept_in_other_words_passes(original: str, candidate: str) -> None:
    assert dropped_period(original, candidate) is None


@pytest.mark.parametrize(
    "candidate",
    [
        # a review's faithful rewordings, each a rate said otherwise
        "A car is driving at 60 mph. How far does it go in 3 hours?",
        "A car covers 60 miles in an hour. How far does it go in 3 hours?",
        "Hour by hour, a car goes 60 miles. How far does it go in 3 hours?",
        "A car goes 60 miles per hr. How far does it go in 3 hours?",
        "A car's speed is 60 miles/hour. How far does it go in 3 hours?",
    ],
)
def test_a_speed_said_otherwise_passes(candidate: str) -> None:
    original = "A car travels at 60 miles per hour. How far does it go in 3 hours?"
    assert dropped_period(original, candidate) is None


@pytest.mark.parametrize(
    ("original", "candidate"),
    [
        (
            "Tom can type 50 words per minute. How many words in 5 minutes?",
            "Tom's typing speed is 50 wpm. How many words can he type in 5 minutes?",
        ),
        (
            "A bank pays 5% interest per year. How much is $100 worth after 2 years?",
            "At an annual interest rate of 5%, what is $100 worth after 2 years?",
        ),
        (
            "A bank pays 5% interest per year. How much is $100 worth after 2 years?",
            "With 5% interest per annum, what is $100 worth after 2 years?",
        ),
        (
            "John eats 3 eggs every day. How many eggs does he eat in a week?",
            "John eats 3 eggs everyday. How many eggs does he eat in a week?",
        ),
        (
            "Jessica earns $15 an hour. How much does she earn in 8 hours?",
            "Jessica is paid $15 by the hour. How much does she earn in 8 hours?",
        ),
        (
            "Paul works 40 hours a week. How many hours does he work in 4 weeks?",
            "Paul works a 40-hour week. How many hours does he work in 4 weeks?",
        ),
        (
            "She works 8 hours a day. How many hours in 5 days?",
            "She works 8-hour days. How many hours does she work in 5 days?",
        ),
    ],
)
def test_a_rate_in_other_words_passes(original: str, candidate: str) -> None:
    assert dropped_period(original, candidate) is None


def test_a_rate_dropped_from_a_number_said_twice_is_refused() -> None:
    # accepted in a bench run: ".5 hours a day" split into two halves of an hour, once
    original = (
        "John takes care of 10 dogs.  Each dog takes .5 hours a day to walk and take care of "
        "their business.  How many hours a week does he spend taking care of dogs?"
    )
    candidate = (
        "If each dog takes 0.5 hours to walk and 0.5 hours to take care of business, how many "
        "hours in total does John spend taking care of his 10 dogs every week?"
    )
    assert (
        dropped_period(original, candidate)
        == "drops the rate of 1/2 (per day): says no 'every day'"
    )


@pytest.mark.parametrize(
    ("original", "candidate"),
    [
        # a review's faithful rewordings: the rate said as so many of a shorter span
        (
            "A truck travels 60 miles an hour. How far does it go in 5 hours?",
            "A truck goes 60 miles every 60 minutes. How far does it go in 5 hours?",
        ),
        (
            "A shop sells 12 hats a month. How many hats does it sell in a year?",
            "A shop sells 12 hats in each of the 12 months of a year. How many hats in a year?",
        ),
        (
            "John reads 7 pages a day. How many pages does he read in a week?",
            "John reads 7 pages on each of the 7 days of a week. How many pages in a week?",
        ),
    ],
)
def test_a_rate_said_as_so_many_shorter_spans_passes(original: str, candidate: str) -> None:
    assert dropped_period(original, candidate) is None


@pytest.mark.parametrize(
    ("original", "candidate"),
    [
        (
            "A shop sells 12 hats a month. How many hats in a year?",
            "A shop sells 12 hats in every one of the 12 months. How many hats in a year?",
        ),
        (
            "A machine fills 7 bottles a day. How many bottles in a week?",
            "Over a 7-day week, a machine fills 7 bottles on each of the days. How many bottles?",
        ),
        (
            "A machine makes 12 toys a minute. How many toys does it make in 5 minutes?",
            "A machine turns out 12 toys per 60 seconds. How many toys in 5 minutes?",
        ),
    ],
)
def test_a_rate_said_with_each_of_the_spans_passes(original: str, candidate: str) -> None:
    assert dropped_period(original, candidate) is None


ALEENA = (
    "Aleena subscribed to a streaming service that charges her $140 per month. If the streaming "
    "company charged her the initial amount for the first half of the year and then charged her "
    "10% less money on the other half of the year, calculate the total amount she had paid for "
    "the streaming service by the end of the year."
)


@pytest.mark.parametrize(
    ("candidate", "why"),
    [
        # both accepted in a bench run (judges 0.66 and 0.65): $140 for six months
        (
            "Aleena paid $140 for the streaming service initially in the first six months and "
            "then paid 10% less per month for the next six months. How much money did she pay "
            "in total by the end of the year?",
            "gives 'per month' to 10 instead of 140",
        ),
        (
            "Aleena began her streaming subscription with $140 for the first six months and then "
            "paid 10% less per month for the next six months. What was her total cost by the end "
            "of the year?",
            "gives 'per month' to 10 instead of 140",
        ),
        # the rate said before the amount, or kept with it
        (
            "Every month Aleena paid $140 for the first half of the year, then 10% less per month "
            "for the other half. How much did she pay in the year?",
            None,
        ),
        (
            "Aleena pays $140 a month, and 10% less a month for the other half of the year. What "
            "does she pay in total for the year?",
            None,
        ),
    ],
)
def test_a_rate_given_to_another_number(candidate: str, why: str | None) -> None:
    assert rate_moved_to_another_number(ALEENA, candidate) == why
    if why:
        assert why in (quantity_difference(ALEENA, candidate) or "")


def test_a_rate_said_after_a_span_of_time_stays() -> None:
    original = "Maria saves $5 a day. How much does she save in 2 weeks?"
    candidate = "How much will Maria save if she saves $5 for 2 weeks, putting it aside each day?"
    assert rate_moved_to_another_number(original, candidate) is None


def test_a_rate_both_numbers_have_stays() -> None:
    original = "A plan costs $140 per month and HD costs $10 per month. What is a year's cost?"
    candidate = "What does a year cost if the plan and HD are $140 and $10 per month?"
    assert rate_moved_to_another_number(original, candidate) is None


KELIAN = (
    "Kelian has two recipes for preparing dishes, one having 20 instructions and the second one "
    "having twice as many instructions as the first one. How many instructions does Kelian have "
    "to read to prepare the two dishes?"
)


@pytest.mark.parametrize(
    ("original", "candidate", "why"),
    [
        # accepted in a bench run (judge 0.84): 20 for each recipe, not for the first
        (
            KELIAN,
            "How many instructions does Kelian need to read to prepare both dishes, if each has "
            "20 instructions and the second one is twice as long?",
            "says 20 for each, not for one of them",
        ),
        # still one of them
        (
            KELIAN,
            "Kelian has two recipes: the first has 20 instructions and the second twice as many. "
            "How many instructions must he read for both dishes?",
            None,
        ),
        (
            KELIAN,
            "How many instructions must Kelian read for two dishes if one recipe has 20 "
            "instructions and the other has twice as many?",
            None,
        ),
        # one of them with no other beside it is a unit price (a helper's review)
        (
            "One ticket costs $20. How much do 5 tickets cost?",
            "Each ticket costs $20. What do 5 tickets cost?",
            None,
        ),
        # "each one" is each (a labelled faithful GSM-Plus rewording)
        (
            "Zoey's watermelon has 40 seeds and she spits each one 10 feet. How far in total?",
            "Zoey's watermelon contains 40 seeds, and she manages to spit each one a distance of "
            "10 feet. What is the total distance?",
            None,
        ),
    ],
)
def test_a_number_for_one_said_for_each(original: str, candidate: str, why: str | None) -> None:
    assert pooled_or_split(original, candidate) == why
