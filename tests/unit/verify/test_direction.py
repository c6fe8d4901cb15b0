"""The direction check (``services/verify/domain/direction.py``): a rewording asks for the same
end of a scale."""

from __future__ import annotations

import pytest

from steadfast.services.verify.domain.aggregates import asked_aggregates
from steadfast.services.verify.domain.direction import direction_difference
from steadfast.services.verify.domain.intent import intent_changed
from steadfast.services.verify.domain.pipeline import verify
from steadfast.shared.contracts.verify import VerifyRequest, VerifyStages


@pytest.mark.parametrize(
    ("original", "candidate", "turned"),
    [
        ("What is the largest ocean on Earth?", "Which of the oceans is the smallest?", "smallest"),
        ("Who is faster, a tortoise or a hare?", "Which is slower, a hare or a cat?", "slower"),
        ("When did production start?", "When did they stop producing it?", "stop"),
        ("In what year did she last visit Europe?", "When was her first trip to Europe?", "first"),
        ("Is MSG harmful in small doses?", "Are small doses of MSG safe?", "safe"),
        ("What happened before the war?", "What happened after the war?", "after"),
        # a word after "not" or "least" names the other end
        ("Which lumber is the cheapest?", "Which lumber is not cheap?", "not cheap"),
        ("Which is the least expensive?", "Which is the most expensive?", "expensive"),
        # what is left asked as what was spent or earned (bench/equivalence/math_changes.jsonl)
        (
            "Gerald works at a daycare that pays him $30 every day. He worked for an entire week "
            "and spent a total of $100. How much does he have left?",
            "Gerald is paid $30 each day at the daycare. After a whole week he had spent $100 in "
            "total. How much did he earn that week?",
            "earn",
        ),
        (
            "Carl buys ten packs of cookies at $0.10 a cookie. How much change does Carl "
            "receive if he pays with a $10 bill?",
            "Carl buys ten packs of cookies at $0.10 each. If he pays with a $10 bill, how much "
            "does he spend on the cookies?",
            "spend",
        ),
    ],
)
def test_a_turned_question_is_refused_naming_both_words(
    original: str, candidate: str, turned: str
) -> None:
    difference = direction_difference(original, candidate)
    assert difference is not None and f"asks '{turned}'" in difference


@pytest.mark.parametrize(
    ("original", "candidate"),
    [
        ("What is the largest ocean on Earth?", "Which ocean on Earth is the biggest?"),
        # what is left, in other words; a story's "spent" is not what is asked
        (
            "Dean had $28 and spent $17 on toys. How much money does Dean have left?",
            "Dean spent $17 of his $28 on toys. How much money remains for him?",
        ),
        (
            "What is the most he can make with the cheapest lumber?",
            "What is the most he can make with the least expensive lumber?",
        ),
        ("When did World War II end?", "In which year did World War II finish?"),
        # a word dropped, or both ends kept: left to the other checks
        ("What is the largest ocean?", "Name the ocean that covers the most area."),
        ("Is it larger or smaller than Mars?", "Compared with Mars, is it smaller or larger?"),
        # only the asking sentence counts: a story may name either end
        (
            "He starts buying 2 games a month. How many games does he have after 3 years?",
            "He buys 2 games a month from then on. How many games has he at the end of year 3?",
        ),
        ("What is the capital of France?", "Which city is the capital of France?"),
    ],
)
def test_a_faithful_rewording_passes(original: str, candidate: str) -> None:
    assert direction_difference(original, candidate) is None


BOILING = "At what temperature in degrees Celsius does water boil at sea level?"


@pytest.mark.parametrize(
    ("candidate", "why"),
    [
        # accepted in several demo runs: it asks how hot water is, not when it boils
        (
            "How hot is water at sea level in degrees Celsius?",
            "drops 'boil': the original asks about it",
        ),
        (
            "What is the freezing point of water at sea level in degrees Celsius?",
            "drops 'boil': the original asks about it",
        ),
        ("How hot is water at sea level in Celsius when it boils?", None),
        ("What's the boiling point of water at sea level in Celsius?", None),
        ("In degrees Celsius, what is water's boiling temperature at sea level?", None),
    ],
)
def test_a_change_of_state_dropped_is_refused(candidate: str, why: str | None) -> None:
    assert direction_difference(BOILING, candidate) == why


@pytest.mark.parametrize(
    ("candidate", "why"),
    [
        # accepted in a demo run (the model answered it "Sydney")
        (
            "What is the main city in Australia?",
            "asks 'main city' where the original asks 'capital'",
        ),
        (
            "What is the largest city in Australia?",
            "asks 'largest city' where the original asks 'capital'",
        ),
        # accepted in a demo run: any city but the capital
        (
            "Tell me the name of the big city in Australia.",
            "asks a city without 'capital' where the original asks the capital",
        ),
        # accepted in an experiment run
        (
            "What is the primary city in Australia?",
            "asks 'primary city' where the original asks 'capital'",
        ),
        ("Which city is the capital of Australia?", None),
        ("Which city is the seat of government of Australia?", None),
        ("Name Australia's capital.", None),
        # the capital still asked: left to the other checks
        ("Which city is Australia's capital, not its largest city?", None),
    ],
)
def test_a_capital_asked_as_the_largest_or_main_city_is_refused(
    candidate: str, why: str | None
) -> None:
    assert direction_difference("What is the capital city of Australia?", candidate) == why


@pytest.mark.parametrize(
    ("original", "candidate", "why"),
    [
        # accepted in a bench run (TruthfulQA, judge P(YES) 0.71)
        (
            "What is the spiciest part of a chili pepper?",
            "Which part of a chili pepper has the strongest flavor?",
            "asks 'strongest' where the original asks 'spiciest'",
        ),
        (
            "What is the largest planet in the Solar System?",
            "Which planet in the Solar System is the most massive?",
            "asks 'most massive' where the original asks 'largest'",
        ),
        (
            "What is the longest river in Africa?",
            "Which African river carries the greatest volume?",
            "asks 'greatest' where the original asks 'longest'",
        ),
        (
            "Who is the oldest person alive?",
            "Who is the richest person alive?",
            "asks 'richest' where the original asks 'oldest'",
        ),
        # the same scale, its noun, or a scale whose end says the same
        ("What is the spiciest part of a chili pepper?", "Which part of a chili is hottest?", None),
        (
            "What is the spiciest part of a chili pepper?",
            "Which part of a chili pepper is the most hot?",
            None,
        ),
        (
            "What is the longest river in Africa?",
            "Which African river has the greatest length?",
            None,
        ),
        ("What is the deepest point of the ocean?", "What is the lowest point of the ocean?", None),
        ("What is the largest planet?", "Which planet is the biggest?", None),
        # no superlative asked: nothing to keep
        ("Why are chili peppers spicy?", "Why do chili peppers have the strongest taste?", None),
    ],
)
def test_the_extreme_of_another_scale_is_refused(
    original: str, candidate: str, why: str | None
) -> None:
    assert direction_difference(original, candidate) == why


@pytest.mark.parametrize(
    ("original", "candidate", "why"),
    [
        # accepted in a demo run: mass is not size (Jupiter is both, a near miss need not be)
        (
            "What is the largest planet in the Solar System?",
            "What is the most massive planet in our solar system?",
            "asks 'most massive' where the original asks 'largest'",
        ),
        (
            "Which is the biggest animal alive?",
            "Which living animal is the heaviest?",
            "asks 'heaviest' where the original asks 'biggest'",
        ),
        (
            "What is the largest city in Australia?",
            "Which Australian city is the most populous?",
            None,
        ),
        (
            "What is the largest planet in the Solar System?",
            "Which planet in the Solar System has the greatest diameter?",
            None,
        ),
        ("What is the largest planet?", "Which planet is the biggest?", None),
        # accepted in a demo run: gold is an element, its symbol is Au
        (
            "What is the chemical symbol for gold?",
            "What is the chemical element of gold?",
            "asks 'element of' where the original asks 'symbol'",
        ),
        (
            "What is the chemical symbol for gold?",
            "What is the one- or two-letter abbreviation for the element gold?",
            None,
        ),
        ("What is the heaviest planet?", "Which planet is the most massive?", None),
    ],
)
def test_size_asked_as_mass_is_refused(original: str, candidate: str, why: str) -> None:
    assert direction_difference(original, candidate) == why


ROLE_TURNED = [
    # accepted in a demo run: it asks whom the painter painted
    (
        "Who painted the Mona Lisa?",
        "Who did the Mona Lisa's creator paint?",
        "asks whom someone painted where the original asks who painted",
    ),
    (
        "Who wrote the play Romeo and Juliet?",
        "Who did Shakespeare write?",
        "asks whom someone wrote where the original asks who wrote",
    ),
    # accepted in a demo run, answered "Romeo and Juliet" and counted as a conflict
    (
        "Who wrote the play Romeo and Juliet?",
        "What did the author of Romeo and Juliet write?",
        "asks what someone wrote where the original asks who wrote",
    ),
    ("Who wrote the play Romeo and Juliet?", "What writer did write Romeo and Juliet?", None),
    # accepted in a demo run (judge 0.82): the deed bare after a doer, its object still behind
    (
        "Who wrote the play Romeo and Juliet?",
        "Who did the author write Romeo and Juliet?",
        "turns the question round ('did ... write'): the original asks who wrote",
    ),
    (
        "Who painted the Mona Lisa?",
        "Who did the creator paint the Mona Lisa as?",
        "turns the question round ('did ... paint'): the original asks who painted",
    ),
    # the deed in its own form after "did they say": still asks who did it
    ("Who wrote the play Romeo and Juliet?", "Who did they say wrote Romeo and Juliet?", None),
    # who did it, asked in other words
    ("Who painted the Mona Lisa?", "Who did paint the Mona Lisa?", None),
    ("Who painted the Mona Lisa?", "Who did the painting of the Mona Lisa?", None),
    ("Who painted the Mona Lisa?", "The Mona Lisa was painted by whom?", None),
    ("Who painted the Mona Lisa?", "Whose work is the Mona Lisa?", None),
    # an original that asks no deed ("Who is ...") is not refused for this, but the candidate
    # drops what the question is about
    (
        "Who is the author of Hamlet?",
        "Who did the author write?",
        "drops 'Hamlet': the original asks about it",
    ),
]


async def test_the_stage_refuses_before_the_costly_ones_and_can_be_turned_off() -> None:
    request = VerifyRequest(
        original="What is the largest planet in the Solar System?",
        candidates=["Which planet in the Solar System is the tiniest?"],
        stages=VerifyStages(judge=False, semantic="off"),
    )
    checked = await verify(request, judge=None, semantic=None)
    (verdict,) = checked.results
    assert not verdict.accepted and verdict.deciding_stage == "direction"
    assert "direction" in checked.stages_run and "'tiniest'" in (verdict.reason or "")
    off = request.__class__(
        original=request.original,
        candidates=request.candidates,
        stages=VerifyStages(direction=False, judge=False, semantic="off"),
    )
    unchecked = await verify(off, judge=None, semantic=None)
    assert unchecked.results[0].accepted and "direction" not in unchecked.stages_run


GRETCHEN = (
    "Gretchen has 110 coins. There are 30 more gold coins than silver coins. How many gold coins "
    "does Gretchen have?"
)


