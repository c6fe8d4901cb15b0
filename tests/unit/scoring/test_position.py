"""Hand-computed positional-bias examples (method §2.2): pairs, invalid replies, k options."""

from __future__ import annotations

import pytest

from steadfast.services.scoring.domain.position import columns_from_records, position_bias_metrics
from steadfast.shared.contracts.scoring import (
    PositionBiasOptions,
    PositionBiasResponse,
    PositionRecord,
)
from steadfast.shared.errors import Unprocessable
from steadfast.shared.problems import status_of
from tests.unit.scoring.records import pair


def run(records: list[PositionRecord], bootstrap: int = 0) -> PositionBiasResponse:
    return position_bias_metrics(
        columns_from_records(records), PositionBiasOptions(bootstrap=bootstrap)
    )


# AB, AA, AA, BB, BA complete; one pair with an invalid reply; one pass missing
PAIRS = [
    *pair("1", "A", "B"),
    *pair("2", "A", "A"),
    *pair("3", "A", "A"),
    *pair("4", "B", "B"),
    *pair("5", "B", "A"),
    *pair("6", None, "B"),
    pair("7", "A", "B")[0],
]


def test_pair_metrics_by_hand() -> None:
    response = run(PAIRS)
    metrics = {name: metric.value for name, metric in response.models["m"].items()}
    assert response.pairs["m"].AB == 1 and response.pairs["m"].AA == 2
    assert response.pairs["m"].BB == 1 and response.pairs["m"].BA == 1
    assert metrics["n_pairs"] == 5
    assert metrics["PC"] == pytest.approx((1 + 1) / 5)
    assert metrics["PF"] == pytest.approx((1 - 2) / 5)
    assert metrics["abs_PF"] == pytest.approx(1 / 5)
    assert metrics["acc_correct_first"] == pytest.approx((1 + 2) / 5)
    assert metrics["acc_correct_second"] == pytest.approx((1 + 1) / 5)
    # 13 replies, one invalid
    assert metrics["invalid_rate"] == pytest.approx(1 / 13)
    assert response.models["m"]["invalid_rate"].n == 13
    # two-option fluctuation: the choice (by content) changes in AA and BB, not AB or BA;
    # item 6 has one valid reply only, so it is not comparable
    assert metrics["fluctuation_rate"] == pytest.approx(3 / 5)


def test_pf_equals_accuracy_gap_and_recall_by_position() -> None:
    response = run(PAIRS)
    metrics = response.models["m"]
    assert metrics["PF"].value == pytest.approx(
        metrics["acc_correct_second"].value - metrics["acc_correct_first"].value  # type: ignore[operator]
    )
    recall = response.recall_by_position["m"]
    assert recall["A"].value == pytest.approx(3 / 5) and recall["B"].value == pytest.approx(2 / 5)
    assert metrics["recall_std"].value == pytest.approx(0.1)


def test_the_pass_is_told_apart_by_the_correct_letter_not_the_order_name() -> None:
    flipped = [
        PositionRecord(item_id="x", model="m", order="original", choice="B", correct="B"),
        PositionRecord(item_id="x", model="m", order="swapped", choice="B", correct="A"),
    ]
    assert run(flipped).pairs["m"].BB == 1


def test_by_condition() -> None:
    records = [
        *pair("1", "A", "B", condition="low"),
        *pair("2", "A", "A", condition="medium"),
        *pair("3", "A", "A", condition="medium"),
    ]
    response = run(records)
    assert response.by_condition["low"]["m"]["PC"].value == 1
    assert response.by_condition["medium"]["m"]["PF"].value == -1
    assert response.models["m"]["n_pairs"].value == 3


def test_no_complete_pair_gives_nulls() -> None:
    metrics = run(pair("1", None, None)).models["m"]
    assert metrics["PF"].value is None and metrics["PC"].value is None
    assert metrics["n_pairs"].value == 0 and metrics["invalid_rate"].value == 1


def _permutations(item: str, choices: list[str | None], k: int = 3) -> list[PositionRecord]:
    """One record per cyclic permutation: the correct option at A, B, C..."""
    return [
        PositionRecord(
            item_id=item,
            model="m",
            order=str(index),
            choice=choice,
            correct=chr(ord("A") + index),
            n_options=k,
        )
        for index, choice in enumerate(choices)
    ]


