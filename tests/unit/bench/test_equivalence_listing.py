"""bench.equivalence names the stage that refuses a faithful rewording, in the order verify
runs them, and never shows a refused cosine rounded up to its threshold."""

from __future__ import annotations

import pytest

from bench.equivalence.__main__ import Pair, Thresholds, refused_rewordings, refusing_stage
from steadfast.shared.contracts.calibration import JudgeThreshold

THRESHOLDS = Thresholds(
    JudgeThreshold(value=0.7, source="calibrated", origin="test"),
    JudgeThreshold(value=0.65, source="calibrated", origin="test"),
)


def _pair(**fields: object) -> Pair:
    values: dict[str, object] = {
        "id": "fp-1",
        "dataset": "factual",
        "original": "How old is Ann?",
        "candidate": "What is Ann's age?",
        "equivalent": True,
        "kind": "reword",
        "overlap": 0.3,
        "cosine": 0.9,
        "judge": 0.9,
        "audit": 0.9,
    }
    return Pair(**(values | fields))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("fields", "stage"),
    [
        ({"statement": True, "numbers_differ": True}, "form"),
        ({"turned": True, "cosine": 0.1}, "direction"),
        ({"overlap": 0.85, "numbers_differ": True}, "lexical 0.85"),
        ({"numbers_differ": True, "cosine": 0.1}, "numbers"),
        ({"cosine": 0.7996}, "cosine 0.799 < 0.8"),
        ({"judge": 0.69}, "judge 0.69 < 0.70"),
    ],
)
def test_the_first_refusing_stage_is_named(fields: dict[str, object], stage: str) -> None:
    assert refusing_stage(_pair(**fields), THRESHOLDS) == stage


def test_only_refused_faithful_rewordings_are_listed() -> None:
    listing = refused_rewordings(
        [_pair(), _pair(judge=0.2), _pair(judge=0.2, equivalent=False)], THRESHOLDS
    )
    assert listing.splitlines()[1] == "The 1 faithful rewordings the defaults refuse"
    assert len(listing.splitlines()) == 3 and "judge 0.20 < 0.70" in listing
