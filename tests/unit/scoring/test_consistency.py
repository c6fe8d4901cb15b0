"""Hand-computed examples for every docs/method.md §1.4 metric, ties, k = 1 and the exclusions."""

from __future__ import annotations

import math
import tracemalloc

import msgspec
import pytest

from steadfast.services.scoring.domain import consistency
from steadfast.services.scoring.domain.consistency import columns_from_records, consistency_metrics
from steadfast.shared.contracts.scoring import (
    METRIC_NAMES,
    ConsistencyOptions,
    ConsistencyRecord,
    ConsistencyResponse,
)
from steadfast.shared.errors import Unprocessable
from steadfast.shared.problems import status_of
from tests.unit.scoring.records import question

# q1: original correct; paraphrases C I I and one invalid (left out of p and k)
# q2: original incorrect; paraphrases C C
# q3: original correct; paraphrases C N — a tie, broken towards correct
# q4: original invalid — skipped
# q5: original correct; every paraphrase invalid — skipped
# q6: original not attempted; one paraphrase N (k = 1)
DATA = [
    *question("q1", "C|CIIX"),
    *question("q2", "I|CC"),
    *question("q3", "C|CN"),
    *question("q4", "X|C"),
    *question("q5", "C|XX"),
    *question("q6", "N|N"),
]
NORM_Q1 = -(1 / 3 * math.log(1 / 3) + 2 / 3 * math.log(2 / 3)) / math.log(3)


def run(records: list[ConsistencyRecord], **options: object) -> ConsistencyResponse:
    settings = ConsistencyOptions(bootstrap=0, **options)  # type: ignore[arg-type]
    return consistency_metrics(columns_from_records(records), settings)


def values(response: ConsistencyResponse, model: str = "m") -> dict[str, float | None]:
    return {name: metric.value for name, metric in response.models[model].items()}


def test_every_metric_by_hand() -> None:
    result = values(run(DATA))
    expected = {
        "A_orig": 2 / 4,
        "A_expected": (1 / 3 + 1 + 1 / 2 + 0) / 4,
        "A_majority": 2 / 4,
        "mismatch_rate": 2 / 4,
        "iid_mismatch": (4 / 9 + 0 + 1 / 2 + 0) / 4,
        "mode_share": (2 / 3 + 1 + 1 / 2 + 1) / 4,
        "normalized_entropy": (NORM_Q1 + 0 + 1 + 0) / 4,
        "A_any": 3 / 4,
        "A_any_incl_orig": 3 / 4,
        "A_strict": 1 / 4,
        "flip_rate": 1 / 2,
        "recovery_rate": 1 / 2,
        "conflict_rate": 2 / 4,
        "conflict_rate_given_orig_correct": 2 / 2,
        "conflict_rate_given_orig_not_correct": 0 / 2,
        "A_any_given_orig_not_correct": 1 / 2,
    }
    assert result == pytest.approx(expected)
    metrics = run(DATA).models["m"]
    assert metrics["A_orig"].n == 4
    assert metrics["flip_rate"].n == 2 and metrics["recovery_rate"].n == 2


def test_counts_of_invalid_skipped_and_ties() -> None:
    counts = run(DATA).counts["m"]
    assert counts.questions == 6 and counts.used == 4
    assert counts.invalid_answers == 4  # q1's fourth paraphrase, q4's original, q5's two
    assert counts.skipped == 2
    assert counts.skipped_original_invalid == 1 and counts.skipped_no_valid_paraphrase == 1
    assert counts.majority_ties == 1 and counts.dropped_ties == 0


def test_per_item_values() -> None:
    items = {item.item_id: item for item in run(DATA, per_item=True).items or []}
    q1, q3, q6 = items["q1"], items["q3"], items["q6"]
    assert q1.k == 3 and q1.invalid == 1 and q1.majority_label == "incorrect" and not q1.match
    assert q1.iid_mismatch == pytest.approx(4 / 9) and q1.mode_share == pytest.approx(2 / 3)
    assert q1.normalized_entropy == pytest.approx(NORM_Q1) and q1.distinct == 2
    assert q3.tie and q3.majority_label == "correct" and q3.match
    assert q3.entropy == pytest.approx(math.log(2)) and q3.normalized_entropy == pytest.approx(1)
    assert q6.k == 1 and q6.normalized_entropy == 0 and q6.match and q6.mode_share == 1
    assert items["q4"].excluded == "original_invalid" and items["q4"].match is None
    assert items["q5"].excluded == "no_valid_paraphrase"