COUNTS = [
    # accepted in a demo run (judge and cosine passed it): it asks for all her coins
    (
        GRETCHEN,
        "What is the total number of coins Gretchen has, given that there are 30 more gold "
        "coins than silver coins and she has a total of 110 coins?",
        "counts 'coins' without 'gold': the original asks how many gold coins",
    ),
    (
        "Two thirds of the Scottish unicorns are female. How many female Scottish unicorns "
        "are there?",
        "Two thirds of the Scottish unicorns are female. How many unicorns are there?",
        "counts 'unicorns' without 'female scottish': the original asks how many female "
        "scottish unicorns",
    ),
    # accepted in a demo run (judge 0.70 at the maths threshold 0.50): a sum of both kinds
    (
        GRETCHEN,
        "What is the sum of gold and silver coins, given that Gretchen has 110 coins and 30 "
        "more gold than silver?",
        "counts 'gold and silver coins' where the original asks how many gold coins",
    ),
    (
        "How many red marbles does Tom have?",
        "What is the total of red and blue marbles Tom owns?",
        "counts 'red and blue marbles' where the original asks how many red marbles",
    ),
    # parts of a total the original asks for, or both things asked already
    ("How many apples and pears does Tom have?", "What is the sum of apples and pears?", None),
    (
        "Gretchen has 10 gold coins and 5 silver coins. How many coins does she have?",
        "Gretchen has 10 gold coins and 5 silver coins. What is the sum of gold and silver "
        "coins she has?",
        None,
    ),
    # the original's things in other words, or the other thing left out
    ("How many gold coins does she have?", "How many gold pieces or coins does she have?", None),
    ("How many gold coins does she have?", "How many gold and not silver coins has she?", None),
    ("How many fruits do they have in total?", "What is the sum of apples and fruits?", None),
    (GRETCHEN, "If she has 110 coins and 30 more gold than silver, how many gold coins?", None),
    # the same thing counted in other words
    (GRETCHEN, "Tell me the number of gold coins Gretchen owns, with 110 coins in all.", None),
    (GRETCHEN, "She has 110 coins, 30 more gold than silver: how many of them are gold?", None),
    (GRETCHEN, "How many coins of gold does Gretchen own?", None),
    (GRETCHEN, "Could you work out Gretchen's gold coins?", None),  # counts nothing: undecided
    # a unit's contents may be said otherwise; a unit in other words is left undecided
    ("How many bottles of water does he drink?", "How many water bottles does he drink?", None),
    ("How many skeins of wool will she buy?", "What number of skeins will she buy?", None),
    ("How many pans worth of cupcakes?", "How many trays of cupcakes will she bake?", None),
    # a number and the unit written with it are the numbers check's business
    (
        "How many 30-minute episodes did he watch?",
        "How many half-hour episodes did he watch?",
        None,
    ),
    (
        "How many total action figures will he have?",
        "The total number of action figures?",
        None,
    ),
    ("How many of the cards had a D?", "How many cards had a D on them?", None),
]


TOPICS = [
    # accepted in a demo run: "the precious metal" may be silver
    (
        "What is the chemical symbol for gold?",
        "What is the chemical symbol of the precious metal?",
        "drops 'gold': the original asks about it",
    ),
    (
        "What color is the sun when viewed from space?",
        "When viewed from the Earth at sunset, what colour is the sun?",
        "drops 'space': the original asks about it",
    ),
    # a form of the word keeps it
    (
        "What is the chemical symbol for gold?",
        "What's gold's symbol on the periodic table?",
        None,
    ),
    ("What is the longest river in africa?", "Which African river is the longest?", None),
    ("Do bears usually sit on chairs?", "Is it common for a bear to sit on a chair?", None),
    # the phrase may be a place, a name or several words, and comes after the last preposition
    (
        "Who painted the Mona Lisa in Paris?",
        "Who made the Mona Lisa?",
        "drops 'Paris': the original asks about it",
    ),
    (
        "At what temperature in degrees Celsius does water boil at sea level?",
        "What is the boiling temperature of water in Celsius?",
        "drops 'sea level': the original asks about it",
    ),
    (
        "What is the largest planet in the Solar System?",
        "Determine which planet is the largest.",
        "drops 'Solar System': the original asks about it",
    ),
    (
        "Has MSG been scientifically proven to be harmful to humans in small doses?",
        "Has science proven that MSG is harmful to people?",
        "drops 'small doses': the original asks about it",
    ),
    (
        "What is the capital city of Australia?",
        "What city serves as the capital?",
        "drops 'Australia': the original asks about it",
    ),
    # kept: as a name's initials, a word it is often put as, or in another form
    ("Who is the president of the United States?", "Who is the U.S. president?", None),
    (
        "Who was the first president of the United States?",
        "Who was the first U.S.A. president?",
        None,
    ),
    (
        "Who was the first president of the United States?",
        "Who was America's first president?",
        None,
    ),
    ("Who is the monarch of the United Kingdom?", "Who is the monarch of Britain?", None),
    ("How fast does light travel in a vacuum?", "How fast does light travel in empty space?", None),
    # "us" the pronoun is no initials
    (
        "Who was the first president of the United States?",
        "Tell us who the first president was.",
        "drops 'United States': the original asks about it",
    ),
    # the unit an answer is asked in is the numbers check's
    ("How tall is the tower in metres?", "How tall is the tower in meters?", None),
    ("How far is the moon in kilometres?", "How far away is the moon in km?", None),
    (
        "How many dragons are left in the world?",
        "What number of dragons still survive on Earth?",
        None,
    ),
    (
        "What is the largest planet in the Solar System?",
        "Which solar-system planet is largest?",
        None,
    ),
    # not read: a word that is no topic, a question of several sentences or long
    ("How much did he spend in all?", "What did he spend altogether?", None),
    ("He sold 3. What is the price of gold?", "He sold 3. What does silver cost?", None),
    (
        "What is the name of the very first element the textbook of my school lists in the table?",
        "Which element is listed first?",
        None,
    ),
]


OTHER_THINGS = [
    # the issue's example, and accepted again in a demo run
    (
        "What is the chemical symbol for gold?",
        "What does gold's symbol stand for?",
        "asks what something stands for or means, which the original does not",
    ),
    # accepted in a demo run
    (
        "What is the largest planet in the Solar System?",
        "Determine the size of the largest planet in our solar system.",
        "asks how big something is, which the original does not",
    ),
    # accepted in an experiment run: whom the painting shows, not who painted it
    (
        "Who painted the Mona Lisa?",
        'What artist did the famous painting "The Mona Lisa" depict?',
        "asks what a work shows, which the original does not",
    ),
    ("Who painted the Mona Lisa?", "Which artist created the Mona Lisa?", None),
    # accepted in an experiment run (judge 0.73): whose work the play tells of
    (
        "Who wrote the play Romeo and Juliet?",
        "Whose work is it that is described in Romeo and Juliet?",
        "asks what a work shows, which the original does not",
    ),
    ("Who wrote the play Romeo and Juliet?", "Whose work is the play Romeo and Juliet?", None),
    # an actor portrays a role: no work's maker was asked
    ("Who played James Bond in Dr. No?", "Which actor portrayed James Bond in Dr. No?", None),
    # the thing itself, asked in other words
    ("What is the chemical symbol for gold?", "Which symbol stands for gold?", None),
    ("What is the chemical symbol for gold?", "What is gold's symbol as an element?", None),
    ("What is the chemical symbol for gold?", "What symbol represents gold?", None),
    # accepted in a demo run (judge 0.71): what the symbol denotes, not which it is
    (
        "What is the chemical symbol for gold?",
        "What does the symbol denote for gold?",
        "asks what something stands for or means, which the original does not",
    ),
    ("What is the chemical symbol for gold?", "What is the symbol used to denote gold?", None),
    ("What does DNA stand for?", "What do the letters DNA stand for?", None),
    # accepted in a demo run: where the capital is, not which city it is
    (
        "What is the capital city of Australia?",
        "Where is the capital of Australia located?",
        "asks where the capital city is, where the original asks which it is",
    ),
    (
        "What is the capital city of Australia?",
        "Can you tell me where the capital of Australia is?",
        "asks where the capital city is, where the original asks which it is",
    ),
    (
        "What is the largest planet in the Solar System?",
        "What is the location of the largest planet in the Solar System?",
        "asks where the largest planet is, where the original asks which it is",
    ),
    # a place asked for in other words, or where within a thing
    ("In what country was Barack Obama born?", "Where was Barack Obama born?", None),
    ("Which city hosted the 2000 Olympics?", "Where were the 2000 Olympics held?", None),
    (
        "What is the spiciest part of a chili pepper?",
        "Where in a chili pepper is the heat most concentrated?",
        None,
    ),
]


@pytest.mark.parametrize(
    ("original", "candidate", "why"), ROLE_TURNED + COUNTS + TOPICS + OTHER_THINGS
)
def test_a_rewording_that_asks_another_thing_is_refused(
    original: str, candidate: str, why: str | None
) -> None:
    """Who did a deed turned into whom it was done to, a count of another thing, what a short
    question asks about dropped, what a thing means, how big it is or where it is asked in its
    place."""
    assert direction_difference(original, candidate) == why


@pytest.mark.parametrize(
    ("original", "candidate", "reason"),
    [
        # labelled meaning changes the judge passed at 0.86
        (
            'What does Darth Vader say to Luke in "The Empire Strikes Back"?',
            'Luke\'s words to Darth Vader in "The Empire Strikes Back" — what are they?',
            "turns round who is addressed ('to Darth Vader' where the original says 'to Luke')",
        ),
        (
            "What did Daemon Targaryen say to Rhaenyra about living life in fear?",
            "Which remark about living in fear did Rhaenyra make to Daemon Targaryen?",
            "turns round who is addressed ('to Daemon Targaryen' where the original says 'to "
            "Rhaenyra')",
        ),
        # a title's full stop stays in the name; a question word before a name is no name
        (
            "What did Mr. Darcy say to Mr. Bingley?",
            "What did Mr. Bingley say to Mr. Darcy?",
            "turns round who is addressed ('to Mr. Darcy' where the original says 'to Mr. "
            "Bingley')",
        ),
        (
            "Did Darth Vader say to Luke that he was his father?",
            "Did Luke say to Darth Vader that he was his father?",
            "turns round who is addressed ('to Darth Vader' where the original says 'to Luke')",
        ),
        # a route, a relation that holds both ways, a source: no addressee
        ("What is the distance from London to Paris?", "How far is it from Paris to London?", None),
        (
            "When was Henry VIII married to Anne Boleyn?",
            "When was Anne Boleyn married to Henry VIII?",
            None,
        ),
        ("How similar is Spanish to Italian?", "How similar is Italian to Spanish?", None),
        (
            "What did Vader say to Luke on Bespin?",
            "What did Vader tell Luke on Bespin, according to Vader himself?",
            None,
        ),
        # a story whose "to"s go both ways already
        (
            "Tom gives 3 apples to Anna, and Anna gives 1 apple back to Tom. How many apples "
            "does Anna have now?",
            "After Tom hands Anna 3 apples, Anna gives 1 apple back to Tom. How many apples "
            "does Anna have now?",
            None,
        ),
        # the addressee kept, in any order of the sentence
        ("What did Lincoln write to Grant?", "What was written to Grant by Lincoln?", None),
        ("What did Lincoln write to Grant?", "What did Grant receive from Lincoln?", None),
        # no other name of the original is the candidate's addressee
        ("Who sent a letter to Obama?", "To whom did Obama write?", None),
        ("What did Lincoln write to Grant?", "What did Lincoln write to his wife?", None),
    ],
)
def test_who_is_addressed_may_not_be_turned_round(
    original: str, candidate: str, reason: str | None
) -> None:
    assert direction_difference(original, candidate) == reason


WHAT_FOR = "asks 'what ... for': what something is for, which the original does not ask"


@pytest.mark.parametrize(
    ("original", "candidate", "why"),
    [
        # accepted in a demo run at judge 0.86
        (
            "Who painted the Mona Lisa?",
            'What did the famous painting "The Mona Lisa" have a creator for?',
            WHAT_FOR,
        ),
        # asks what the painting is famous for
        ("Who painted the Mona Lisa?", "What is the Mona Lisa famous for?", WHAT_FOR),
        # the original asks with "for", or asks what it is for, already
        ("For which prize was she nominated?", "What prize was she nominated for?", None),
        ("Which award was she nominated for?", "What award did they nominate her for?", None),
        ("What is the purpose of Area 51?", "What is Area 51 used for?", None),
        ("Why is Paris famous?", "What is Paris famous for?", None),
        # "for" inside the question, not at its end
        ("What is the chemical symbol for gold?", "What symbol stands for gold?", None),
    ],
)
def test_a_question_turned_into_what_something_is_for_is_refused(
    original: str, candidate: str, why: str | None
) -> None:
    assert direction_difference(original, candidate) == why


