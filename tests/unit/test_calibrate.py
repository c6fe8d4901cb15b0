"""``steadfast calibrate``'s pure parts: reading labelled pairs, rates and the threshold rules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from steadfast.calibrate import (
    PairsError,
    calibration_of,
    choose_for_audit,
    choose_for_equivalence,
    pair_languages,
    rates_at,
    read_pairs,
    table,
)
from steadfast.services.gateway.domain.calibration import load_bundled


def _write(path: Path, rows: list[object]) -> Path:
    path.write_text(
        "".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows)
    )
    return path


GOOD = {"original": "Who wrote Hamlet?", "candidate": "Hamlet's author?", "equivalent": True}
BAD = {
    "original": "Who wrote Hamlet?",
    "candidate": "When was Hamlet written?",
    "equivalent": False,
}


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([], "no pairs"),
        (["", "  "], "no pairs"),
        ([GOOD, "{not json"], "line 2: not JSON"),
        ([GOOD, ["a list"]], "line 2: not a JSON object"),
        ([GOOD, {**BAD, "candidate": ""}], "line 2: `candidate` must be a non-empty string"),
        ([{**GOOD, "original": 3}, BAD], "line 1: `original` must be a non-empty string"),
        ([GOOD, {**BAD, "equivalent": "no"}], "line 2: `equivalent` must be true or false"),
        ([GOOD, GOOD], "needs equivalent and meaning-changing pairs"),
        ([GOOD, {**BAD, "task": "poetry"}], "line 2: `task` must be one of factual, math"),
    ],
)
def test_a_bad_pairs_file_is_refused_naming_the_line(
    tmp_path: Path, rows: list[object], message: str
) -> None:
    path = _write(tmp_path / "pairs.jsonl", rows)
    with pytest.raises(PairsError) as error:
        read_pairs(path)
    assert message in str(error.value) and "pairs.jsonl" in str(error.value)


def test_a_missing_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(PairsError, match="cannot be read"):
        read_pairs(tmp_path / "nope.jsonl")


def test_the_bundled_pairs_are_read() -> None:
    name, pairs = read_pairs(None)
    assert name.startswith("bundled") and len(pairs) >= 200
    assert sum(p.equivalent for p in pairs) == len(pairs) // 2
    # every bundled pair names its kind of question, half of each kind faithful
    for task in ("factual", "math"):
        _, of_task = read_pairs(None, task)
        assert of_task and all(p.task == task for p in of_task)
        assert sum(p.equivalent for p in of_task) == len(of_task) // 2
    assert len(read_pairs(None, "factual")[1]) + len(read_pairs(None, "math")[1]) == len(pairs)


def test_pairs_of_a_task_that_the_file_lacks_are_an_error(tmp_path: Path) -> None:
    rows = [{**GOOD, "task": "math"}, {**BAD, "task": "math"}, {**GOOD, "task": "choice"}]
    path = _write(tmp_path / "pairs.jsonl", rows)
    name, maths = read_pairs(path, "math")
    assert [p.task for p in maths] == ["math", "math"] and name == "math pairs of pairs.jsonl"
    with pytest.raises(PairsError, match="no pair of task 'factual'"):
        read_pairs(path, "factual")
    # the pairs of one task must hold both kinds too
    with pytest.raises(PairsError, match="needs equivalent and meaning-changing pairs"):
        read_pairs(path, "choice")


SCORES = [(0.93, True)] * 4 + [(0.72, True)] * 4 + [(0.52, True)] * 2
SCORES += [(0.33, False)] * 6 + [(0.52, False)] * 2 + [(0.12, False)] * 2


def test_rates_count_accepted_rewordings_and_rejected_changes_per_threshold() -> None:
    rates = {r.threshold: r for r in rates_at(SCORES)}
    assert (rates[0.5].accepted_equivalent, rates[0.5].rejected_other) == (10, 8)
    assert (rates[0.55].accepted_equivalent, rates[0.55].rejected_other) == (8, 10)
    assert (rates[0.1].accepted_equivalent, rates[0.1].rejected_other) == (10, 0)
    # changes rejected before the judge count as rejected at every threshold
    assert rates_at(SCORES, screened_other=5)[1].rejected_other == 5


def test_the_equivalence_threshold_is_the_lowest_that_reaches_the_rejection_target() -> None:
    rates = rates_at(SCORES)
    assert choose_for_equivalence(rates, 10, 10, 0.95)[0] == 0.55
    assert choose_for_equivalence(rates, 10, 10, 0.8)[0] == 0.35
    # no threshold rejects every change while keeping the rewordings: best balanced accuracy
    mixed = [(0.6, True), (0.4, True), (0.6, False), (0.2, False)]
    threshold, rule = choose_for_equivalence(rates_at(mixed), 2, 2, 1.01)
    assert threshold in (0.25, 0.3, 0.35, 0.4) and "balanced" in rule


def test_a_judge_that_too_few_changes_reach_is_held_to_methods_default_at_least() -> None:
    # every change is rejected before the judge: any threshold "reaches" the target
    rewordings = [(0.93, True)] * 6 + [(0.42, True)] * 4
    rates = rates_at(rewordings, screened_other=10)
    threshold, rule = choose_for_equivalence(rates, 10, 10, 0.95, judged_other=0)
    assert threshold == 0.5 and "only 0 meaning-changing pairs reached the judge" in rule
    # enough changes reached it: the measured rule decides, even below 0.5
    enough = rewordings + [(0.2, False)] * 10
    assert choose_for_equivalence(rates_at(enough), 10, 10, 0.95, judged_other=10)[0] == 0.25
    # and a measured threshold above the default stands
    high = rewordings + [(0.7, False)] * 2
    rates = rates_at(high, screened_other=8)
    assert choose_for_equivalence(rates, 10, 10, 0.95, judged_other=2)[0] == 0.75
    calibration = calibration_of(
        "judge",
        "judge-v3",
        rewordings,
        "pairs",
        0,
        audit=False,
        target=0.95,
        screened=[False] * 10,
    )
    assert calibration.threshold == 0.5 and "too few" in calibration.rule


def test_the_audit_threshold_is_the_highest_that_keeps_the_rewordings() -> None:
    rates = rates_at(SCORES)
    assert choose_for_audit(rates, 10, 10, 0.95)[0] == 0.5
    assert choose_for_audit(rates, 10, 10, 0.8)[0] == 0.7


def test_a_calibration_counts_the_pairs_screened_before_the_judge() -> None:
    calibration = calibration_of(
        "judge",
        "judge-v3",
        SCORES,
        "pairs.jsonl",
        failed=1,
        audit=False,
        target=0.95,
        screened=[False, False, True],
    )
    assert (calibration.equivalent, calibration.other, calibration.screened) == (11, 12, 3)
    at = calibration.at_threshold()
    assert at is not None and calibration.threshold == 0.55
    assert calibration.task is None
    maths = calibration_of(
        "judge", "judge-v3", SCORES, "pairs.jsonl", 0, audit=False, target=0.95, task="math"
    )
    assert maths.task == "math"
    assert (at.accepted_equivalent, at.rejected_other) == (8, 12)
    assert calibration.failed == 1 and calibration.calibrated_at.startswith("20")


def test_a_calibration_records_and_prints_the_languages_of_its_pairs(tmp_path: Path) -> None:
    italian = {
        "original": "Quando è iniziata la crisi petrolifera del 1973?",
        "candidate": "In che momento è cominciata la crisi del petrolio del 1973?",
        "equivalent": True,
    }
    _, pairs = read_pairs(_write(tmp_path / "pairs.jsonl", [GOOD, BAD, italian]))
    assert pair_languages(pairs) == ["en", "it"]
    calibration = calibration_of(
        "judge",
        "judge-v3",
        SCORES,
        "pairs.jsonl",
        0,
        audit=False,
        target=0.95,
        languages=pair_languages(pairs),
    )
    assert calibration.languages == ["en", "it"]
    assert (
        table(calibration)
        .splitlines()[0]
        .startswith("judge-v3: 10 equivalent and 10 meaning-changing pairs, in en, it (0 rejected")
    )


def test_the_bundled_calibrations_say_which_languages_they_hold_for() -> None:
    bundled = load_bundled()
    assert bundled and all(c.languages for c in bundled)
    judges = [c for c in bundled if not c.prompt_version.startswith("answers")]
    assert {tuple(c.languages) for c in judges} == {("en",)}
