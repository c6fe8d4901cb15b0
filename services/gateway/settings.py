"""Settings of the gateway service (environment variables ``STEADFAST_GATEWAY_<FIELD>``)."""

from __future__ import annotations

from functools import cache

from shared.settings import ServiceSettings, load_settings


class GatewaySettings(ServiceSettings, kw_only=True):
    pass


@cache
def get_settings() -> GatewaySettings:
    return load_settings("gateway", GatewaySettings)