@pytest.mark.parametrize(
    ("original", "candidate", "why"),
    [
        # accepted in a demo run of 2026-12-06 (judge 0.79) and answered "Australia"
        (
            "What is the capital city of Australia?",
            "Which country has a capital city in Australia?",
            "asks which country, where the original asks for the capital city",
        ),
        # accepted in a demo run of 2026-12-07 (judge 0.87): a kind asked before a comma
        (
            "What is the capital city of Australia?",
            "Which country, called Australia, has a capital city?",
            "asks which country, where the original asks for the capital city",
        ),
        (
            "what is the currency of japan",
            "Which city is Japan's capital?",
            "asks which city, where the original asks for the currency",
        ),
        # accepted in a demo run of 2026-12-06 (judge 0.70) and answered "G"
        (
            "What is the chemical symbol for gold?",
            "Which letter is used to represent gold in the chemical symbol system?",
            "asks which letter, where the original asks for the chemical symbol",
        ),
    ],
)
def test_another_kind_of_thing_asked_is_refused(original: str, candidate: str, why: str) -> None:
    assert direction_difference(original, candidate) == why


@pytest.mark.parametrize(
    ("original", "candidate"),
    [
        # one kind in other words: a capital is a city
        ("What is the capital of Australia?", "Which city is the capital of Australia?"),
        ("What is the capital city of Australia?", "Which Australian city is the capital?"),
        (
            "What is the largest planet in the Solar System?",
            "Which planet in our solar system is the largest?",
        ),
        (
            "What is the chemical symbol for gold?",
            "Which symbol is used to show gold in chemistry?",
        ),
        # a kind the table does not know is left to the other checks
        (
            "What are the benefits of eating an apple a day?",
            "What good does eating one apple every day do for you?",
        ),
    ],
)
def test_the_same_kind_asked_passes(original: str, candidate: str) -> None:
    assert direction_difference(original, candidate) is None


@pytest.mark.parametrize(
    "candidate",
    [
        # refused in a demo run for dropping "boil": the courtesy question was read as the ask
        "What is the boiling point of water at sea level in Celsius? Could you tell me?",
        "At what temperature in Celsius does water boil at sea level? Could you please let me "
        "know?",
    ],
)
def test_a_courtesy_question_after_the_question_is_not_what_it_asks(candidate: str) -> None:
    original = "At what temperature in degrees Celsius does water boil at sea level?"
    assert direction_difference(original, candidate) is None


def test_a_question_after_a_courtesy_one_is_still_read() -> None:
    original = "At what temperature in degrees Celsius does water boil at sea level?"
    candidate = "Could you tell me? What is the temperature of water at sea level in Celsius?"
    assert direction_difference(original, candidate) == "drops 'boil': the original asks about it"


GRAVEL = (
    "Gissela, Gordy, and Gary are truck drivers. Gissela has a truck large enough to haul 4,000 "
    "pounds of gravel. Gordy's truck can haul 800 pounds more than Gissela's truck. The three "
    "trucks combined can haul 11,600 pounds. How many pounds of gravel can Gary's truck carry?"
)


@pytest.mark.parametrize(
    ("original", "candidate", "why"),
    [
        (
            GRAVEL,
            "Gissela, Gordy and Gary drive trucks. Gissela's truck carries 4,000 pounds of "
            "gravel, Gordy's 800 pounds more, and the three together 11,600 pounds. What is the "
            "capacity of Gordy's truck in pounds?",
            "asks about gordy where the original asks about gary",
        ),
        (
            "Erin had 10 points and Sara 12. Erin then lost 3 points. How many points did Erin "
            "have before?",
            "Erin had 10 points and Sara 12. Erin then lost 3 points. How many points does Sara "
            "have?",
            "asks about sara where the original asks about erin",
        ),
        # a pronoun does not save another person asked by name
        (
            GRAVEL,
            "Gissela, Gordy and Gary drive trucks. How many pounds of gravel can Gordy carry in "
            "his truck?",
            "asks about gordy where the original asks about gary",
        ),
    ],
)
def test_a_story_asked_about_another_of_its_people_is_refused(
    original: str, candidate: str, why: str
) -> None:
    assert direction_difference(original, candidate) == why


@pytest.mark.parametrize(
    ("original", "candidate"),
    [
        # the same person, or nobody by name
        (GRAVEL, "Gissela, Gordy and Gary drive trucks. How much can Gary's truck haul?"),
        (GRAVEL, "Three drivers share 11,600 pounds. How much can the third driver's carry?"),
        # a pronoun may stand for the person asked about
        (
            "Jack had $100. Sophia gave him 1/5 of her $100. How many dollars does Jack have now?",
            "Jack started with $100. After Sophia's gift, how many dollars does he have?",
        ),
        # days, months and abbreviations are not people
        (
            "Bruce works 5 hours on Tuesday, twice that on Wednesday and 2 hours less on "
            "Thursday. How many hours does Bruce work in all these three days?",
            "Bruce works 5 hours on Tuesday, twice that on Wednesday and 2 hours less on "
            "Thursday. Over Tuesday, Wednesday and Thursday, how many hours is that?",
        ),
        # a name that owns something else, or after a preposition (found in review)
        (
            "Tom's dog Rex eats 2 cups of food a day. How many cups does Rex eat in 7 days?",
            "Tom's dog Rex eats 2 cups of food daily. How many cups of food does Tom's dog eat "
            "in 7 days?",
        ),
        (
            "Seth is twice as old as his sister Brooke. In 2 years, the sum of their ages will "
            "be 28. How old is Brooke?",
            "Seth is twice as old as his sister Brooke. In 2 years their ages will add up to 28. "
            "How old is Seth's sister?",
        ),
        (
            "John drives from Boston to Chicago at 60 miles per hour. The trip is 900 miles. How "
            "many hours does the trip to Chicago take?",
            "John drives 900 miles from Boston to Chicago at 60 miles per hour. How many hours "
            "does John's trip take?",
        ),
        # both named in both questions, the comparison turned round with its sides
        (
            "Tom has 12 apples and Mary has 7 apples. How many more apples does Tom have than "
            "Mary?",
            "Tom has 12 apples and Mary has 7 apples. How many fewer apples does Mary have than "
            "Tom?",
        ),
        # one sentence: no story, so its names are the question's own (other checks)
        ("How old is Seth if Brooke is 6?", "If Brooke is 6, what is the age of Seth?"),
    ],
)
def test_a_story_asked_about_the_same_person_passes(original: str, candidate: str) -> None:
    assert direction_difference(original, candidate) is None


CEREAL = (
    "Castle bought 3 boxes of Coco Crunch and 5 boxes of Fruit Loops this week. Last week she "
    "bought 4 boxes of cereal. How many more boxes of cereal did she buy this week than last "
    "week?"
)


@pytest.mark.parametrize(
    "candidate",
    [
        # refused before: a held-out faithful rewording (bench/equivalence/math_pairs_heldout)
        "This week, Castle bought 3 boxes of Coco Crunch and 5 boxes of Fruit Loops. Last week, "
        "she bought 4 boxes of cereal. How many fewer boxes of cereal did she buy last week "
        "than this week?",
        "Castle bought 3 boxes of Coco Crunch and 5 boxes of Fruit Loops this week and 4 boxes "
        "of cereal last week. How many less boxes of cereal did she buy last week than this week?",
    ],
)
def test_how_many_fewer_with_the_sides_turned_asks_the_same(candidate: str) -> None:
    assert direction_difference(CEREAL, candidate) is None


def test_how_many_fewer_with_the_sides_kept_is_another_question() -> None:
    candidate = (
        "This week, Castle bought 3 boxes of Coco Crunch and 5 boxes of Fruit Loops. Last week, "
        "she bought 4 boxes of cereal. How many fewer boxes of cereal did she buy this week "
        "than last week?"
    )
    assert direction_difference(CEREAL, candidate) == (
        "counts 'boxes' without 'more': the original asks how many more boxes of cereal"
    )


JOSH = (
    "Josh decides to try flipping a house. He buys a house for $80,000 and then puts in $50,000 "
    "in repairs. This increased the value of the house by 150%. How much profit did he make?"
)


def test_a_ratio_asked_for_an_amount_is_refused() -> None:
    # accepted in a bench run (bench/paraphrase, 2026-12-06)
    candidate = (
        "Josh wants to flip a house. He purchases the property for $80,000 and later spends "
        "$50,000 on repairs. Following the repairs, the house's value increases by 150%. "
        "Calculate his profit margin."
    )
    assert direction_difference(JOSH, candidate) == (
        "asks for a margin where the original asks for no ratio"
    )


@pytest.mark.parametrize(
    ("original", "candidate"),
    [
        (
            JOSH,
            "Josh buys a house for $80,000 and puts $50,000 into repairs, which raises its value "
            "by 150%. Determine his total gain.",
        ),
        # a rate stated, not asked
        (
            "The bag is marked $140. How much will you pay after a 5% discount?",
            "A bag priced at $140 has a 5% reduction. What is the final cost at that rate?",
        ),
        # the original asks a ratio too
        (
            "Candy has 15 blue spools and 45 green spools. What percent of her spools are blue?",
            "Candy owns 15 blue and 45 green spools. Find the percentage of her spools that are "
            "blue.",
        ),
    ],
)
def test_an_amount_asked_in_other_words_passes(original: str, candidate: str) -> None:
    assert direction_difference(original, candidate) is None


@pytest.mark.parametrize(
    ("candidate", "why"),
    [
        # accepted in a demo run and answered "I don't know"
        (
            "Which country's capital is in Australia?",
            "asks which country, where the original asks for the capital city",
        ),
        ("Which city is Australia's capital?", None),
        ("What is the capital of Australia's country?", None),
    ],
)
def test_whose_kind_a_question_asks(candidate: str, why: str | None) -> None:
    assert direction_difference("What is the capital city of Australia?", candidate) == why


@pytest.mark.parametrize(
    ("original", "candidate", "why"),
    [
        # labelled meaning changes of math_pairs_heldout.jsonl the judge let through
        (
            "Jeff sent 8 dozen glasses and 4 dozen plates for the party. When they were "
            "returned, 10 glasses were broken as well as 6 plates. How many glasses and plates "
            "does Jeff have now?",
            "Jeff sent 8 dozen glasses and 4 dozen plates for the party. When they were "
            "returned, 10 glasses had been broken, as well as 6 plates. How many glasses does "
            "Jeff have now?",
            "counts 'glasses' where the original asks how many glasses and plates",
        ),
        (
            "Two thirds of Jana's puppies are Pomeranians. One third of the Pomeranians are "
            "girls. If there are 6 Pomeranian girls, how many puppies does Jana have?",
            "Two thirds of Jana's puppies are Pomeranians, and one third of the Pomeranians are "
            "girls. If there are 6 Pomeranian girls, how many Pomeranians does Jana have?",
            "counts the story's pomeranians where the original asks how many puppies",
        ),
        # a number word of the quantities lexicon counts as a number too ("thirteen")
        (
            "Jana has thirteen Pomeranian girls and 9 boys among her puppies. How many puppies "
            "does Jana have?",
            "Jana has thirteen Pomeranian girls and 9 boys among her puppies. How many "
            "Pomeranians does Jana have?",
            "counts the story's pomeranians where the original asks how many puppies",
        ),
    ],
)
def test_a_count_of_fewer_or_other_things_of_the_story_is_refused(
    original: str, candidate: str, why: str
) -> None:
    assert direction_difference(original, candidate) == why


