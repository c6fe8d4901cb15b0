"""Settings of the evaluator service (environment variables ``STEADFAST_EVALUATOR_<FIELD>``)."""

from __future__ import annotations

from functools import cache

from shared.settings import ServiceSettings, load_settings


class EvaluatorSettings(ServiceSettings, kw_only=True):
    pass


@cache
def get_settings() -> EvaluatorSettings:
    return load_settings("evaluator", EvaluatorSettings)
