"""A rewording that gives a rate to something else is refused by quantity invariance (the
numbers stage): a demo accepted "... 3 rose bushes, where each rose has 25 roses and each rose
has 8 thorns" for "Each rose bush has 25 roses. Each rose has 8 thorns." — the same numbers and
nearly the same words, another problem."""

from __future__ import annotations

import pytest

from steadfast.shared.quantities.invariance import quantity_difference
from steadfast.shared.quantities.rates import moved_rate

ROSES = (
    "Dan plants 3 rose bushes. Each rose bush has 25 roses. Each rose has 8 thorns. How many "
    "thorns are there total?"
)
BOXES = "A shop has 6 boxes. Every box holds 12 pens and each pen costs $2. What are they worth?"


@pytest.mark.parametrize(
    ("original", "candidate", "why"),
    [
        (
            ROSES,
            "What is the total number of thorns on 3 rose bushes, where each rose has 25 roses "
            "and each rose has 8 thorns?",
            'gives "25 roses" each to "rose", where the original gives them to "bush"',
        ),
        (
            ROSES,
            "If there are 8 thorns on each bush and 25 roses per rose, how many thorns do Dan's "
            "3 rose bushes have?",
            'gives "8 thorns" each to "bush", where the original gives them to "rose"',
        ),
        (
            ROSES,
            "How many thorns are on Dan's 3 rose bushes, each with 8 thorns, if each rose bush "
            "has 25 roses?",
            'gives "8 thorns" each to "bushes", where the original gives them to "rose"',
        ),
        # accepted in a demo run (every rose "consisting of 25 roses")
        (
            ROSES,
            "Calculate the sum of thorns in 3 rose bushes, each rose consisting of 25 roses, and "
            "every rose bearing 8 thorns.",
            'gives "25 roses" each to "rose", where the original gives them to "bush"',
        ),
        # accepted in a demo run (the bushes have the thorns) and answered 24, right for it
        (
            ROSES,
            "How many thorns are contained in 3 rose bushes, each of which holds 25 roses and has "
            "8 thorns?",
            'gives "8 thorns" each to "bushes", where the original gives them to "rose"',
        ),
        # a rate written "N things each" after its owner
        (
            ROSES,
            "How many thorns do 3 rose bushes with 8 thorns each have, if each bush has 25 roses?",
            'gives "8 thorns" each to "bushes", where the original gives them to "rose"',
        ),
        (
            BOXES,
            "The shop's 6 boxes each hold 12 pens; each box costs $2. What are they worth?",
            None,  # "$2" is not a rate here (nothing counted after it): left to the judge
        ),
        (
            BOXES,
            "A shop has 6 boxes; each pen holds 12 pens and costs $2. What are they worth?",
            'gives "12 pens" each to "pen", where the original gives them to "box"',
        ),
    ],
)
def test_a_rate_given_to_something_else_is_refused(
    original: str, candidate: str, why: str | None
) -> None:
    assert moved_rate(original, candidate) == why
    if why:
        assert why in (quantity_difference(original, candidate) or "")


@pytest.mark.parametrize(
    "candidate",
    [
        "How many thorns are there altogether on 3 rose bushes, each with 25 roses, and each "
        "rose having 8 thorns?",
        "How many thorns are there in total if each of Dan's 3 rose bushes contains 25 roses, "
        "with each rose having 8 thorns?",
        "If there are 25 roses on each bush and 8 thorns per rose, how many thorns do Dan's 3 "
        "rose bushes have?",
        "Dan's 3 rose bushes each carry 25 roses, and every rose bears 8 thorns. Count the thorns.",
        "Dan has 3 rose bushes, each of which holds 25 roses, and each rose has 8 thorns. How "
        "many thorns in all?",
        "Dan plants 3 rose bushes, each of them with 25 roses that each have 8 thorns. How many?",
        "How many thorns are there on 3 rose bushes with 25 roses each, if each rose has 8 thorns?",
        "Dan has 3 rose bushes that have 25 roses each; every rose has 8 thorns. How many thorns?",
        # a rate written another way is left to the other checks
        "Dan has 3 rose bushes with 25 roses apiece and 8 thorns on every rose. How many thorns?",
        ROSES,
    ],
)
def test_the_same_rates_in_other_words_pass(candidate: str) -> None:
    assert moved_rate(ROSES, candidate) is None
    assert quantity_difference(ROSES, candidate) is None


def test_an_original_without_rates_is_never_refused_for_one() -> None:
    original = "Gretchen has 110 coins. How many does she have if she finds 5 more?"
    assert moved_rate(original, "Each coin has 110 coins; how many after 5 more?") is None


def test_a_rate_said_bare_of_another_owner_is_refused() -> None:
    """Accepted in a demo run of 2026-12-06 (judge 0.75) and answered 24 (3 × 8): the 25
    roses of each bush became what each rose "is"."""
    candidate = (
        "Calculate the total number of thorns in 3 rose bushes, where each rose is 25 and each "
        "rose has 8 thorns."
    )
    assert moved_rate(ROSES, candidate) == (
        'says each "rose" is 25, where the original gives "25 roses" to each "bush"'
    )
    difference = quantity_difference(ROSES, candidate)
    assert difference is not None and 'says each "rose" is 25' in difference


@pytest.mark.parametrize(
    "candidate",
    [
        # the same owner, a bare number: the same rate
        "Dan plants 3 rose bushes; the number of roses on each bush is 25 and each rose has 8 "
        "thorns. How many thorns?",
        # a bare number of a thing the original counts nothing per
        "Dan plants 3 rose bushes of 25 roses, 8 thorns a rose; each row is 3. How many thorns?",
    ],
)
def test_a_bare_number_of_the_same_owner_or_no_owner_passes(candidate: str) -> None:
    assert moved_rate(ROSES, candidate) is None