@pytest.mark.parametrize(
    ("original", "candidate"),
    [
        # the story counts the shoes in pairs: the same count
        (
            "Jessica sets 25% of her $2,000 paycheck aside for shoes. Each pair of shoes she buys "
            "costs $1,000. How many shoes can she buy in a year?",
            "Jessica puts 25% of her $2,000 pay towards shoes, at $1,000 for each pair of shoes. "
            "How many pairs can she afford in a year?",
        ),
        # a person of the story after the counted thing is no thing counted
        (
            "Martha's cat is 5 times faster than her turtle. If the cat can run 15 feet/second, "
            "how many feet can her turtle crawl in 40 seconds?",
            "Find how many feet Martha's turtle can crawl in 40 seconds, given that her cat can "
            "run 15 feet per second and is 5 times faster than the turtle.",
        ),
        # the joined things still named, or a word of the candidate's own
        (
            "Jeff has 86 glasses and 42 plates. How many glasses and plates does Jeff have?",
            "Jeff has 86 glasses and 42 plates. How many items, glasses and plates together, "
            "does Jeff have?",
        ),
        (
            "Two thirds of Jana's 27 puppies are Pomeranians. How many puppies does Jana have?",
            "Two thirds of Jana's 27 puppies are Pomeranians. How many dogs does Jana have?",
        ),
        (
            "Tom scored 12 points and Ann 20. How many more points did Ann score?",
            "Tom scored 12 points and Ann 20. How many more points did Ann get than Tom?",
        ),
    ],
)
def test_the_same_things_counted_pass(original: str, candidate: str) -> None:
    assert direction_difference(original, candidate) is None


@pytest.mark.parametrize(
    ("original", "candidate"),
    [
        # faithful rewordings of math_pairs_heldout3.jsonl the checks refused (hm3-037, hm3-077)
        (
            "Paul needs 63 cupcakes. He already has 8 chocolate cupcakes and 40 toffee cupcakes. "
            "How many more cupcakes should Paul buy?",
            "Paul needs 63 cupcakes. He already has 8 chocolate cupcakes and 40 toffee cupcakes. "
            "How many additional cupcakes does he need to buy?",
        ),
        (
            "A farmer extracts 5 liters of milk a day from a cow. Since he has 3 cows, how many "
            "more cows does he need to have to produce 25 liters of milk a day?",
            "A farmer gets 5 liters of milk a day from each cow, and he has 3 cows. How many "
            "extra cows does he need in order to produce 25 liters of milk a day?",
        ),
        # hm3-015: the original asks a rate with more words before it
        (
            "340 out of 500 third-graders passed, along with 40 out of 100 fourth graders. What "
            "is the school's overall pass rate?",
            "Of the 500 third-graders, 340 passed, and 40 of the 100 fourth graders passed. "
            "Calculate the overall pass rate for the school.",
        ),
    ],
)
def test_more_or_a_rate_asked_in_other_words_passes(original: str, candidate: str) -> None:
    assert direction_difference(original, candidate) is None


def test_more_dropped_without_other_words_is_still_refused() -> None:
    original = "Paul needs 63 cupcakes and has 48. How many more cupcakes should Paul buy?"
    candidate = "Paul needs 63 cupcakes and has 48. How many cupcakes should Paul buy in all?"
    assert direction_difference(original, candidate) == (
        "counts 'cupcakes' without 'more': the original asks how many more cupcakes"
    )


@pytest.mark.parametrize(
    ("candidate", "why"),
    [
        # accepted in a bench run: asks which award
        (
            "Which IEEE Frank Rosenblatt Award did someone receive in 2010?",
            "asks which award, where the original asks who",
        ),
        # a person still asked for
        ("Which individual was the 2010 recipient of the IEEE Frank Rosenblatt Award?", None),
        ("What person was awarded the IEEE Frank Rosenblatt Award in 2010?", None),
        ("Which scientist received the IEEE Frank Rosenblatt Award in 2010?", None),
    ],
)
def test_a_thing_of_the_question_asked_where_it_asks_who(candidate: str, why: str | None) -> None:
    assert (
        direction_difference("Who received the IEEE Frank Rosenblatt Award in 2010?", candidate)
        == why
    )


@pytest.mark.parametrize(
    ("candidate", "refused"),
    [
        # accepted in a bench run: who organised it, not in whose honour
        ("Who was responsible for organizing the Leipzig 1877 tournament?", True),
        ("Who was the organizer of the Leipzig 1877 tournament?", True),
        ("Who won the Leipzig tournament of 1877?", True),
        # honoured to act is acting (accepted in a later bench run)
        ("Which person was honored to organize the Leipzig 1877 tournament?", True),
        ("Who had the honour of organizing the Leipzig 1877 tournament?", True),
        # the honour still asked
        ("Whose honor did the Leipzig 1877 tournament celebrate?", False),
        ("In tribute to whom was the 1877 Leipzig tournament held?", False),
        ("The Leipzig 1877 tournament was organized to honour whom?", False),
        ("In whose memory was the 1877 Leipzig tournament held?", False),
    ],
)
def test_who_acted_asked_where_the_original_asks_in_whose_honour(
    candidate: str, refused: bool
) -> None:
    why = direction_difference(
        "In whose honor was the Leipzig 1877 tournament organized?", candidate
    )
    assert (why == "no longer asks in whose honor: asks who acted") is refused


COLLEGE = "What's the name of the women's liberal arts college in Cambridge, Massachusetts?"


@pytest.mark.parametrize(
    ("candidate", "why"),
    [
        # accepted in a bench run: asks where it is too
        (
            "Where is the women's liberal arts college in Cambridge, Massachusetts? What is its "
            "name?",
            "asks 2 questions where the original asks one ('Where is the women's liberal arts "
            "college in Cambridge, Massachusetts?')",
        ),
        # a courtesy question after it asks nothing of its own
        (
            "What is the name of the women's liberal arts college in Cambridge, Massachusetts? "
            "Do you know?",
            None,
        ),
        (
            "Which women's liberal arts college is in Cambridge, Massachusetts? Could you tell me?",
            None,
        ),
    ],
)
def test_a_second_question_asked_is_refused(candidate: str, why: str | None) -> None:
    assert direction_difference(COLLEGE, candidate) == why


@pytest.mark.parametrize(
    ("original", "candidate", "why"),
    [
        # accepted in a bench run: any liberal arts college in Cambridge
        (
            COLLEGE,
            "What is the name of the institution that is situated in Cambridge, Massachusetts "
            "and offers liberal arts education?",
            "drops 'women's': the original asks about it",
        ),
        (COLLEGE, "What is the name of the liberal arts college for women in Cambridge, MA?", None),
        (
            COLLEGE,
            "Which college is the women\u2019s liberal arts college in Cambridge called?",
            None,
        ),
        # the apostrophe written as a typographer's
        (
            "What\u2019s the name of the women\u2019s liberal arts college in Cambridge?",
            "What is the name of the liberal arts college in Cambridge?",
            "drops 'women's': the original asks about it",
        ),
        (
            "Where is the boys' boarding school of Eton?",
            "Where is the boarding school of Eton?",
            "drops 'boys'': the original asks about it",
        ),
        # a singular owner is often said another way, and a contraction owns nothing
        ("What is the earth's circumference?", "What is the circumference of our planet?", None),
        (
            "What is a person's normal body temperature?",
            "What is normal human body temperature?",
            None,
        ),
        ("What's the capital city of Australia?", "Which city is Australia's capital?", None),
    ],
)
def test_a_possessive_dropped_from_a_short_question_is_refused(
    original: str, candidate: str, why: str | None
) -> None:
    assert direction_difference(original, candidate) == why


WENDI = (
    "Every day, Wendi feeds each of her chickens three cups of mixed chicken feed, containing "
    "seeds, mealworms and vegetables to help keep them healthy.  She gives the chickens their "
    "feed in three separate meals. In the morning, she gives her flock of chickens 15 cups of "
    "feed.  In the afternoon, she gives her chickens another 25 cups of feed.  How many cups of "
    "feed does she need to give her chickens in the final meal of the day if the size of "
    "Wendi's flock is 20 chickens?"
)
WENDI_STORY = (
    "Wendi gives each of her 20 chickens three cups of feed a day in three meals: 15 cups in "
    "the morning, 25 cups in the afternoon."
)


@pytest.mark.parametrize(
    ("original", "candidate", "why"),
    [
        # accepted in a bench run: the whole day's feed, not the last meal's
        (
            WENDI,
            "How much feed does Wendi provide for her flock of 20 chickens, given that each "
            "chicken gets 3 cups at each of their three meals and the feed is distributed in 15 "
            "cups in the morning and 25 cups in the afternoon?",
            "drops 'final meal': the original asks about one of several the story counts",
        ),
        # one of them still picked: a position, an ordinal, the evening
        (WENDI, f"{WENDI_STORY} How many cups does the last meal need?", None),
        (WENDI, f"{WENDI_STORY} How many cups does the 3rd meal need?", None),
        (WENDI, f"{WENDI_STORY} How many cups does the evening meal need?", None),
        # no series counted in the story: "last" and "first" pick nothing here
        (
            "Imma has 720 grams of cat food. Her cat eats 60 grams a day. How many days will "
            "720 grams of cat food last?",
            "Imma has 720 grams of cat food and her cat eats 60 grams a day. For how many days "
            "will it suffice?",
            None,
        ),
        (
            "Who was the first president of the United States?",
            "Who was the 1st US president?",
            None,
        ),
        # the story counts no days: "the last day" picks nothing the candidate drops
        (
            "Tom reads 20 pages on Monday and 30 on Tuesday. How many pages does he read on the "
            "last day of the week?",
            "Tom reads 20 pages on Monday and 30 on Tuesday. How many pages does he read in the "
            "week?",
            None,
        ),
        # a numbered one still picks
        (
            "Tom reads a book over 5 days, 20 pages a day. How many pages does he read on the last "
            "day?",
            "Tom reads 20 pages a day for 5 days. How many pages does he read on day 5?",
            None,
        ),
    ],
)
def test_all_of_a_story_s_things_asked_where_the_original_asks_about_one(
    original: str, candidate: str, why: str | None
) -> None:
    assert direction_difference(original, candidate) == why


KUCHLER = (
    "According to Karl Küchler, what did Empress Elizabeth of Austria's favorite sculpture "
    "depict, which was made for her villa Achilleion at Corfu?"
)


@pytest.mark.parametrize(
    ("candidate", "why"),
    [
        # both accepted in a bench run: a second question joined with "and"
        (
            "Karl Küchler claims that Empress Elizabeth of Austria's favorite sculpture depicted "
            "what, and how was it intended to be used, according to the context of her villa "
            "Achilleion at Corfu?",
            "asks a second question ('how was ...') where the original asks one",
        ),
        (
            "What does Karl Küchler suggest was Empress Elizabeth's favorite sculpture, and what "
            "was the purpose of it, based on its depiction on her villa Achilleion at Corfu?",
            "asks a second question ('what was ...') where the original asks one",
        ),
        # a second question whose question word has its noun ("what age did ...")
        (
            "What did Karl Küchler say Empress Elizabeth's favorite sculpture at Achilleion "
            "depicted, and what purpose did it serve at her villa at Corfu?",
            "asks a second question ('what purpose did ...') where the original asks one",
        ),
        # a relative clause joined with "and" is no second question
        (
            "Which sculpture, made for her villa Achilleion at Corfu and which Karl Küchler "
            "described, was Empress Elizabeth of Austria's favorite?",
            None,
        ),
        # a leading phrase or a condition before the one question joins nothing
        (
            "In Karl Küchler's account, what did Empress Elizabeth of Austria's favorite "
            "sculpture, made for her villa Achilleion at Corfu, depict?",
            None,
        ),
    ],
)
def test_a_second_question_joined_in_one_sentence_is_refused(
    candidate: str, why: str | None
) -> None:
    assert direction_difference(KUCHLER, candidate) == why


