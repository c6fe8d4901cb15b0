"""Settings of the gateway service (environment variables ``STEADFAST_GATEWAY_<FIELD>``)."""

from __future__ import annotations

import os
from functools import cache

from shared.settings import ServiceSettings, load_settings


class GatewaySettings(ServiceSettings, kw_only=True):
    #: TOML file of model routes; also read from ``STEADFAST_MODELS_FILE``. Empty: built-in
    #: routes to the bundled local models.
    models_file: str = ""


@cache
def get_settings() -> GatewaySettings:
    overrides = {}
    if "STEADFAST_GATEWAY_MODELS_FILE" not in os.environ and "STEADFAST_MODELS_FILE" in os.environ:
        overrides["models_file"] = os.environ["STEADFAST_MODELS_FILE"]
    return load_settings("gateway", GatewaySettings, **overrides)
