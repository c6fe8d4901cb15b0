"""Settings of the scoring service (environment variables ``STEADFAST_SCORING_<FIELD>``)."""

from __future__ import annotations

from functools import cache

from steadfast.shared.settings import ServiceSettings, load_settings


class ScoringSettings(ServiceSettings, kw_only=True):
    """Scoring's settings: the request body limit, the maths workers and their timeouts, and the
    tokens of a judge's verdict."""

    #: metric requests carry every answer record of an evaluation
    max_body_bytes: int = 64 * 1024 * 1024
    #: worker processes grading maths answers with math-verify
    math_workers: int = 2
    #: start them at start-up rather than on the first maths request
    math_warm_up: bool = True
    #: math-verify's parse and verify timeouts, per answer
    math_timeout_s: int = 5
    #: tokens a judge may spend on its one-letter verdict
    judge_max_tokens: int = 8


@cache
def get_settings() -> ScoringSettings:
    return load_settings("scoring", ScoringSettings)