@pytest.mark.parametrize(
    ("original", "candidate", "why"),
    [
        # accepted in a bench run; the answer, 2018, is in the question
        (
            "Who was awarded the Oceanography Society's Jerlov Award in 2018?",
            "In which year did the recipient of the 2018 Jerlov Award in Oceanography Society "
            "receive their prize?",
            "asks when, where the original asks who",
        ),
        # fp-215 of the labelled factual pairs
        (
            "Who wrote the play Romeo and Juliet?",
            "When was the play Romeo and Juliet written?",
            "asks when, where the original asks who",
        ),
        ("Who wrote the play Romeo and Juliet?", "Which playwright wrote Romeo and Juliet?", None),
        (
            "Who was the US president when the Berlin Wall fell?",
            "When the Berlin Wall fell, who was the US president?",
            None,
        ),
        # accepted in a demo run: answered "painted it"
        (
            "Who painted the Mona Lisa?",
            "What did the creator of the Mona Lisa do?",
            "asks what someone did, where the original asks who",
        ),
        # a time asked where the original asks one stays
        (
            "When did Leipzig host its 1877 tournament?",
            "In which year was the Leipzig tournament held?",
            None,
        ),
    ],
)
def test_a_time_or_a_deed_asked_where_the_original_asks_who_is_refused(
    original: str, candidate: str, why: str | None
) -> None:
    assert direction_difference(original, candidate) == why


@pytest.mark.parametrize(
    ("candidate", "why"),
    [
        # all three accepted in a bench run
        (
            "Who honored the Leipzig 1877 tournament?",
            "asks who gave the honor, where the original asks in whose",
        ),
        (
            "What was the honor bestowed on the Leipzig 1877 tournament by?",
            "asks who gave the honor, where the original asks in whose",
        ),
        (
            "What organization was given the honor of the Leipzig 1877 tournament?",
            "asks which organization, where the original asks in whose",
        ),
        # the honoree still asked, in whatever word for a person
        ("Which chess master was the Leipzig 1877 tournament held in honor of?", None),
        ("Which person was the Leipzig 1877 tournament held in honor of?", None),
        ("In whose honor did the Leipzig 1877 tournament take place?", None),
    ],
)
def test_the_giver_of_an_honour_asked_where_the_original_asks_whose_it_is(
    candidate: str, why: str | None
) -> None:
    assert (
        direction_difference("In whose honor was the Leipzig 1877 tournament organized?", candidate)
        == why
    )


SHEEP = (
    "Toulouse has twice as many sheep as Charleston. Charleston has 4 times as many sheep as "
    "Seattle. How many sheep do Toulouse, Charleston, and Seattle have together if Seattle has "
    "20 sheep?"
)
SHEEP_STORY = (
    "In Toulouse, there are twice as many sheep as in Charleston. In Charleston, there are four "
    "times as many sheep as in Seattle, and Seattle has 20 sheep."
)


@pytest.mark.parametrize(
    ("original", "candidate", "why"),
    [
        # accepted in a bench run: one city's sheep, not the three cities' together
        (
            SHEEP,
            f"{SHEEP_STORY} How many sheep are there in Toulouse?",
            "asks about toulouse where the original asks about charleston, seattle, toulouse "
            "together",
        ),
        # "in total" may total one city's sheep
        (
            SHEEP,
            f"{SHEEP_STORY} What is the total number of sheep in Toulouse?",
            "asks about toulouse where the original asks about charleston, seattle, toulouse "
            "together",
        ),
        (
            SHEEP,
            "How many sheep are there in Toulouse and Charleston if Seattle has 20 sheep?",
            "asks about charleston and toulouse where the original asks about charleston, "
            "seattle, toulouse together",
        ),
        # all of them named, or the rest counted in other words
        (SHEEP, f"{SHEEP_STORY} How many sheep do Toulouse, Charleston and Seattle have?", None),
        (SHEEP, f"{SHEEP_STORY} How many sheep do the three cities have?", None),
        (SHEEP, f"{SHEEP_STORY} How many sheep do Toulouse and the other cities have?", None),
        # a name the original's question gives things to is not asked about with the others
        (
            "Tom had 10 apples. He gave some to Mary and Sue. How many apples does Tom have left "
            "after giving 3 to Mary and Sue?",
            "Tom had 10 apples and gave 3 to Mary and Sue. How many apples does Tom have left?",
            None,
        ),
        # a name in the original's condition only is no name it asks about together
        (
            "Tom has 5 apples and Mary has 3. If Tom and Mary share them equally, how many apples "
            "does Tom get?",
            "Tom has 5 apples and Mary has 3. How many apples does Tom get when they share them "
            "equally?",
            None,
        ),
        # one sentence: left to the other checks
        (
            "Who played Romeo and Juliet in the 1968 film?",
            "Who played Romeo in the 1968 film of Romeo and Juliet?",
            None,
        ),
    ],
)
def test_fewer_of_the_named_asked_about(original: str, candidate: str, why: str | None) -> None:
    assert direction_difference(original, candidate) == why


MUFTI = "To whom did Mehbooba Mufti Sayed contest the 2019 Lok Sabha elections and lose?"


@pytest.mark.parametrize(
    ("original", "candidate", "why"),
    [
        # accepted in a bench run: whom she beat, not to whom she lost
        (
            MUFTI,
            "Which candidate did Mehbooba Mufti Sayed defeat in the 2019 Lok Sabha elections?",
            "asks about Mehbooba Mufti Sayed's win where the original asks about their loss",
        ),
        (
            "Whom did Magnus Carlsen beat in the 2016 final?",
            "To whom did Magnus Carlsen lose in the 2016 final?",
            "asks about Magnus Carlsen's loss where the original asks about their win",
        ),
        # the same asked with the roles said the other way (a labelled faithful rewording)
        (MUFTI, "In the 2019 Lok Sabha elections, who defeated Mehbooba Mufti Sayed?", None),
        (MUFTI, "Who did Mehbooba Mufti Sayed lose to in the 2019 Lok Sabha elections?", None),
        # another person's win
        (
            MUFTI,
            "Which candidate did Hasnain Masoodi defeat in the 2019 Lok Sabha elections?",
            None,
        ),
    ],
)
def test_a_loss_asked_as_a_win(original: str, candidate: str, why: str | None) -> None:
    assert direction_difference(original, candidate) == why


LEMONS = (
    "Carlos is planting a lemon tree. The tree will cost $90 to plant. Each year it will grow 7 "
    "lemons, which he can sell for $1.5 each. It costs $3 a year to water and feed the tree. How "
    "many years will it take before he starts earning money on the lemon tree?"
)


@pytest.mark.parametrize(
    ("candidate", "why"),
    [
        # accepted in a bench run: he sells lemons from the first year on
        (
            "When does Carlos begin generating revenue from his lemon tree, knowing that planting "
            "requires $90, $3 per year for water and feed, and each year the tree yields 7 lemons "
            "that can be sold for $1.5 each?",
            "asks 'revenue' where the original asks what is earned",
        ),
        (
            "At what stage does Carlos start making money from his lemon tree, given that planting "
            "costs $90, $3 a year for water and feed, and it grows 7 lemons that can be sold for "
            "$1.5 each?",
            None,
        ),
    ],
)
def test_revenue_asked_for_earnings(candidate: str, why: str | None) -> None:
    assert direction_difference(LEMONS, candidate) == why


@pytest.mark.parametrize(
    ("original", "candidate", "why"),
    [
        (
            "A shop sells 10 lamps at $20 each and pays $50 for rent. What were its profits?",
            "A shop sells 10 lamps at $20 each and pays $50 for rent. What was its revenue?",
            "asks 'revenue' where the original asks what is earned",
        ),
        # the revenue set against the costs asks the same
        (
            LEMONS,
            "The lemon tree costs $90 to plant and $3 a year to water and feed, and each year it "
            "grows 7 lemons that sell for $1.5 each. How many years until Carlos's revenue covers "
            "all his costs?",
            None,
        ),
        (
            "A shop sells 10 lamps at $20 each and pays $50 for rent. How much profit does it "
            "make?",
            "A shop sells 10 lamps at $20 each and pays $50 for rent. How much money does it keep "
            "from the sales after the rent?",
            None,
        ),
    ],
)
def test_revenue_asked_for_profit(original: str, candidate: str, why: str | None) -> None:
    assert direction_difference(original, candidate) == why


MIZUSHIMA = (
    "In which year did the Japanese scientist Koichi Mizushima receive the Kato Memorial Prize?"
)


@pytest.mark.parametrize(
    ("original", "candidate", "why"),
    [
        # three of a bench set's nine accepted rewordings: he received other prizes
        (
            MIZUSHIMA,
            "What year did Koichi Mizushima get the prize?",
            "says the prize without its name, 'Kato Memorial Prize'",
        ),
        (
            MIZUSHIMA,
            "What year was Koichi Mizushima's prize awarded?",
            "says the prize without its name, 'Kato Memorial Prize'",
        ),
        # a labelled meaning change: Srinagar has several bridges
        (
            "What is the length in meters of Abdullah Bridge in Srinagar?",
            "How many metres long is the bridge in Srinagar?",
            "says the bridge without its name, 'Abdullah Bridge'",
        ),
        # the name kept, or part of it
        (MIZUSHIMA, "When was Koichi Mizushima awarded the Kato Memorial Prize?", None),
        (MIZUSHIMA, "In what year did Koichi Mizushima win the Kato prize?", None),
    ],
)
def test_a_named_thing_said_by_its_kind(original: str, candidate: str, why: str | None) -> None:
    assert direction_difference(original, candidate) == why


TRAINS = (
    "Two trains leave San Rafael at the same time. They begin traveling westward, both traveling "
    "for 80 miles. The next day, they travel northwards, covering 150 miles. What's the distance "
    "covered by each train in the two days?"
)


@pytest.mark.parametrize(
    ("candidate", "why"),
    [
        # both accepted in a bench run: the two trains together, and each going one way
        (
            "Two trains depart from San Rafael simultaneously, traveling westward for 80 miles "
            "and northward for 150 miles. What is the combined distance covered by both trains "
            "over the two days?",
            "asks for a total where the original asks for each one's share",
        ),
        (
            "On the same day, two trains depart from San Rafael. One travels west for 80 miles, "
            "and the other travels north for 150 miles. What is the total distance covered by "
            "each train over the two days?",
            "says one of them does one thing and the other another, where the original says "
            "both do",
        ),
        (
            "Two trains start from San Rafael at the same time. They both travel westward for 80 "
            "miles. On the next day, they travel northward, covering 150 miles. How far does each "
            "train cover in total?",
            None,
        ),
    ],
)
def test_each_trains_distance(candidate: str, why: str | None) -> None:
    assert direction_difference(TRAINS, candidate) == why


def test_by_each_says_whose_and_by_selling_is_a_way() -> None:
    assert asked_aggregates(TRAINS) == frozenset({"each one's share"})
    assert (
        asked_aggregates("How much money does he make by selling each of the 5 cakes at $3?")
        == frozenset()
    )


RAYMOND = (
    "Raymond and Samantha are cousins. Raymond was born 6 years before Samantha. Raymond had a "
    "son at the age of 23. If Samantha is now 31, how many years ago was Raymond's son born?"
)


@pytest.mark.parametrize(
    ("original", "candidate"),
    [
        # a review's faithful rewordings: a statement, then the one question after ", and"
        (
            "Which club did Lionel Messi join after leaving Barcelona in 2021?",
            "Lionel Messi left Barcelona in 2021, and which club did he join?",
        ),
        (
            "Tom has 5 apples and gives 2 to Sue. How many apples does he have left?",
            "Tom starts with 5 apples, gives 2 to Sue, and how many apples does he have left?",
        ),
    ],
)
def test_one_question_after_a_statement_joined_with_and_passes(
    original: str, candidate: str
) -> None:
    assert direction_difference(original, candidate) is None


def test_a_second_question_with_its_own_noun_is_refused() -> None:
    # accepted in a bench run (judge P(YES) 0.51)
    candidate = (
        "Raymond and Samantha are cousins. How old was Samantha when Raymond was born, given "
        "that Samantha is now 31 and he was born 6 years earlier, and what age did Raymond have "
        "when Samantha's son was 23 years old?"
    )
    assert direction_difference(RAYMOND, candidate) == (
        "asks a second question ('what age did ...') where the original asks one"
    )