def test_tie_order_correct_then_incorrect_then_not_attempted() -> None:
    items = run(
        [*question("a", "C|CIN"), *question("b", "C|IN"), *question("c", "I|NNII")],
        per_item=True,
    ).items
    assert [(item.majority_label, item.tie) for item in items or []] == [
        ("correct", True),
        ("incorrect", True),
        ("incorrect", True),
    ]


def test_dropping_ties_removes_them_before_every_mean() -> None:
    response = run(DATA, drop_majority_ties=True)
    result = values(response)
    # q3 (the tie) is gone: q1, q2, q6 remain
    assert result["A_orig"] == pytest.approx(1 / 3)
    assert result["flip_rate"] == pytest.approx(1.0)
    assert result["conflict_rate"] == pytest.approx(1 / 3)
    assert response.counts["m"].dropped_ties == 1 and response.counts["m"].used == 3


def test_strict_threshold() -> None:
    assert values(run(DATA, strict_threshold=0.5))["A_strict"] == pytest.approx(2 / 4)


def test_k_equal_one_everywhere() -> None:
    result = values(run([*question("a", "C|C"), *question("b", "C|I"), *question("c", "I|C")]))
    assert result["normalized_entropy"] == 0
    assert result["conflict_rate"] == 0
    assert result["A_expected"] == pytest.approx(2 / 3)
    assert result["flip_rate"] == pytest.approx(1 / 2) and result["recovery_rate"] == 1


def test_zero_denominator_is_null() -> None:
    metrics = run([*question("a", "C|C"), *question("b", "C|I")]).models["m"]
    assert metrics["recovery_rate"].value is None and metrics["recovery_rate"].n == 0
    assert metrics["A_any_given_orig_not_correct"].value is None


def test_models_are_separate_and_sorted() -> None:
    response = run([*question("a", "C|C", model="zeta"), *question("a", "I|I", model="alpha")])
    assert list(response.models) == ["alpha", "zeta"]
    assert values(response, "alpha")["A_orig"] == 0 and values(response, "zeta")["A_orig"] == 1


def test_slot_accuracy_range() -> None:
    slots = run(DATA).slot_accuracy["m"]
    # slot 1: q1 C, q2 C, q3 C, q6 N; slot 2: q1 I, q2 C, q3 N; slot 3: q1 I
    assert slots.by_slot["1"].value == pytest.approx(3 / 4)
    assert slots.by_slot["2"].value == pytest.approx(1 / 3)
    assert slots.by_slot["3"].value == 0
    assert "4" not in slots.by_slot  # q1's fourth paraphrase is invalid
    assert (slots.min, slots.max) == (0, pytest.approx(3 / 4))


def test_flips_by_kind() -> None:
    kinds: list[str | None] = [None, "plain", "toned", "plain"]
    records = [
        *question("a", "C|CIN", kinds=kinds),
        *question("b", "I|IIC", kinds=kinds),
    ]
    flips = run(records).flips_by_kind["m"]
    # plain: a1 C (no flip), a3 N (flip) | b1, b3 are not counted for flips
    assert (
        flips["plain"].flip_rate.value == pytest.approx(1 / 2) and flips["plain"].flip_rate.n == 2
    )
    assert flips["toned"].flip_rate.value == 1
    # changes vs the original: plain a1 no, a3 yes, b1 no, b3 yes; toned a2 yes, b2 no
    assert flips["plain"].change_rate.value == pytest.approx(2 / 4)
    assert flips["toned"].change_rate.value == pytest.approx(1 / 2)


