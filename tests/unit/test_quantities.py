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


def test_numbers_too_long_to_read_as_values_are_compared_as_written() -> None:
    huge = "9" * 5000
    assert quantities(f"{huge} sheep and {huge}/{huge} of a goat, a million {huge}") == {
        huge,
        f"{huge}/{huge}",
    }
    assert quantity_difference(f"Count {huge} sheep.", f"Count sheep numbering {huge}.") is None
    assert quantity_difference(f"Count {huge} sheep.", "Count the sheep.") == (
        "missing 999999999999…"
    )
    long_fraction = f"Take 1.{'5' * 90} of 2"  # not an integer, still shown
    assert quantity_difference(long_fraction, "Take 2") == f"missing {float('1.' + '5' * 15):g}"
