"""Settings of the verify service (environment variables ``STEADFAST_VERIFY_<FIELD>``)."""

from __future__ import annotations

from functools import cache

from shared.settings import ServiceSettings, load_settings


class VerifySettings(ServiceSettings, kw_only=True):
    pass


@cache
def get_settings() -> VerifySettings:
    return load_settings("verify", VerifySettings)