def test_value_level_ties_go_to_the_original_else_first_seen() -> None:
    records = [
        *question("v1", "I|IIII", values=["5", "6", "5", "6", "5"]),
        *question("v2", "I|IIII", values=["1", "3", "2", "2", "3"]),
    ]
    response = run(records, per_item=True)
    items = {item.item_id: item for item in response.items or []}
    assert items["v1"].majority_value == "5" and items["v1"].value_match and items["v1"].value_tie
    assert items["v2"].majority_value == "3" and items["v2"].value_match is False
    level = response.value_level
    assert level is not None
    result = {name: metric.value for name, metric in level["m"].items()}
    assert result == pytest.approx(
        {
            "value_mismatch_rate": 0.5,
            "value_iid_mismatch": 0.5,
            "value_mode_share": 0.5,
            "value_normalized_entropy": math.log(2) / math.log(4),
            "value_conflict_rate": 1.0,
            "value_distinct": 2.0,
        }
    )


def test_value_level_absent_without_values() -> None:
    assert run(DATA).value_level is None


def test_bootstrap_interval_brackets_the_value_and_is_reproducible() -> None:
    records = [
        record
        for index in range(40)
        for record in question(f"q{index}", "C|CCI" if index % 3 else "I|CII")
    ]
    first = consistency_metrics(columns_from_records(records), ConsistencyOptions(seed=7))
    again = consistency_metrics(columns_from_records(records), ConsistencyOptions(seed=7))
    assert first == again
    for metric in first.models["m"].values():
        if metric.value is not None:
            assert metric.ci_low is not None and metric.ci_high is not None
            assert metric.ci_low <= metric.value + 1e-12 <= metric.ci_high + 2e-12
    a_orig = first.models["m"]["A_orig"]
    assert a_orig.ci_low is not None and a_orig.ci_high is not None
    assert a_orig.ci_low < a_orig.ci_high  # 26 of 40 correct: the interval has a width


def test_duplicate_variant_is_rejected_naming_the_record() -> None:
    records = [*question("a", "C|CI"), *question("a", "C|C")]
    with pytest.raises(Unprocessable) as caught:
        run(records)
    assert status_of(caught.value) == 422 and caught.value.field == "records[3]"


def test_sparse_variant_numbers_count_by_their_value() -> None:
    records = [
        ConsistencyRecord(item_id="a", model="m", variant=variant, label=label)  # type: ignore[arg-type]
        for variant, label in ((0, "correct"), (5, "correct"), (900_000_000, "incorrect"))
    ]
    slots = run(records).slot_accuracy["m"].by_slot
    assert {name: metric.value for name, metric in slots.items()} == {"5": 1.0, "900000000": 0.0}


def test_dropping_ties_drops_the_same_questions_at_value_level() -> None:
    # t's labels tie (one C, one I) though its values agree; METHOD drops it "before every mean"
    records = [
        *question("t", "C|CI", values=["5", "5", "5"]),
        *question("u", "I|II", values=["1", "2", "2"]),
    ]
    level = run(records, drop_majority_ties=True).value_level
    assert level is not None
    assert level["m"]["value_mismatch_rate"].n == 1
    assert level["m"]["value_mismatch_rate"].value == 1.0  # u: 1 against the paraphrases' 2
    kept = run(records).value_level
    assert kept is not None and kept["m"]["value_mismatch_rate"].n == 2


def test_label_intervals_do_not_depend_on_whether_values_were_given() -> None:
    labels = ["C|CI", "I|II", "C|CC", "I|CI", "C|II", "C|CCI"]
    with_values, without = [], []
    for index in range(30):
        shape = labels[index % len(labels)]
        digits: list[str | None] = [str((index + v) % 3) for v in range(len(shape) - 1)]
        with_values += question(f"q{index}", shape, values=digits)
        without += question(f"q{index}", shape)
    options = ConsistencyOptions(seed=1, drop_majority_ties=True)
    given = consistency_metrics(columns_from_records(with_values), options)
    absent = consistency_metrics(columns_from_records(without), options)
    assert given.value_level is not None
    assert given.models == absent.models