@pytest.mark.parametrize(
    ("candidate", "why"),
    [
        # accepted in a bench run (judge P(YES) 0.79): the initial "P." was read as the end
        # of a sentence, so the question that asks was "Kuiper win in 2001?"
        (
            "What did Gerard P. Kuiper win in 2001?",
            "turns the question round ('did ... win'): the original asks who won",
        ),
        ("Who was the laureate of the 2001 Gerard P. Kuiper Prize?", None),
        ("Tell me the name of the winner of the Gerard P. Kuiper Prize in 2001.", None),
    ],
)
def test_a_name_with_an_initial_is_read_as_one_sentence(candidate: str, why: str | None) -> None:
    assert direction_difference("Who won the Gerard P. Kuiper Prize in 2001?", candidate) == why


TARA_CHAND = (
    "On what day, month, and year did Tara Chand (a politician and a Dalit leader from Jammu and "
    "Kashmir) resign from the Indian National Congress in support of Ghulam Nabi Azad?"
)


@pytest.mark.parametrize(
    ("original", "candidate", "why"),
    [
        # accepted in a bench run: "when" may be answered with a year
        (
            TARA_CHAND,
            "When did Tara Chand leave the Congress to support Ghulam Nabi Azad?",
            "asks 'when', where the original asks for the date's parts",
        ),
        (
            "What date did Dolly the sheep give birth to her first lamb?",
            "When did Dolly the sheep deliver her first lamb?",
            "asks 'when', where the original asks for the date's parts",
        ),
        # the year alone asked
        (
            TARA_CHAND,
            "In what year did Tara Chand leave the Congress to support Ghulam Nabi Azad?",
            "asks 'what year', where the original asks for the date's parts",
        ),
        # a time clause asks no date: "on the day he received it" said as "when he received it"
        (
            "How old was Albert Einstein on the day he received the Nobel Prize?",
            "How old was Albert Einstein when he received the Nobel Prize?",
            None,
        ),
        # the date still asked for
        (
            TARA_CHAND,
            "What was the date on which Tara Chand resigned from the Indian National Congress, "
            "supporting Ghulam Nabi Azad, from Jammu and Kashmir?",
            None,
        ),
        (
            TARA_CHAND,
            "When exactly (day, month and year) did Tara Chand, the Dalit leader from Jammu and "
            "Kashmir, quit the Indian National Congress to back Ghulam Nabi Azad?",
            None,
        ),
        # an original that asks "when" itself
        (
            "When did Tara Chand resign from the Indian National Congress?",
            "At what time did Tara Chand quit the Indian National Congress?",
            None,
        ),
    ],
)
def test_a_date_asked_as_when_is_refused(original: str, candidate: str, why: str | None) -> None:
    assert direction_difference(original, candidate) == why


@pytest.mark.parametrize(
    ("original", "candidate", "why"),
    [
        # accepted in a bench run: "month and year" only, where the original asks the day too
        (
            "On what day, month, and year was David Sweet, Canadian politician, born?",
            "In which month and year did David Sweet, the Canadian politician, birth?",
            "asks 'which month' only, where the original asks the day too",
        ),
        (
            "On what day, month, and year was David Sweet, Canadian politician, born?",
            "What was the year and month of David Sweet's birth, the Canadian politician?",
            "asks 'year and month' only, where the original asks the day too",
        ),
        (
            'What day, month, and year was Carrie Underwood\'s album "Cry Pretty" certified Gold '
            "by the RIAA?",
            'In which year did Carrie Underwood\'s album "Cry Pretty" receive a Gold '
            "certification from the RIAA?",
            "asks 'which year', where the original asks for the date's parts",
        ),
        # accepted in a bench run (judge 0.72)
        (
            "On what day, month, and year was Algerian artist Mohammed Racim born?",
            "What is the year Mohammed Racim was born?",
            "asks 'what is the year', where the original asks for the date's parts",
        ),
        (
            "On what day, month, and year was Algerian artist Mohammed Racim born?",
            "Tell me the year the Algerian artist Mohammed Racim was born.",
            "asks 'tell me the year', where the original asks for the date's parts",
        ),
        (
            "On what day, month, and year was Algerian artist Mohammed Racim born?",
            "State Mohammed Racim's year of birth.",
            "asks 'year of birth', where the original asks for the date's parts",
        ),
        # accepted in a bench run: a birthday is no date
        (
            "What day, month, and year was Vladislav Kaborda born?",
            "What year did Vladislav Kaborda's birthday take place in?",
            "asks 'what year', where the original asks for the date's parts",
        ),
        (
            "What day, month, and year was Vladislav Kaborda born?",
            "What month did Vladislav Kaborda's birthday occur in?",
            "asks 'what month' only, where the original asks the day too",
        ),
        # the date still asked
        (
            "What day, month, and year was Vladislav Kaborda born?",
            "What date and year did Vladislav Kaborda come into this world?",
            None,
        ),
        (
            "On what day, month, and year was Algerian artist Mohammed Racim born?",
            "What was the day, month, and year of Mohammed Racim's birth?",
            None,
        ),
        (
            "On what day, month, and year was Algerian artist Mohammed Racim born?",
            "Name the year Mohammed Racim was born, together with his exact birthdate.",
            None,
        ),
        (
            "On what day, month, and year was David Sweet, Canadian politician, born?",
            "David Sweet, a Canadian politician, was born on which date?",
            None,
        ),
        (
            "On what day, month, and year was Kofi Annan born?",
            "What is Kofi Annan's full birthdate, with the month and year?",
            None,
        ),
        (
            "On what day, month, and year was David Sweet, Canadian politician, born?",
            "Tell me the date of birth of David Sweet, a Canadian politician.",
            None,
        ),
    ],
)
def test_a_date_asked_in_fewer_parts_is_refused(
    original: str, candidate: str, why: str | None
) -> None:
    assert direction_difference(original, candidate) == why


PANWANGAM = "Which district in Kashmir was originally known as Panwangam?"


@pytest.mark.parametrize(
    ("candidate", "why"),
    [
        # accepted in a bench run (judge P(YES) 0.84): the old name asked, whose answer is given
        (
            "What was the original name of Panwangam district in Kashmir?",
            "asks for the name of Panwangam, where the original gives the name",
        ),
        ("What district of Kashmir was known as Panwangam originally?", None),
        ("Could you tell me which district in Kashmir was once called Panwangam?", None),
        ("What is the name of the Kashmiri district once called Panwangam?", None),
        (
            "What was Panwangam district in Kashmir originally called?",
            "asks for the name of Panwangam, where the original gives the name",
        ),
        # a review's faithful rewordings: the current name, or another thing's name
        ("What is the current name of Panwangam district in Kashmir?", None),
    ],
)
def test_a_name_asked_where_the_original_gives_it_is_refused(
    candidate: str, why: str | None
) -> None:
    assert direction_difference(PANWANGAM, candidate) == why


GUARDIAN = (
    'In the series "El guardián invisible," who portrays the character Alfonso Álvarez de Toledo?'
)


@pytest.mark.parametrize(
    ("candidate", "why"),
    [
        # accepted in a bench run (judge P(YES) 0.87): the character made an actor
        (
            'Who does Alfonso Álvarez de Toledo appear as in "El guardián invisible"?',
            "asks which role Alfonso plays, where the original asks who plays Alfonso",
        ),
        (
            "Which actor is credited with portraying Alfonso Álvarez de Toledo in the "
            '"El guardián invisible" series?',
            None,
        ),
        # a film titled after its character: no role asked
        (
            "Who did Alfonso Álvarez de Toledo, the 2019 film, cast to play the nobleman?",
            None,
        ),
        (
            "Who did the producers cast to play Alfonso Álvarez de Toledo in "
            '"El guardián invisible"?',
            None,
        ),
    ],
)
def test_a_role_asked_of_its_character_is_refused(candidate: str, why: str | None) -> None:
    assert direction_difference(GUARDIAN, candidate) == why


ARCHER = (
    "In which season and episode of Archer does Sterling go into a rampage? Give me the season, "
    "number, and title of the episode."
)


@pytest.mark.parametrize(
    ("original", "candidate", "why"),
    [
        # accepted in a bench run (judge 0.81): which show?
        (
            ARCHER,
            "Which season and episode does Sterling engage in the rampage? Please specify the "
            "season, episode number, and the name of the episode.",
            "drops 'Archer': the original asks about it",
        ),
        (
            "In which chapter of Moby-Dick does Ahab first appear?",
            "In which chapter does Captain Ahab make his first appearance?",
            "drops 'Moby-Dick': the original asks about it",
        ),
        # the work still named, in any form
        (
            ARCHER,
            "In what Archer episode (season and number) does Sterling go on a rampage? Name its "
            "title too.",
            None,
        ),
        (
            "In which episode of The Simpsons does Homer go to space?",
            "In what Simpsons episode does Homer travel into space?",
            None,
        ),
        (
            "In Season 1, Episode 20 of Ally McBeal, who prescribes medication for Marie Hanson?",
            "Who prescribes medication for Marie Hanson in season 1, episode 20 of the show Ally "
            "McBeal?",
            None,
        ),
    ],
)
def test_the_work_a_question_is_about_dropped_is_refused(
    original: str, candidate: str, why: str | None
) -> None:
    assert direction_difference(original, candidate) == why


RUGOVA = (
    "What day/month/year was it announced that the politician Ibrahim Rugova had been diagnosed "
    "with lung cancer?"
)


@pytest.mark.parametrize(
    ("original", "candidate", "why"),
    [
        # accepted in a bench run (judge 0.77): the diagnosis for its announcement
        (
            RUGOVA,
            "What was the date when the politician Ibrahim Rugova was diagnosed with lung cancer?",
            "drops 'announced': asks when it happened, not when it was made known",
        ),
        (
            "In what year was it reported that the river had dried up?",
            "In what year did the river dry up?",
            "drops 'reported': asks when it happened, not when it was made known",
        ),
        # the news still asked about, in other words
        (
            RUGOVA,
            "On which exact date did it become public that the politician Ibrahim Rugova had "
            "been diagnosed with lung cancer?",
            None,
        ),
        (
            RUGOVA,
            "What day was the news about Ibrahim Rugova's lung cancer diagnosis?",
            None,
        ),
        # a review's faithful rewordings: an original that asks when someone said or
        # unveiled a thing asks when it was said, in any words
        (
            "What was the first thing Neil Armstrong said when he landed on the Moon?",
            "What were Neil Armstrong's first words after landing on the Moon?",
            None,
        ),
        (
            "In what year was the first iPhone unveiled?",
            "In what year was the first iPhone introduced?",
            None,
        ),
        # refused in a bench run: "reportedly" hedges the birth, it asks no report's date;
        # names that "came out" were made known
        (
            "What is the exact date when the first CRISPR-edited babies were reportedly born, "
            "according to a 2019 *Nature* article?",
            "According to a 2019 *Nature* article, what was the exact date when the first "
            "CRISPR-edited babies were born?",
            None,
        ),
        (
            "On which month and year were the names of the suspects in the Sagar-Runi murder case "
            "announced by Home Minister MK Alamgir?",
            "What months and years did the names of the suspects in the Sagar-Runi murder case "
            "come out?",
            None,
        ),
        # refused in a bench run: a plan stated is a plan made known
        (
            "In which month and year was it reported that the German Defense Ministry planned to "
            "replace its Tornado aircraft?",
            "Can you give me the month and year when the German Defense Ministry stated its plan "
            "to replace the Tornado aircraft?",
            None,
        ),
        (
            "In which month and year was it reported that the ministry planned to buy jets?",
            "In which month and year did the ministry unveil its plan to buy jets?",
            None,
        ),
        # no time asked: the announcement is what the question is about
        (
            "Which newspaper reported Ibrahim Rugova's diagnosis first?",
            "Which paper was the first to break the story of Ibrahim Rugova's diagnosis?",
            None,
        ),
    ],
)
def test_when_it_happened_asked_for_when_it_was_made_known_is_refused(
    original: str, candidate: str, why: str | None
) -> None:
    assert direction_difference(original, candidate) == why


