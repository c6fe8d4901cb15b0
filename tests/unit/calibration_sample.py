"""A judge threshold calibrated on pairs in given languages, for the tests of what a report says
of items in other languages."""

from __future__ import annotations

from steadfast.shared.contracts.calibration import JudgeCalibration, JudgeThreshold


def calibrated_threshold(languages: list[str] | None) -> JudgeThreshold:
    """A bundled-like threshold of 0.70, calibrated on pairs in ``languages`` (None: not
    calibrated at all, METHOD's default)."""
    if languages is None:
        return JudgeThreshold(value=0.5, source="method_default", origin="METHOD's default")
    calibration = JudgeCalibration(
        route="local",
        prompt_version="judge-v3",
        threshold=0.7,
        rule="rule",
        pairs="bundled calibration_pairs.jsonl",
        equivalent=75,
        other=75,
        rates=[],
        calibrated_at="2026-12-04T00:00:00+00:00",
        languages=languages,
    )
    return JudgeThreshold(value=0.7, source="calibrated", origin="bundled", calibration=calibration)