def test_a_correct_original_counts_for_a_any_incl_orig_only() -> None:
    result = values(run([*question("a", "C|II"), *question("b", "I|CI")]))
    assert result["A_any"] == pytest.approx(1 / 2)
    assert result["A_any_incl_orig"] == pytest.approx(2 / 2)


@pytest.mark.parametrize(
    ("threshold", "expected"),
    [(0.75, 1 / 2), (0.7, 1 / 2), (0.8, 0.0)],
)
def test_a_strict_at_the_studys_thresholds(threshold: float, expected: float) -> None:
    # 3 of 4 paraphrases correct passes 0.75 and 0.7 (0.7·4 = 2.8), not 0.8 (3.2)
    records = [*question("a", "C|CCCI"), *question("b", "C|CCII")]
    assert values(run(records, strict_threshold=threshold))["A_strict"] == pytest.approx(expected)


def test_slot_and_kind_rates_have_bootstrap_intervals_over_questions() -> None:
    records = [
        record
        for index in range(30)
        for record in question(
            f"q{index}", "C|CI" if index % 2 else "C|IC", kinds=[None, "plain", "toned"]
        )
    ]
    response = consistency_metrics(columns_from_records(records), ConsistencyOptions(seed=3))
    slot = response.slot_accuracy["m"].by_slot["1"]
    assert slot.value == 0.5 and slot.n == 30
    assert slot.ci_low is not None and slot.ci_high is not None
    assert slot.ci_low < 0.5 < slot.ci_high
    plain = response.flips_by_kind["m"]["plain"].flip_rate
    assert plain.value == 0.5 and plain.ci_low is not None and plain.ci_high is not None
    assert plain.ci_low < 0.5 < plain.ci_high
    # when every question answers alike, the interval has no width
    same = consistency_metrics(
        columns_from_records([r for i in range(10) for r in question(f"s{i}", "C|CC")]),
        ConsistencyOptions(seed=3),
    )
    both = same.slot_accuracy["m"].by_slot["2"]
    assert (both.value, both.ci_low, both.ci_high) == (1.0, 1.0, 1.0)


