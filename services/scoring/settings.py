"""Settings of the scoring service (environment variables ``STEADFAST_SCORING_<FIELD>``)."""

from __future__ import annotations

from functools import cache

from shared.settings import ServiceSettings, load_settings


class ScoringSettings(ServiceSettings, kw_only=True):
    pass


@cache
def get_settings() -> ScoringSettings:
    return load_settings("scoring", ScoringSettings)