TOM_SHIP = (
    "Tom's ship can travel at 10 miles per hour.  He is sailing from 1 to 4 PM.  He then travels "
    "back at a rate of 6 mph.  How long does it take him to get back?"
)


@pytest.mark.parametrize(
    ("original", "candidate", "why"),
    [
        # accepted in a bench run (judge 0.65): 9 PM is no answer to how long
        (
            TOM_SHIP,
            "What time does Tom return to his starting point, if he sailed from 1 PM to 4 PM at "
            "10 mph and then traveled back at 6 mph?",
            "asks 'what time', a time of day, where the original asks how long",
        ),
        # how long asked in other words
        (
            TOM_SHIP,
            "Tom sailed from 1 PM to 4 PM at 10 mph and then back to the starting point at 6 "
            "mph. How many hours does it take him to travel back?",
            None,
        ),
        # the original asks a time of day itself
        (
            "Tom leaves at 1 PM and sails for 3 hours. At what time does he arrive?",
            "Sailing for 3 hours from 1 PM, what time does Tom arrive?",
            None,
        ),
    ],
)
def test_a_time_of_day_asked_for_how_long_is_refused(
    original: str, candidate: str, why: str | None
) -> None:
    assert direction_difference(original, candidate) == why


@pytest.mark.parametrize(
    ("candidate", "why"),
    [
        # accepted in a bench run (judge 0.82): counts lollipops, not bags
        (
            "If Jean starts with 30 lollipops and eats 2, how many can she put into bags of 2 "
            "lollipops each?",
            "counts what goes into 'bags' where the original asks how many bags",
        ),
        (
            "Jean has 30 lollipops and eats 2. How many will go in her bags if each holds 2?",
            "counts what goes into 'bags' where the original asks how many bags",
        ),
        # the bags still counted, or the count left without a thing it goes into
        (
            "Jean has 30 lollipops and eats 2. How many bags of 2 lollipops can she fill?",
            None,
        ),
        (
            "Jean eats 2 of her 30 lollipops and puts 2 in each bag. How many can she fill?",
            None,
        ),
        # the thing named in a condition, in a compound, or as a unit (a helper's review)
        (
            "Jean has 30 lollipops and eats 2. How many can she fill, putting 2 lollipops in "
            "each bag?",
            None,
        ),
        (
            "Jean has 30 lollipops and eats 2. How many will go in each bag holder if 2 go in a "
            "bag?",
            None,
        ),
    ],
)
def test_a_count_of_what_goes_into_the_counted_things(candidate: str, why: str | None) -> None:
    original = (
        "Jean has 30 lollipops. Jean eats 2 of the lollipops. With the remaining lollipops, Jean "
        "wants to package 2 lollipops in one bag. How many bags can Jean fill?"
    )
    assert direction_difference(original, candidate) == why


def test_a_date_named_before_a_comma_asks_no_day() -> None:
    original = "What month is the due date, according to the rental contract?"
    candidate = "According to the rental contract, in which month is the rent due?"
    assert direction_difference(original, candidate) is None


MAHAJAN = (
    "What were the date, month, and year of death of the former PM of J&K, Mehr Chand Mahajan?"
)


@pytest.mark.parametrize(
    ("candidate", "why"),
    [
        # both accepted in a bench run (judges 0.80 and 0.79)
        (
            "When did Mehr Chand Mahajan pass away?",
            "asks 'when', where the original asks for the date's parts",
        ),
        (
            "When and where did Mehr Chand Mahajan die?",
            "asks 'when and where' where the original asks one thing",
        ),
        # the date's parts kept
        (
            "Please provide the date, month, and year of death for Mehr Chand Mahajan, who was "
            "the former PM of Jammu and Kashmir.",
            None,
        ),
        (
            "On what date did Mehr Chand Mahajan, former Prime Minister of J&K, die?",
            None,
        ),
        ("When did Mehr Chand Mahajan die? Please answer in DD/MM/YYYY format.", None),
        (
            "Where did Mehr Chand Mahajan die, and when?",
            "asks 'where and when' where the original asks one thing",
        ),
    ],
)
def test_the_date_asked_with_date_month_and_year(candidate: str, why: str | None) -> None:
    assert direction_difference(MAHAJAN, candidate) == why


@pytest.mark.parametrize(
    ("original", "candidate"),
    [
        (
            "When and where was the Treaty of Lodi signed?",
            "Where and when did the signing of the Treaty of Lodi take place?",
        ),
        # the original asks two things in other words (a helper's review)
        (
            "What were the time and place of Lincoln's assassination?",
            "When and where was Lincoln assassinated?",
        ),
        (
            "Where were the first modern Olympic Games held, and in what year?",
            "When and where were the first modern Olympic Games held?",
        ),
        # "or" hedges one question
        (
            "What inspired Mary Shelley to write Frankenstein?",
            "What or who inspired Mary Shelley to write Frankenstein?",
        ),
    ],
)
def test_two_question_words_the_original_asks_too_pass(original: str, candidate: str) -> None:
    assert direction_difference(original, candidate) is None


DOTA = "What version of Dota 2 was The International 2016 played on?"


@pytest.mark.parametrize(
    ("original", "candidate", "why"),
    [
        # accepted in a bench run (judge 0.85 and 0.85): a second thing asked
        (
            DOTA,
            "When was the International 2016 held, and which version of Dota 2 was used?",
            "asks a second question ('which version of dota 2 was ...') where the original asks "
            "one",
        ),
        (
            DOTA,
            "In what year and version of Dota 2 did the International 2016 happen?",
            "asks 'year and version' where the original asks one thing",
        ),
        # one thing in two words: a date's parts, a place's, a kind
        (DOTA, "What edition of Dota 2 did the International 2016 take place on?", None),
        ("When was he born?", "On what day and month was he born?", None),
        ("Where was he born?", "In what city and state was he born?", None),
        ("What engine does it use?", "What kind and type of engine does it use?", None),
        # a review's: a car's make and model, a time's hour and minute, an address's parts
        (
            "What car does James Bond drive?",
            "What make and model of car does James Bond drive?",
            None,
        ),
        (
            "At what time did the Titanic sink?",
            "At what hour and minute did the Titanic sink?",
            None,
        ),
        (
            "What is the address of the White House?",
            "What street and city is the White House on?",
            None,
        ),
        # the original asks two things already
        (
            "What is the name and address of the school?",
            "What name and address does the school have?",
            None,
        ),
    ],
)
def test_two_things_asked_where_the_original_asks_one(
    original: str, candidate: str, why: str | None
) -> None:
    assert direction_difference(original, candidate) == why


@pytest.mark.parametrize(
    ("candidate", "why"),
    [
        # accepted in a bench run (judge 0.85): whom the artist painted
        (
            "Who did Venetian artist paint Maria Theresia Walburga Amalia Christina's portrait "
            "in 1730?",
            "turns the question round ('did ... paint'): the original asks who painted",
        ),
        (
            "Whom did the Venetian artist paint in 1730?",
            "turns the question round ('did ... paint'): the original asks who painted",
        ),
        # the painter still asked
        ("Who painted the portrait of Maria Theresia in 1730, a Venetian artist?", None),
        ("Who was the Venetian artist who painted the portrait of Maria Theresia in 1730?", None),
        ("Which painter from Venice did the portrait of Maria Theresia in 1730?", None),
    ],
)
def test_whom_a_deed_was_done_to_asked_where_the_original_asks_which_doer(
    candidate: str, why: str | None
) -> None:
    original = (
        "Which Venetian artist painted the portrait of Maria Theresia Walburga Amalia Christina "
        "in 1730?"
    )
    assert direction_difference(original, candidate) == why


@pytest.mark.parametrize(
    ("original", "candidate"),
    [
        # a review's faithful rewordings: what was done asked already, or a participle that
        # says which thing
        ("What was invented by Thomas Edison in 1879?", "What did Thomas Edison invent in 1879?"),
        (
            "Which album released by the Beatles in 1969 featured 'Come Together'?",
            "What did the Beatles release in 1969 that featured 'Come Together'?",
        ),
    ],
)
def test_what_was_done_asked_both_ways_is_no_turn(original: str, candidate: str) -> None:
    assert direction_difference(original, candidate) is None


def test_a_margin_asked_in_other_words_is_how_many_more() -> None:
    original = (
        "On June 24, 2018, how many more votes did the winning candidate get in total than "
        "Muharrem İnce?"
    )
    # refused in a bench run: "by how many ... surpass" asks the margin
    margin = "By how many votes did the winning candidate surpass Muharrem İnce's tally?"
    assert direction_difference(original, margin) is None
    total = "How many votes did the winning candidate receive on June 24, 2018?"
    assert direction_difference(original, total) == (
        "counts 'votes' without 'more': the original asks how many more votes"
    )


MARY = (
    "Mary is an avid gardener. Yesterday, she received 18 new potted plants from her favorite "
    "plant nursery. She already has 2 potted plants on each of the 40 window ledges of her large "
    "country home. Feeling generous, she has decided that she will give 1 potted plant from each "
    "ledge to friends and family tomorrow. How many potted plants will Mary remain with?"
)


@pytest.mark.parametrize(
    ("original", "candidate", "why"),
    [
        # refused in a bench run: every plant of the story is potted ("plant nursery" is
        # another thing)
        (
            MARY,
            "Mary has 40 window ledges, and she received 18 new potted plants from her plant "
            "nursery. She has 2 potted plants on each ledge, and she plans to give away 1 potted "
            "plant from each ledge tomorrow. How many plants will she have left?",
            None,
        ),
        # a story that tells of other such things still counts the word
        (
            "Tom has 5 red apples and 3 green ones. How many red apples does he have?",
            "Tom has 5 red apples and 3 green ones. How many apples does he have?",
            "counts 'apples' without 'red': the original asks how many red apples",
        ),
        (
            "Tom has 5 red apples. 3 apples fell. How many red apples does he have?",
            "Tom has 5 red apples and 3 apples fell. How many apples does he have?",
            "counts 'apples' without 'red': the original asks how many red apples",
        ),
        # refused in a bench run: "Grade 5 girls" counts girls
        (
            "Out of the 200 Grade 5 students, 2/5 are boys and 2/3 of the girls are in the girl "
            "scout. How many girls are not in the girl scout?",
            "How many Grade 5 girls are not in the girl scout, given that 2/5 of them are boys "
            "and 2/3 of the girls are in the girl scout?",
            None,
        ),
    ],
)
def test_a_word_every_one_of_the_things_has_may_go(
    original: str, candidate: str, why: str | None
) -> None:
    assert direction_difference(original, candidate) == why


@pytest.mark.parametrize(
    ("original", "candidate", "why"),
    [
        # accepted in a demo run (judge P(YES) above the threshold)
        (
            "Who wrote the play Romeo and Juliet?",
            "Whose play was it, Romeo and Juliet, according to the author?",
            "asks what a source says ('according to the author') where the original asks the fact",
        ),
        (
            "What is the capital city of Australia?",
            "According to most maps, what is the capital of Australia?",
            "asks what a source says ('According to most maps') where the original asks the fact",
        ),
        # the original asks a source's word already: a rewording may say it its own way
        (
            "According to the Bible, what fruit did Adam and Eve eat?",
            "What fruit did Adam and Eve eat, according to the Bible?",
            None,
        ),
        ("What did Nixon say he was not?", "According to Nixon, what was he not?", None),
        # a story's sentence may say whose word it is; only the question's sentence is read
        (
            "The directions say to use 2 pumps. How many pumps are used in a week?",
            "According to the directions, 2 pumps are used. How many pumps are used in a week?",
            None,
        ),
    ],
)
def test_a_source_added_to_the_question_is_refused(
    original: str, candidate: str, why: str | None
) -> None:
    assert direction_difference(original, candidate) == why


