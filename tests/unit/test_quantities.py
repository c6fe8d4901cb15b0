from __future__ import annotations

from fractions import Fraction

from shared.quantities import quantities, quantity_difference


def test_quantities_read_digits_fractions_and_words() -> None:
    text = "Three boxes of 1,000 pens cost $4.50, twenty-five of them 1/4 more, twice a dozen."
    assert quantities(text) == {
        Fraction(3),
        Fraction(1000),
        Fraction(9, 2),
        Fraction(25),
        Fraction(1, 4),
        Fraction(2),
        Fraction(12),
    }
    assert quantities(text, words=False) == {Fraction(1000), Fraction(9, 2), Fraction(1, 4)}
    assert quantities("three hundred people") == {Fraction(300)}


def test_a_paraphrase_may_write_digits_as_words_but_not_drop_or_add_them() -> None:
    original = "A cat eats 9 sausages in 30 minutes; a dog takes 2/3 of that time."
    assert (
        quantity_difference(
            original,
            "In 30 minutes a cat eats nine sausages; a dog needs two-thirds as long... 2/3 of it.",
        )
        is None
    )
    assert (
        quantity_difference(
            original, "A cat eats 9 sausages in 40 minutes; a dog takes 2/3 of that time."
        )
        == "missing 30; added 40"
    )
    assert quantity_difference("How old is she?", "What is her age?") is None