def test_breakdowns_too_large_to_bootstrap_are_tallied_per_model_without_an_interval() -> None:
    # 6000 questions with a variant number of their own: 6000 slots × 6000 questions would be
    # 36 M cells per matrix; the slots are counted per model instead, the labels keep intervals
    records = []
    for index in range(6000):
        shape = "C|C" if index % 4 else "C|I"
        for record in question(f"q{index}", shape):
            if record.variant:
                record = msgspec.structs.replace(record, variant=1000 + index)
            records.append(record)
    tracemalloc.start()
    try:
        response = consistency_metrics(
            columns_from_records(records), ConsistencyOptions(seed=3, bootstrap=20)
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 200e6  # the per-question matrices alone would take over 500 MB
    slots = response.slot_accuracy["m"].by_slot
    assert len(slots) == 6000
    assert slots["1000"].value == 0.0 and slots["1001"].value == 1.0
    assert slots["1001"].n == 1 and slots["1001"].ci_low is None
    a_any = response.models["m"]["A_any"]
    assert a_any.value == pytest.approx(0.75) and a_any.ci_low is not None


def test_breakdowns_that_fit_keep_intervals_and_a_kinds_two_rates_go_together(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    records = [
        record
        for index in range(30)
        for record in question(
            f"q{index}", "C|CI" if index % 2 else "C|IC", kinds=[None, "plain", "toned"]
        )
    ]
    # room for the label matrices, the slots (30 × 3) and the kinds' flip rates (30 × 2), not
    # for their change rates as well: the two are read side by side, so neither has an interval
    budget = 30 * (len(METRIC_NAMES) + 3 + 2)
    monkeypatch.setattr(consistency, "_MAX_BREAKDOWN_CELLS", budget)
    response = consistency_metrics(columns_from_records(records), ConsistencyOptions(seed=3))
    slot = response.slot_accuracy["m"].by_slot["1"]
    assert slot.value == 0.5 and slot.ci_low is not None and slot.ci_low < 0.5
    plain = response.flips_by_kind["m"]["plain"]
    assert plain.flip_rate.value == 0.5 and plain.flip_rate.n == 30
    assert plain.change_rate.value == 0.5 and plain.change_rate.n == 30
    assert plain.flip_rate.ci_low is None and plain.change_rate.ci_low is None


def test_breakdowns_tallied_per_model_hold_only_the_groups_each_model_answered() -> None:
    # 64 models, each with variant numbers of its own: 64 × 32 000 (model, slot) pairs, of which
    # 32 000 have answers; only those are built
    records = []
    for model in range(64):
        for index in range(500):
            for record in question(f"q{index}", "C|CI", model=f"m{model:02}"):
                if record.variant:
                    number = 1000 * (model * 500 + index) + record.variant
                    record = msgspec.structs.replace(record, variant=number)
                records.append(record)
    tracemalloc.start()
    try:
        response = consistency_metrics(
            columns_from_records(records), ConsistencyOptions(bootstrap=0)
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 150e6
    own = response.slot_accuracy["m07"].by_slot
    assert len(own) == 1000
    assert own[str(1000 * 7 * 500 + 1)].value == 1.0
    assert own[str(1000 * 7 * 500 + 2)].value == 0.0
    assert response.slot_accuracy["m07"].min == 0.0


def test_majority_accuracy_and_mismatch_are_told_apart_from_their_neighbours() -> None:
    # a: C|II  b: I|CC  c: N|CC  d: C|CI (tie: correct)  e: I|II
    records = [
        *question("a", "C|II"),
        *question("b", "I|CC"),
        *question("c", "N|CC"),
        *question("d", "C|CI"),
        *question("e", "I|II"),
    ]
    result = values(run(records))
    assert result["A_orig"] == pytest.approx(2 / 5)
    assert result["A_majority"] == pytest.approx(3 / 5)  # b, c, d
    assert result["mismatch_rate"] == pytest.approx(3 / 5)  # a, b, c: o differs from majority
    assert result["conflict_rate"] == pytest.approx(1 / 5)  # d alone has two labels
    assert result["mode_share"] == pytest.approx((1 + 1 + 1 + 1 / 2 + 1) / 5)


def test_value_level_by_hand_leaving_out_invalid_answers_and_originals_without_a_value() -> None:
    records = [
        *question("p", "C|CCI", values=["1", "1", "1", "2"]),
        # the invalid paraphrase's value is left out: 7 against 8, a tie the original wins
        *question("q", "I|IIX", values=["7", "7", "8", "9"]),
        # no value for the original: not counted at value level
        *question("r", "C|CC", values=[None, "3", "4"]),
    ]
    level = run(records).value_level
    assert level is not None
    metrics = level["m"]
    result = {name: metric.value for name, metric in metrics.items()}
    assert result["value_iid_mismatch"] == pytest.approx((4 / 9 + 1 / 2) / 2)
    assert result["value_mode_share"] == pytest.approx((2 / 3 + 1 / 2) / 2)
    assert result["value_mismatch_rate"] == 0
    assert result["value_conflict_rate"] == 1
    assert metrics["value_iid_mismatch"].n == 2


def test_intervals_are_95_percent_and_resample_questions_not_answers() -> None:
    # 80 questions of 11 answers each, half all correct and half all incorrect: over questions
    # the standard error of A_expected is sqrt(.25 / 80) = 0.056, a 95% interval ±0.11 (90%:
    # ±0.09); resampling the 880 answers instead would give ±0.03
    records = []
    for index in range(40):
        records += [
            *question(f"c{index}", "C|" + "C" * 10),
            *question(f"i{index}", "I|" + "I" * 10),
        ]
    settings = ConsistencyOptions(bootstrap=4000)
    metric = consistency_metrics(columns_from_records(records), settings).models["m"]["A_expected"]
    assert metric.ci_low is not None and metric.ci_high is not None
    half_width = (metric.ci_high - metric.ci_low) / 2
    assert 0.1 < half_width < 0.125