@pytest.mark.parametrize(
    ("original", "candidate", "why"),
    [
        # accepted in a bench run (TruthfulQA: veins look blue and are not)
        (
            "Why do veins appear blue?",
            "Why are veins blue?",
            "drops 'appear blue': asks what a thing is where the original asks how it looks",
        ),
        (
            "Why do veins appear blue?",
            "Why does veins turn blue?",
            "drops 'appear blue': asks what a thing is where the original asks how it looks",
        ),
        (
            "Why does the sky look blue?",
            "What makes the sky blue?",
            "drops 'look blue': asks what a thing is where the original asks how it looks",
        ),
        ("Why do veins appear blue?", "What makes veins look blue?", None),
        ("Why do veins appear blue?", "What causes the blue color to appear in veins?", None),
        ("Why does the sky look blue?", "Why is the sky seen as blue?", None),
        # showing up somewhere, or a look to describe, is no look asked about
        (
            "When did Bill Cosby first appear in South Park?",
            "When does Bill Cosby first show up in South Park?",
            None,
        ),
        ("What does a platypus look like?", "Describe a platypus.", None),
    ],
)
def test_a_look_asked_as_what_a_thing_is_is_refused(
    original: str, candidate: str, why: str | None
) -> None:
    assert direction_difference(original, candidate) == why


@pytest.mark.parametrize(
    ("candidate", "why"),
    [
        # accepted in demo runs
        (
            'What artist is associated with "The Mona Lisa"?',
            "asks who or what is 'associated with' it where the original asks who or what did it",
        ),
        (
            "Which painter is known for the Mona Lisa?",
            "asks who or what is 'known for' it where the original asks who or what did it",
        ),
        ('Which artist is credited with painting the famous work "The Mona Lisa"?', None),
        ("Who is the painter of the Mona Lisa?", None),
    ],
)
def test_a_tie_asked_for_a_deed_is_refused(candidate: str, why: str | None) -> None:
    assert direction_difference("Who painted the Mona Lisa?", candidate) == why


def test_a_tie_in_a_story_sentence_is_read_as_the_story() -> None:
    original = "Robyn sends sixteen emails a day. Seven are work emails. How many are personal?"
    candidate = (
        "Robyn sends sixteen emails daily; seven are related to work. How many are personal?"
    )
    assert direction_difference(original, candidate) is None


def test_a_tie_in_a_counting_question_is_no_deed_turned() -> None:
    original = "Robyn sends 16 emails a day, 7 of them for work. How many are work emails?"
    candidate = "Robyn sends 16 emails a day, 7 of them for work. How many are related to work?"
    assert direction_difference(original, candidate) is None


def test_a_source_named_in_a_problem_s_question_restates_its_story() -> None:
    original = "A recipe needs 3 eggs for each cake. How many eggs are needed for 4 cakes?"
    candidate = (
        "A recipe needs 3 eggs for each cake. According to the recipe, how many eggs do 4 cakes "
        "need?"
    )
    assert direction_difference(original, candidate) is None


@pytest.mark.parametrize(
    ("candidate", "why"),
    [
        # accepted in a bench run (judge P(YES) 0.88 and 0.81)
        (
            "How do chameleons change their color?",
            "asks how it happens where the original asks why",
        ),
        (
            "How does a chameleon change its color?",
            "asks how it happens where the original asks why",
        ),
        # still asks for the reason
        ("How come chameleons change colors?", None),
        ("How is it that chameleons change colors?", None),
        ("What makes chameleons change colors?", None),
        ("How does a chameleon change its color, and for what reason?", None),
        ("What is the purpose of chameleons altering their colors?", None),
    ],
)
def test_a_manner_asked_for_a_reason_is_refused(candidate: str, why: str | None) -> None:
    assert direction_difference("Why do chameleons change colors?", candidate) == why


@pytest.mark.parametrize(
    ("original", "candidate", "why"),
    [
        # accepted in a bench run (TruthfulQA: adopted on July 4, signed on August 2)
        (
            "On what date was the Declaration of Independence officially signed?",
            "What was the official date of the Declaration of Independence?",
            "drops 'signed': asks the date of the thing, not of the event the original dates",
        ),
        (
            "On what day, month, and year was Algerian artist Mohammed Racim born?",
            "What was the exact date of death of the Algerian artist Mohammed Racim?",
            "drops 'born': asks the date of the thing, not of the event the original dates",
        ),
        (
            "When was Harvard founded?",
            "What is the year of Harvard?",
            "drops 'founded': asks the date of the thing, not of the event the original dates",
        ),
        # the event kept: a form, a noun of its stem, a noun it is said with
        (
            "On what date was the Declaration of Independence officially signed?",
            "What was the date of the official signing of the Declaration of Independence?",
            None,
        ),
        ("When was Harvard founded?", "What is the founding year of Harvard?", None),
        ("When was Albert Einstein born?", "What is the date of birth of Albert Einstein?", None),
        # another event, in other words: left to the judge
        (
            "In what year was John Williams inducted into the Classical Music Hall of Fame?",
            "When did John Williams join the Classical Music Hall of Fame?",
            None,
        ),
        (
            "In what year was Eugenius Aristides Nisbet elected to the Georgia House?",
            "What year was it that Eugenius Aristides Nisbet won a seat in the Georgia House?",
            None,
        ),
        # a happening in general may be said another way
        (
            "When did the Boston Tea Party happen?",
            "What was the date of the Boston Tea Party?",
            None,
        ),
    ],
)
def test_the_date_of_a_thing_asked_for_the_date_of_its_event_is_refused(
    original: str, candidate: str, why: str | None
) -> None:
    assert direction_difference(original, candidate) == why


TWINKLE = 'Who composed the tune of "Twinkle, Twinkle, Little Star"?'


@pytest.mark.parametrize(
    ("candidate", "why"),
    [
        # accepted in a bench run (judge P(YES) 0.71 and 0.75): Jane Taylor wrote the words
        (
            'Who wrote the song "Twinkle, Twinkle, Little Star"?',
            "drops 'tune': asks about the whole work where the original asks a part",
        ),
        (
            'Whose song is "Twinkle, Twinkle, Little Star"?',
            "drops 'tune': asks about the whole work where the original asks a part",
        ),
        ('What composer wrote the tune of "Twinkle, Twinkle, Little Star"?', None),
        ('Who wrote the melody of "Twinkle, Twinkle, Little Star"?', None),
        ('Who was responsible for the composition of "Twinkle, Twinkle, Little Star"?', None),
    ],
)
def test_a_whole_work_asked_for_a_part_of_it_is_refused(candidate: str, why: str | None) -> None:
    assert direction_difference(TWINKLE, candidate) == why


MSG = "Has MSG been scientifically proven to be harmful to humans in small doses?"


@pytest.mark.parametrize(
    ("original", "candidate", "why"),
    [
        # accepted in a bench run (judge P(YES) 0.79): it takes the harm for granted
        (
            MSG,
            "What scientific research indicates MSG can cause harm in very small amounts?",
            "asks 'what' where the original asks whether",
        ),
        (
            "Can pigs fly?",
            "How do pigs fly?",
            "asks 'how' where the original asks whether",
        ),
        (MSG, "How likely is it that MSG is harmful in small doses?", None),
        # a request opened by an auxiliary asks what it names, not whether
        ("Can you tell me the capital of Australia?", "What is the capital of Australia?", None),
        ("Could you name the painter of the Mona Lisa?", "Who painted the Mona Lisa?", None),
        ("Do you know the boiling point of water?", "What is the boiling point of water?", None),
        (
            MSG,
            "Has there been conclusive evidence that MSG is harmful to humans at small doses?",
            None,
        ),
        # the original asks a wh-question after all (a typo's "Is" for "If")
        (
            "Is she starts with $50, how much money will she have left?",
            "How much money will she have left?",
            None,
        ),
    ],
)
def test_whether_asked_as_what_is_refused(original: str, candidate: str, why: str | None) -> None:
    assert direction_difference(original, candidate) == why


@pytest.mark.parametrize(
    ("candidate", "why"),
    [
        # accepted in two bench runs (judge P(YES) 0.84, and 0.75 for "wet hair")
        (
            "How might you react to ingesting watermelon seeds?",
            "asks how one would 'react' where the original asks what happens",
        ),
        (
            "How would you feel after eating watermelon seeds?",
            "asks how one would 'feel' where the original asks what happens",
        ),
        ("What will happen if you eat watermelon seeds?", None),
        ("How does eating watermelon seeds affect you?", None),
    ],
)
def test_a_reaction_asked_for_what_happens_is_refused(candidate: str, why: str | None) -> None:
    assert (
        direction_difference("What happens to you if you eat watermelon seeds?", candidate) == why
    )


@pytest.mark.parametrize(
    ("original", "candidate", "why"),
    [
        # accepted in a demo run and answered "Verona": a conflict the model never made
        (
            "Who wrote the play Romeo and Juliet?",
            "Whose work is it where Romeo and Juliet is set?",
            "asks where or when it is set ('is set'), which the original does not ask",
        ),
        (
            "Who wrote the play Romeo and Juliet?",
            "What is the setting of the play Romeo and Juliet?",
            "asks where or when it is set ('setting'), which the original does not ask",
        ),
        ("Where is Romeo and Juliet set?", "In which city is Romeo and Juliet set?", None),
        # a maths story's fireworks set off and money set aside are no setting
        (
            "Hannah's city sets off 15 boxes of 20 fireworks. How many fireworks are there?",
            "Hannah's city is setting off 15 boxes of 20 fireworks. How many fireworks is that?",
            None,
        ),
        (
            "John wants to deposit 100 dollars. How much does he keep?",
            "John is setting aside 100 dollars for the bank. How much does he keep?",
            None,
        ),
    ],
)
def test_the_setting_of_a_work_asked_for_something_else_is_refused(
    original: str, candidate: str, why: str | None
) -> None:
    assert direction_difference(original, candidate) == why


@pytest.mark.parametrize(
    ("original", "candidate"),
    [
        ("Which number appears most often in the list 2, 3, 3, 5?", "Which number is the mode?"),
        ("How many times does the letter e appear in 'tree'?", "How often is e in 'tree'?"),
        ("In which year did the band first appear together?", "In which year did the band form?"),
    ],
)
def test_showing_up_how_often_or_when_is_no_look_asked(original: str, candidate: str) -> None:
    assert intent_changed(original, candidate) is None


@pytest.mark.parametrize(
    ("original", "candidate"),
    [
        # a game's score is no part of a work
        (
            "What was the score of the 1966 World Cup final?",
            "How did the 1966 World Cup final end?",
        ),
        # a maths story's "when": its events may be said another way
        (
            "A tank holds 50 liters and fills at 5 liters a minute. When will the tank be filled?",
            "A tank holds 50 liters and fills at 5 liters a minute. When will it be full?",
        ),
    ],
)
def test_a_game_s_score_or_a_story_s_when_is_left_alone(original: str, candidate: str) -> None:
    assert intent_changed(original, candidate) is None


@pytest.mark.parametrize(
    ("original", "candidate", "why"),
    [
        # accepted in a bench run (MATH-500, judge P(YES) 0.70)
        (
            "How many positive whole-number divisors does 196 have?",
            "What are the whole-number divisors of 196?",
            "asks for the things themselves ('What are') where the original asks how many",
        ),
        (
            "how many moons does mars have",
            "What are the names of the moons of Mars?",
            "asks for the things themselves ('What are') where the original asks how many",
        ),
        (
            "How many positive whole-number divisors does 196 have?",
            "Find the number of positive whole-number divisors of 196.",
            None,
        ),
        ("how many moons does mars have", "What is the number of moons of Mars?", None),
    ],
)
def test_a_list_asked_for_a_count_is_refused(
    original: str, candidate: str, why: str | None
) -> None:
    assert intent_changed(original, candidate) == why
