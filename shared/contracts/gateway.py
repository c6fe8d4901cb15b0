"""Wire contracts of the model gateway (``/v1/generate``, ``/v1/models``)."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from steadfast.shared.contracts.base import MAX_STORED_INT, Contract, ModelSeed, Problem, Task

Role = Literal["system", "user", "assistant"]
#: ``time_limit``: the reply stopped at the request's ``time_limit_s``; its text is what was
#: written by then
FinishReason = Literal["stop", "length", "content_filter", "error", "unknown", "time_limit"]
#: typed failure of one model call (``too_large``: the request is more than the model takes, a
#: body or a context too long: the caller's to shorten, never retried)
Outcome = Literal[
    "rate_limited",
    "timeout",
    "upstream_error",
    "bad_response",
    "refused",
    "unavailable",
    "too_large",
]
BackendName = Literal["openai", "gemini", "ollama", "local"]
#: samples one generate request may ask for (``n``)
MAX_SAMPLES = 16


class ChatMessage(Contract, kw_only=True):
    """One message of a chat conversation."""

    role: Role
    content: str


class GenerateRequest(Contract, kw_only=True):
    """One chat completion by a named route. Greedy (temperature 0) by default."""

    model: Annotated[
        str,
        msgspec.Meta(
            min_length=1,
            max_length=200,
            description=(
                "a route of GET /v1/models, or '<strategy>:<route>' (single-prompt, "
                "canonicalize, paraphrase-vote) to answer with that self-paraphrase strategy"
            ),
        ),
    ]
    messages: Annotated[list[ChatMessage], msgspec.Meta(min_length=1)]
    temperature: Annotated[float, msgspec.Meta(ge=0.0, le=2.0)] = 0.0
    max_tokens: Annotated[int, msgspec.Meta(ge=1, le=32768)] | None = None
    seed: ModelSeed | None = None
    stop: Annotated[list[str], msgspec.Meta(max_length=8)] | None = None
    top_logprobs: Annotated[int, msgspec.Meta(ge=1, le=20)] | None = None
    #: distinguishes repeated samples of the same request (part of the cache key)
    sample_index: Annotated[int, msgspec.Meta(ge=0, le=MAX_STORED_INT)] = 0
    n: Annotated[
        int,
        msgspec.Meta(
            ge=1,
            le=MAX_SAMPLES,
            description=(
                "samples of this prompt, all returned in `samples`. An OpenAI-compatible route "
                "writes them in one upstream request (the prompt is read and paid for once), "
                "a local route up to one a slot (`n_parallel`); beyond that, and on Gemini and "
                "Ollama routes, sample i is asked alone with `sample_index + i` and `seed + i`. "
                "A strategy model ('<strategy>:<route>') answers 422 to n > 1"
            ),
        ),
    ] = 1
    cache: bool = True
    time_limit_s: (
        Annotated[
            float,
            msgspec.Meta(
                gt=0,
                le=3600,
                description=(
                    "stop writing this many seconds after the gateway received the request and "
                    "answer with what was written by then (finish_reason `time_limit`; a reply "
                    "that ends sooner is answered as usual). Local and OpenAI-compatible routes "
                    "stream the reply to stop it; Gemini and Ollama routes write it to the end. "
                    "Not with `top_logprobs`, nor with a strategy model (422). A reply cut short "
                    "is not cached"
                ),
            ),
        ]
        | None
    ) = None
    #: the question's task: a ``"<strategy>:<route>"`` model reads and groups its answers by it
    #: (math: numbers, factual: normalised text; inferred from the replies when absent); a plain
    #: route ignores it
    task: Task | None = None


class Usage(Contract, kw_only=True):
    """Tokens the backends reported: those of the prompts (input) and of the replies (output)."""

    input_tokens: int = 0
    output_tokens: int = 0


class ModelCalls(Contract, kw_only=True):
    """The model calls a service made on a request's behalf: every call (failed ones too),
    those the response cache answered, and the tokens the backends reported. A service that
    fails reports none: its calls are then missing from the caller's sums."""

    calls: int = 0
    cached_calls: int = 0
    usage: Usage = msgspec.field(default_factory=Usage)


class TokenAlternative(Contract, kw_only=True):
    """A candidate first token and its log-probability."""

    token: str
    logprob: float


class GenerateResponse(Contract, kw_only=True):
    """A route's reply to a generate request, with its usage, latency and cache status."""

    text: str
    #: the backend's model name (e.g. ``gpt-4.1-mini``); ``route`` is the name the caller used
    model: str
    backend: str
    route: str = ""
    finish_reason: FinishReason
    usage: Usage
    latency_s: float
    cached: bool
    #: the first generated token's alternatives, when ``top_logprobs`` was asked for
    logprobs: list[TokenAlternative] | None = None
    #: upstream attempts made (0 for a cache hit)
    attempts: int = 1
    samples: Annotated[
        list[str] | None,
        msgspec.Meta(description="every sample's text, in order, when n > 1 (text is the first)"),
    ] = None


class GenerateBatchRequest(Contract, kw_only=True):
    """``POST /v1/generate/batch``: many generate requests, answered in order."""

    requests: Annotated[list[GenerateRequest], msgspec.Meta(min_length=1, max_length=1000)]


class GatewayProblem(Problem, kw_only=True, omit_defaults=True):
    """The gateway's problem details: a model call that failed for good also says its typed
    ``outcome``, the ``attempts`` made and, when the failure is for now, the seconds to wait
    (``retry_after_s``, also the response's Retry-After)."""

    outcome: str | None = None
    attempts: int | None = None
    retry_after_s: float | None = None


def gateway_outcome(problem: Problem) -> str | None:
    """The typed outcome of a model call the gateway reported failed; None for any other problem
    (another service's, a request the gateway refused, a gateway that could not be reached)."""
    return problem.outcome if isinstance(problem, GatewayProblem) else None


class GenerateBatchItem(Contract, kw_only=True):
    """Exactly one of ``result`` and ``error`` is set."""

    result: GenerateResponse | None = None
    error: GatewayProblem | None = None


class GenerateBatchResponse(Contract, kw_only=True):
    """One item per request, in the requests' order."""

    results: list[GenerateBatchItem]


class ModelRoute(Contract, kw_only=True):
    """A route as listed by ``GET /v1/models`` (never with its key)."""

    name: str
    backend: str
    model: str
    base_url: str | None = None
    max_concurrency: int
    requests_per_minute: int | None = None
    timeout_s: float
    max_retries: int
    supports_logprobs: bool


class OpenAIModel(Contract, kw_only=True):
    """A model name as OpenAI's ``GET /v1/models`` lists it."""

    id: str
    object: Literal["model"] = "model"
    created: int = 0
    owned_by: str = "steadfast"


class ModelList(Contract, kw_only=True):
    """The routes with their settings (``models``) and, in OpenAI's shape (``object``,
    ``data``), every name a chat completion may ask for: each route and each
    ``<strategy>:<route>``."""

    models: list[ModelRoute]
    object: Literal["list"] = "list"
    data: list[OpenAIModel] = msgspec.field(default_factory=list)
