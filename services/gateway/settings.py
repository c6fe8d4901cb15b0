"""Settings of the gateway service (environment variables ``STEADFAST_GATEWAY_<FIELD>``)."""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path
from typing import Annotated, Literal

import msgspec

from steadfast.shared.settings import ServiceSettings, load_settings


class GatewaySettings(ServiceSettings, kw_only=True):
    """The gateway's settings: the routes file, local threads, streaming, the response cache,
    shadow checks and the admin key."""

    #: TOML file of model routes; also read from ``STEADFAST_MODELS_FILE``. Empty: built-in
    #: routes to the bundled local models.
    models_file: str = ""
    #: llama.cpp threads of a local route whose ``threads`` is unset; unset: all cores but one,
    #: which leaves a core to the services. A machine that runs little beside the model (the
    #: demo: one job, one model) is faster with every core: on 2 cores the demo took 294 s
    #: with 2 threads against 409 s with 1 (measured 2026-12-04)
    local_threads: Annotated[int, msgspec.Meta(ge=1, le=256)] | None = None
    #: where the bundled local models' GGUF files are (assembled on first use when missing);
    #: empty: ``<data_dir>/models``. An image or a volume prepared once with
    #: ``steadfast models prepare --dir DIR`` may be mounted read-only here
    models_dir: str = ""
    #: a streamed chat completion not answered within this many seconds starts its stream (the
    #: role first, then an SSE comment every ``stream_keepalive_s``), so that a proxy between
    #: the caller and the gateway does not give up on a strategy that takes minutes; an error
    #: after that arrives as an ``error`` event instead of a status code
    stream_hold_s: float = 5.0
    stream_keepalive_s: float = 10.0
    #: cached answers older than this many days are not served (the model is asked again) and
    #: are deleted by a sweep every ``cache_sweep_s``; 0 keeps them for ever
    cache_max_age_days: Annotated[float, msgspec.Meta(ge=0)] = 0.0
    cache_sweep_s: Annotated[float, msgspec.Meta(gt=0)] = 3600.0
    #: shadow checks: the share of plain chat completions checked on a route without its own
    #: ``shadow_rate``, the paraphrases each asks, the checks waiting at most (more are dropped
    #: and counted), the workers running them, the share of a route's concurrency they may take,
    #: and the route writing the paraphrases (default: the answering route)
    shadow_rate: Annotated[float, msgspec.Meta(ge=0.0, le=1.0)] = 0.0
    shadow_k: Annotated[int, msgspec.Meta(ge=1, le=10)] = 3
    shadow_queue: Annotated[int, msgspec.Meta(ge=1, le=100000)] = 100
    shadow_workers: Annotated[int, msgspec.Meta(ge=1, le=64)] = 2
    shadow_share: Annotated[float, msgspec.Meta(gt=0.0, le=1.0)] = 0.25
    shadow_generator: str | None = None
    #: a check waits at most this long for a moment with no live completion being served
    shadow_defer_s: Annotated[float, msgspec.Meta(ge=0.0, le=600.0)] = 2.0
    #: stored shadow disagreements (they hold callers' questions) are deleted after this many
    #: days, by a sweep every ``cache_sweep_s``
    shadow_store_days: Annotated[float, msgspec.Meta(gt=0.0)] = 30.0
    #: the key that reads stored shadow disagreements (``Authorization: Bearer <key>``); unset:
    #: they cannot be read
    admin_key: str | None = None
    #: ``keys``: the endpoints for callers (``/v1/chat/completions``, ``/v1/models``,
    #: ``/v1/self-paraphrase``, ``/v1/generate[/batch]``) need an API key of the one key store
    #: (``steadfast keys create``) or the services' internal token; ``open``: none (127.0.0.1)
    auth: Literal["keys", "open"] = "open"
    #: the database holding the API keys: empty, the evaluator's (as the evaluator reads it)
    keys_database_url: str = ""
    #: how long a key's verdict is remembered: a revoked key stops working within this time
    key_cache_s: Annotated[float, msgspec.Meta(ge=0.0, le=30.0)] = 10.0

    def resolved_models_dir(self) -> Path:
        """``models_dir``, else ``<data_dir>/models``."""
        return Path(self.models_dir) if self.models_dir else self.resolved_data_dir() / "models"


@cache
def get_settings() -> GatewaySettings:
    overrides = {}
    if "STEADFAST_GATEWAY_MODELS_FILE" not in os.environ and "STEADFAST_MODELS_FILE" in os.environ:
        overrides["models_file"] = os.environ["STEADFAST_MODELS_FILE"]
    return load_settings("gateway", GatewaySettings, **overrides)