def test_k_options_recall_spread_and_fluctuation() -> None:
    # item 1 always right; item 2 always picks A (changes content); item 3 always the option
    # one after the correct one (consistent, wrong); item 4 has an invalid reply
    records = [
        *_permutations("1", ["A", "B", "C"]),
        *_permutations("2", ["A", "A", "A"]),
        *_permutations("3", ["B", "C", "A"]),
        *_permutations("4", ["A", None, "C"]),
    ]
    response = run(records)
    metrics = {name: metric.value for name, metric in response.models["m"].items()}
    assert metrics["n_pairs"] == 3
    assert metrics["PC"] == pytest.approx(2 / 3)
    # recall with the correct option at A: items 1, 2; at B: 1; at C: 1  (over 3 complete)
    recall = response.recall_by_position["m"]
    assert [recall[letter].value for letter in "ABC"] == pytest.approx([2 / 3, 1 / 3, 1 / 3])
    # population standard deviation of (2/3, 1/3, 1/3): sqrt((4 + 1 + 1) / 81 / 3)
    assert metrics["recall_std"] == pytest.approx(2**0.5 / 9)
    # item 4: valid replies A (offset 0) and C (offset 0): unchanged
    assert metrics["fluctuation_rate"] == pytest.approx(1 / 4)
    assert metrics["invalid_rate"] == pytest.approx(1 / 12)
    # PC and the fluctuation rate rest on different units, and the response says which
    counted = response.models["m"]
    assert (counted["PC"].n, counted["fluctuation_rate"].n) == (3, 4)
    assert response.metric_sets["PC"].startswith("complete units")
    assert "at least two valid replies" in response.metric_sets["fluctuation_rate"]


def test_letter_beyond_the_options_is_rejected() -> None:
    records = [PositionRecord(item_id="1", model="m", order="original", choice="C", correct="A")]
    with pytest.raises(Unprocessable) as caught:
        run(records)
    assert caught.value.field == "records[0].choice"


def test_repeated_pass_is_rejected() -> None:
    records = [*pair("1", "A", "B"), pair("1", "B", "B")[0]]
    with pytest.raises(Unprocessable) as caught:
        run(records)
    assert status_of(caught.value) == 422 and caught.value.field == "records[2]"


def test_items_with_a_pass_missing_are_counted_not_silently_dropped() -> None:
    records = [*pair("a", "A", "B"), pair("b", "A", "A")[0], *pair("c", "A", "B", model="n")]
    result = run(records)
    assert result.incomplete_items == {"m": 1, "n": 0}
    assert result.models["m"]["PC"].n == 1  # item b is in no pair metric


def test_pf_intervals_resample_items_and_bracket_the_value() -> None:
    # 60 items: 30 BB (recency-preferred), 30 AB: PF = 0.5, over items its standard error is
    # sqrt(.25 / 60) = 0.065, a 95% interval about ±0.13; |PF| and recall_std get one too
    records = [
        record for i in range(30) for record in (*pair(f"b{i}", "B", "B"), *pair(f"a{i}", "A", "B"))
    ]
    metrics = run(records, bootstrap=4000).models["m"]
    pf = metrics["PF"]
    assert pf.value == pytest.approx(0.5)
    assert pf.ci_low is not None and pf.ci_high is not None
    assert pf.ci_low < 0.5 < pf.ci_high and 0.1 < (pf.ci_high - pf.ci_low) / 2 < 0.16
    for name in ("abs_PF", "recall_std"):
        low, high = metrics[name].ci_low, metrics[name].ci_high
        assert low is not None and high is not None
        assert low <= metrics[name].value <= high  # type: ignore[operator]


def test_the_interval_resamples_questions_not_each_condition_of_one() -> None:
    # four questions, each asked in three conditions with the same outcome in all three: the
    # evidence is four questions (PC 0.5), not twelve independent ones
    records = [
        record
        for item, (first, second) in enumerate([("A", "B"), ("A", "B"), ("A", "A"), ("A", "A")])
        for condition in ("low", "medium", "high")
        for record in pair(str(item), first, second, condition=condition)
    ]
    pc = run(records, bootstrap=2000).models["m"]["PC"]
    assert pc.value == pytest.approx(0.5) and pc.n == 12
    # resampling 4 questions reaches all-AB and all-AA draws (p = 1/16 each); resampling 12
    # units would keep the interval near [0.25, 0.75]
    assert pc.ci_low == pytest.approx(0.0) and pc.ci_high == pytest.approx(1.0)
