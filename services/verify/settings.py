"""Settings of the verify service (environment variables ``STEADFAST_VERIFY_<FIELD>``)."""

from __future__ import annotations

from functools import cache

from steadfast.shared.settings import ServiceSettings, load_settings


class VerifyServiceSettings(ServiceSettings, kw_only=True):
    """The verify service's settings: the default judge, its concurrency, the embedder and the
    NLI server."""

    #: gateway route of the judge when a request names none
    default_judge_model: str = "local"
    #: judge calls in flight at once per process (the gateway queues beyond its own limits)
    judge_concurrency: int = 16
    #: onnxruntime threads of the embedder
    embedder_threads: int = 1
    #: base URL of an NLI model served with text-embeddings-inference's ``/predict``; empty: none
    nli_url: str = ""


@cache
def get_settings() -> VerifyServiceSettings:
    return load_settings("verify", VerifyServiceSettings)
