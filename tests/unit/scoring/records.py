"""Builders of metric records for the scoring tests."""

from __future__ import annotations

from steadfast.shared.contracts.scoring import ConsistencyRecord, PositionRecord

SHORT = {"C": "correct", "I": "incorrect", "N": "not_attempted", "X": "invalid"}


def question(
    item: str,
    labels: str,
    model: str = "m",
    values: list[str | None] | None = None,
    kinds: list[str | None] | None = None,
) -> list[ConsistencyRecord]:
    """``question("q1", "C|CII")``: the original's label, then one per paraphrase (C, I, N, X)."""
    original, paraphrases = labels.split("|")
    codes = original + paraphrases
    return [
        ConsistencyRecord(
            item_id=item,
            model=model,
            variant=variant,
            label=SHORT[code],  # type: ignore[arg-type]
            value=values[variant] if values else None,
            kind=kinds[variant] if kinds else None,
        )
        for variant, code in enumerate(codes)
    ]


def pair(
    item: str, first: str | None, second: str | None, model: str = "m", condition: str | None = None
) -> list[PositionRecord]:
    """Both passes of a two-option item: ``first`` chosen with the correct option at A,
    ``second`` with it at B (None: invalid reply)."""
    return [
        PositionRecord(
            item_id=item,
            model=model,
            order="original",
            choice=first,
            correct="A",
            condition=condition,
        ),
        PositionRecord(
            item_id=item,
            model=model,
            order="swapped",
            choice=second,
            correct="B",
            condition=condition,
        ),
    ]
