"""Settings of the perturb service (environment variables ``STEADFAST_PERTURB_<FIELD>``)."""

from __future__ import annotations

from functools import cache

from steadfast.shared.settings import ServiceSettings, load_settings


class PerturbSettings(ServiceSettings, kw_only=True):
    """The perturb service's settings: how many questions and generation calls run at once."""

    #: questions of one batch request built at the same time (the gateway limits model calls)
    batch_concurrency: int = 4
    #: generation requests of one paraphrase set in flight at once (the bundled local model
    #: serves 4 at a time; raise it for remote APIs)
    generation_concurrency: int = 4


@cache
def get_settings() -> PerturbSettings:
    return load_settings("perturb", PerturbSettings)
