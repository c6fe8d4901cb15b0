"""The warning a report gives for items in a language the judge's calibration did not cover."""

from __future__ import annotations

from steadfast.shared.trust_text import calibration_language_line
from tests.unit.calibration_sample import calibrated_threshold as _threshold


def test_items_in_another_language_than_the_calibration_s_are_named() -> None:
    line = calibration_language_line([_threshold(["en"])], ["en", "it", "it", "en"])
    assert line == (
        "the judge's threshold was calibrated on questions in en; 2 of 4 items are in it, for "
        "which its figures were not measured: their paraphrases may change the question more "
        "often (docs/method.md §1.1, questions in other languages)"
    )


def test_every_language_of_every_calibration_counts() -> None:
    thresholds = [_threshold(["en"]), _threshold(["it"])]
    assert calibration_language_line(thresholds, ["en", "it"]) is None
    line = calibration_language_line(thresholds, ["fr", "en", "de"])
    assert line is not None and "in en, it; 2 of 3 items are in de, fr," in line


def test_no_warning_without_a_recorded_language_or_another_language() -> None:
    assert calibration_language_line([_threshold(["en"])], ["en", "en"]) is None
    # a calibration stored before languages were recorded, or none at all: nothing to compare
    assert calibration_language_line([_threshold([])], ["it"]) is None
    assert calibration_language_line([_threshold(None)], ["it"]) is None
    assert calibration_language_line([_threshold(["en"])], []) is None
