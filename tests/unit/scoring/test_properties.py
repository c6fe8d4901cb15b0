"""Properties of the metrics (hypothesis): orderings, degenerate inputs, record order."""

from __future__ import annotations

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from steadfast.services.scoring.domain import consistency, position
from steadfast.shared.contracts.scoring import (
    ConsistencyOptions,
    ConsistencyRecord,
    PositionBiasOptions,
    PositionRecord,
)
from tests.unit.scoring.records import pair

LABELS = ["correct", "incorrect", "not_attempted", "invalid"]
EPS = 1e-9


@st.composite
def consistency_records(draw: st.DrawFn, labels: list[str] = LABELS) -> list[ConsistencyRecord]:
    records = []
    for model in draw(st.lists(st.sampled_from(["m1", "m2", "m3"]), min_size=1, unique=True)):
        for item in range(draw(st.integers(1, 6))):
            k = draw(st.integers(1, 5))
            for variant in range(k + 1):
                records.append(
                    ConsistencyRecord(
                        item_id=f"q{item}",
                        model=model,
                        variant=variant,
                        label=draw(st.sampled_from(labels)),  # type: ignore[arg-type]
                        value=draw(st.sampled_from(["1", "2", "3", None])),
                        kind=draw(st.sampled_from(["plain", "toned", None])),
                    )
                )
    return records


def consistency_of(records: list[ConsistencyRecord], **options: object) -> object:
    settings_ = ConsistencyOptions(bootstrap=20, per_item=True, **options)  # type: ignore[arg-type]
    return consistency.consistency_metrics(consistency.columns_from_records(records), settings_)


@settings(max_examples=60, deadline=None)
@given(consistency_records(), st.sampled_from([1.0, 0.75, 0.5]), st.booleans())
def test_strict_expected_any_ordering(
    records: list[ConsistencyRecord], threshold: float, drop_ties: bool
) -> None:
    response = consistency.consistency_metrics(
        consistency.columns_from_records(records),
        ConsistencyOptions(bootstrap=0, strict_threshold=threshold, drop_majority_ties=drop_ties),
    )
    for metrics in response.models.values():
        strict, expected, any_ = (
            metrics[name].value for name in ("A_strict", "A_expected", "A_any")
        )
        if expected is None:
            assert strict is None and any_ is None
            continue
        assert strict is not None and any_ is not None
        if threshold == 1.0:
            assert strict <= expected + EPS
        assert expected <= any_ + EPS
        assert metrics["A_any"].value <= metrics["A_any_incl_orig"].value + EPS  # type: ignore[operator]


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(["correct", "incorrect", "not_attempted"]),
    st.lists(st.integers(1, 6), min_size=1, max_size=8),
)
def test_identical_labels_everywhere(label: str, ks: list[int]) -> None:
    records = [
        ConsistencyRecord(item_id=f"q{item}", model="m", variant=variant, label=label)  # type: ignore[arg-type]
        for item, k in enumerate(ks)
        for variant in range(k + 1)
    ]
    metrics = consistency.consistency_metrics(
        consistency.columns_from_records(records), ConsistencyOptions(bootstrap=0)
    ).models["m"]
    assert metrics["mismatch_rate"].value == 0
    assert metrics["conflict_rate"].value == 0
    assert metrics["iid_mismatch"].value == 0
    assert metrics["A_any"].value == metrics["A_strict"].value


@settings(max_examples=40, deadline=None)
@given(consistency_records(), st.randoms(use_true_random=False))
def test_record_order_changes_nothing(records: list[ConsistencyRecord], rng) -> None:  # type: ignore[no-untyped-def]
    shuffled = list(records)
    rng.shuffle(shuffled)
    assert msgspec.json.encode(consistency_of(records)) == msgspec.json.encode(
        consistency_of(shuffled)
    )


CHOICES = st.sampled_from(["A", "B", None])


@st.composite
def position_records(draw: st.DrawFn) -> list[PositionRecord]:
    records: list[PositionRecord] = []
    for item in range(draw(st.integers(1, 12))):
        passes = pair(
            str(item),
            draw(CHOICES),
            draw(CHOICES),
            condition=draw(st.sampled_from(["low", "high"])),
        )
        records.extend(passes[: draw(st.integers(1, 2))])
    return records


@settings(max_examples=80, deadline=None)
@given(position_records())
def test_pf_is_the_accuracy_gap_and_bounded_by_pc(records: list[PositionRecord]) -> None:
    response = position.position_bias_metrics(
        position.columns_from_records(records), PositionBiasOptions(bootstrap=0)
    )
    for metrics in [response.models["m"], *(m["m"] for m in response.by_condition.values())]:
        pf, pc = metrics["PF"].value, metrics["PC"].value
        if pf is None:
            assert metrics["n_pairs"].value == 0
            continue
        assert pc is not None
        first, second = metrics["acc_correct_first"].value, metrics["acc_correct_second"].value
        assert abs(pf - (second - first)) < EPS  # type: ignore[operator]
        assert abs(pf) <= 1 - pc + EPS
        assert -1 <= pf <= 1 and 0 <= pc <= 1


@settings(max_examples=30, deadline=None)
@given(position_records(), st.randoms(use_true_random=False))
def test_position_record_order_changes_nothing(records: list[PositionRecord], rng) -> None:  # type: ignore[no-untyped-def]
    shuffled = list(records)
    rng.shuffle(shuffled)
    options = PositionBiasOptions(bootstrap=20, seed=3)
    first = position.position_bias_metrics(position.columns_from_records(records), options)
    second = position.position_bias_metrics(position.columns_from_records(shuffled), options)
    assert msgspec.json.encode(first) == msgspec.json.encode(second)


@settings(max_examples=30, deadline=None)
@given(consistency_records())
def test_sparse_variant_numbers_give_the_same_metrics(records: list[ConsistencyRecord]) -> None:
    """Dense variant numbers take the per-question sort, sparse ones the global sort."""
    sparse = [msgspec.structs.replace(record, variant=record.variant * 1000) for record in records]
    dense_result = consistency_of(records)
    sparse_result = consistency_of(sparse)
    assert dense_result.models == sparse_result.models  # type: ignore[attr-defined]
    assert dense_result.value_level == sparse_result.value_level  # type: ignore[attr-defined]
    assert dense_result.items == sparse_result.items  # type: ignore[attr-defined]


@st.composite
def permutation_records(draw: st.DrawFn) -> list[PositionRecord]:
    """Items with k = 3 options, one record per cyclic permutation (some missing)."""
    records: list[PositionRecord] = []
    for item in range(draw(st.integers(1, 10))):
        for index in range(draw(st.integers(1, 3))):
            records.append(
                PositionRecord(
                    item_id=str(item),
                    model="m",
                    order=str(index),
                    choice=draw(st.sampled_from(["A", "B", "C", None])),
                    correct="ABC"[index],
                    n_options=3,
                )
            )
    return records


@settings(max_examples=60, deadline=None)
@given(permutation_records())
def test_k_option_bounds(records: list[PositionRecord]) -> None:
    metrics = position.position_bias_metrics(
        position.columns_from_records(records), PositionBiasOptions(bootstrap=0)
    ).models["m"]
    pf, pc, fluctuation = (metrics[n].value for n in ("PF", "PC", "fluctuation_rate"))
    if pf is not None:
        assert pc is not None and abs(pf) <= 1 - pc + EPS
    if fluctuation is not None:
        assert 0 <= fluctuation <= 1
    spread = metrics["recall_std"].value
    assert spread is None or 0 <= spread <= 0.5 + EPS
