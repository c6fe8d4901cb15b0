"""Wire contracts of the self-paraphrase strategies (``/v1/self-paraphrase``) and the
OpenAI-compatible reliability proxy (``/v1/chat/completions``) — docs/method.md §1.5."""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

import msgspec

from steadfast.shared.contracts.base import Contract, ModelSeed, Task
from steadfast.shared.contracts.gateway import ChatMessage, Usage
from steadfast.shared.contracts.verify import VerifyOptions

StrategyName = Literal["single-prompt", "canonicalize", "paraphrase-vote"]
STRATEGY_NAMES: tuple[str, ...] = get_args(StrategyName)
#: messages one conversation may have (chat and agent histories run to hundreds; the body limit
#: bounds them too)
MAX_MESSAGES = 2000
#: where a variant's question comes from
VariantSource = Literal["original", "paraphrase", "canonical"]
#: ``not_asked``: a restatement the model wrote inside its single-prompt reply, or a paraphrase
#: left out of paraphrase-vote because it changed the question's numbers (``error`` says how)
VariantStatus = Literal["answered", "failed", "skipped", "not_asked"]
#: how a vote groups free-form answers: ``semantic`` (default): by meaning, cheap steps first
#: and the judge only for pairs they leave undecided (shared/answer_equivalence.py);
#: ``normalized`` (or ``exact``): equal normalised text, no judge; ``judge``: the judge on every
#: pair of different texts. Maths and choice answers are always grouped by their exact value
Grouping = Literal["semantic", "normalized", "exact", "judge"]
#: the grouping that ran: the task's exact value, normalised text, or meaning clusters
Clustering = Literal["exact", "normalised", "semantic", "judge"]


def split_model(model: str) -> tuple[StrategyName | None, str]:
    """A model name as strategy and route: ``"paraphrase-vote:local"`` → ``("paraphrase-vote",
    "local")``; a plain route (even one containing ``:``) → ``(None, route)``."""
    prefix, separator, route = model.partition(":")
    if separator and route and prefix in STRATEGY_NAMES:
        return prefix, route  # type: ignore[return-value]
    return None, model


class StrategyOptions(Contract, kw_only=True):
    """How a strategy runs; also the ``steadfast`` extension object of a chat completion request."""

    k: Annotated[int, msgspec.Meta(ge=1, le=20)] = 5
    #: how answers are compared (math: numbers, factual: normalised text, choice: the option
    #: letter); inferred when absent: choice for a question listing lettered options, else math
    #: when most replies box their answer, else factual
    task: Task | None = None
    #: gateway route that writes the paraphrases (through the perturb service); default: the
    #: answering model itself
    generator: Annotated[str, msgspec.Meta(min_length=1, max_length=200)] | None = None
    #: verify the paraphrases (through the perturb service): ``true`` for the default settings
    verify: bool | VerifyOptions = False
    #: stop answering paraphrases once the majority can no longer change (the answer is the
    #: full vote's; the original is always answered, so the reply is the original's whenever it
    #: agrees; ``agreement`` is then the share among the variants answered before the stop)
    early_stop: bool = False
    grouping: Grouping = "semantic"
    #: gateway route of the equivalence judge (``semantic`` and ``judge`` grouping); default: the
    #: answering route
    judge_model: Annotated[str, msgspec.Meta(min_length=1, max_length=200)] | None = None
    #: use the gateway's response cache (false: every model call goes upstream); answers sampled
    #: (temperature above 0) without a ``seed`` are never cached: each request is a new draw
    cache: bool = True


class SelfParaphraseRequest(StrategyOptions, kw_only=True):
    """Exactly one of ``question`` and ``messages`` (whose last user message is the question)."""

    model: Annotated[str, msgspec.Meta(min_length=1, max_length=200)]
    question: Annotated[str, msgspec.Meta(min_length=1, max_length=20000)] | None = None
    messages: (
        Annotated[list[ChatMessage], msgspec.Meta(min_length=1, max_length=MAX_MESSAGES)] | None
    ) = None
    strategy: StrategyName = "paraphrase-vote"
    #: temperature of the answers (default 0: greedy)
    temperature: Annotated[float, msgspec.Meta(ge=0.0, le=2.0)] | None = None
    max_tokens: Annotated[int, msgspec.Meta(ge=1, le=32768)] | None = None
    #: seed of the sampled steps (rewrites, paraphrases), for reproducibility
    seed: ModelSeed | None = None


class Variant(Contract, kw_only=True):
    """One wording of the question a strategy asked (the original, a paraphrase or a
    canonical rewrite), the answer it got and its part in the vote."""

    question: str
    source: VariantSource
    status: VariantStatus = "answered"
    #: the final answer extracted from ``text``
    answer: str | None = None
    #: the model's whole reply
    text: str | None = None
    #: the key answers were grouped by (None: no parseable answer, it took no part in the vote)
    value: str | None = None
    in_majority: bool = False
    #: why the variant failed or was skipped
    error: str | None = None


class SelfParaphraseResponse(Contract, kw_only=True):
    """The strategy's answer, its agreement across wordings, every variant, and the calls and
    tokens it cost."""

    answer: str | None
    text: str
    #: share of the voting variants whose answer is the majority's (None: no vote took place;
    #: with ``early_stop``, of the variants answered before the stop — the skipped ones are listed)
    agreement: float | None
    strategy: StrategyName
    model: str
    task: Task
    variants: list[Variant]
    #: summed over every model call the request made, those of the perturb and verify services
    #: included when they write or verify the paraphrases (as are ``calls`` and ``cached_calls``)
    usage: Usage
    latency_s: float
    calls: int
    cached_calls: int
    failed_variants: int
    early_stopped: bool = False
    #: what did not go as asked (failed variants, fewer paraphrases than k, ...)
    notes: list[str] = msgspec.field(default_factory=list)
    prompt_version: str = ""
    #: how the answers were grouped for the vote, and the judge calls that cost (within
    #: ``calls``)
    clustering: Clustering | None = None
    clustering_judge_calls: int = 0


# --- OpenAI-compatible chat completions ----------------------------------------------------


class TextPart(Contract, kw_only=True):
    """A text part of a message's content."""

    type: Literal["text"]
    text: str


class ProxyMessage(Contract, kw_only=True):
    """A message; an assistant reply sent back as the SDKs serialise it (``refusal``,
    ``annotations`` and null tool fields) is accepted, tool calls are not."""

    role: Literal["system", "developer", "user", "assistant"]
    content: str | list[TextPart] | None = None
    name: str | None = None
    refusal: str | None = None
    annotations: list[Any] | None = None
    #: accepted only empty or null (no tools): see ``openai_format.unsupported_field``
    tool_calls: list[Any] | None = None
    function_call: Any | None = None
    audio: Any | None = None


class StreamOptions(Contract, kw_only=True):
    """Options of a streamed completion (``stream`` true)."""

    include_usage: bool = False
    include_obfuscation: bool | None = None  # nothing to obfuscate: ignored


class ChatCompletionRequest(Contract, kw_only=True):
    """The supported subset of OpenAI's request; any other field is refused (400), not ignored.

    ``model`` is ``"<strategy>:<route>"`` (e.g. ``paraphrase-vote:local``) or a plain route."""

    model: Annotated[str, msgspec.Meta(min_length=1, max_length=200)]
    messages: Annotated[list[ProxyMessage], msgspec.Meta(min_length=1, max_length=MAX_MESSAGES)]
    temperature: Annotated[float, msgspec.Meta(ge=0.0, le=2.0)] | None = None
    max_tokens: Annotated[int, msgspec.Meta(ge=1, le=32768)] | None = None
    max_completion_tokens: Annotated[int, msgspec.Meta(ge=1, le=32768)] | None = None
    seed: ModelSeed | None = None
    stop: str | Annotated[list[str], msgspec.Meta(max_length=8)] | None = None
    #: one choice only: a larger n is refused by name (``openai_format.unsupported_field``)
    n: Annotated[int, msgspec.Meta(ge=1)] | None = None
    stream: bool | None = None
    stream_options: StreamOptions | None = None
    user: str | None = None
    # accepted at the value that changes nothing (clients send them by default), refused at any
    # other: see ``openai_format.unsupported_field``
    top_p: float | None = None
    presence_penalty: float | None = None
    frequency_penalty: float | None = None
    logit_bias: dict[str, float] | None = None
    logprobs: bool | None = None
    top_logprobs: int | None = None
    tools: list[Any] | None = None
    tool_choice: str | dict[str, Any] | None = None
    parallel_tool_calls: bool | None = None
    response_format: dict[str, Any] | None = None
    # ignored: bookkeeping with no effect on the answer
    metadata: dict[str, str] | None = None
    store: bool | None = None
    service_tier: str | None = None
    #: options of the strategy (send with the OpenAI client's ``extra_body``)
    steadfast: StrategyOptions | None = None


class CompletionUsage(Contract, kw_only=True):
    """Tokens of a completion, in OpenAI's names, summed over the model calls it made."""

    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class AssistantMessage(Contract, kw_only=True):
    """The answer of a chat completion."""

    role: Literal["assistant"]
    content: str
    refusal: None = None


class CompletionChoice(Contract, kw_only=True):
    """The one choice of a chat completion."""

    index: int
    message: AssistantMessage
    finish_reason: str
    logprobs: None = None


class SteadfastInfo(Contract, kw_only=True):
    """The consistency information added to a proxied completion."""

    strategy: StrategyName
    route: str
    answer: str | None
    agreement: float | None
    task: Task
    variants: list[Variant]
    calls: int
    cached_calls: int
    failed_variants: int
    early_stopped: bool
    notes: list[str]
    prompt_version: str
    #: how the answers were grouped for the vote, and the judge calls that cost (within
    #: ``calls``)
    clustering: Clustering | None = None
    clustering_judge_calls: int = 0


class ChatCompletion(Contract, kw_only=True, omit_defaults=True):
    """A ``chat.completion``; ``steadfast`` is absent when a plain route passed through."""

    id: str
    object: Literal["chat.completion"]
    created: int
    model: str
    choices: list[CompletionChoice]
    usage: CompletionUsage
    steadfast: SteadfastInfo | None = None


class ChunkDelta(Contract, kw_only=True, omit_defaults=True):
    """What a streamed chunk adds to the answer: the role on the first chunk, then text."""

    role: Literal["assistant"] | None = None
    content: str | None = None


class ChunkChoice(Contract, kw_only=True):
    """The one choice of a streamed chunk."""

    index: int
    delta: ChunkDelta
    finish_reason: str | None
    logprobs: None = None


class ChatCompletionChunk(Contract, kw_only=True, omit_defaults=True):
    """One ``chat.completion.chunk`` server-sent event."""

    id: str
    object: Literal["chat.completion.chunk"]
    created: int
    model: str
    choices: list[ChunkChoice]
    #: with ``stream_options.include_usage``: null on every chunk but the last, as OpenAI
    #: sends it; without: absent
    usage: CompletionUsage | msgspec.UnsetType | None = msgspec.UNSET
    steadfast: SteadfastInfo | None = None


class OpenAIErrorBody(Contract, kw_only=True):
    """The error's message, type, parameter and code, as OpenAI sends them."""

    message: str
    type: str
    param: str | None
    code: str | None


class OpenAIError(Contract, kw_only=True):
    """OpenAI's error shape, so its client libraries raise their usual exceptions."""

    error: OpenAIErrorBody


class ShadowVariant(Contract, kw_only=True):
    """A paraphrase a shadow check asked, its answer, and whether it agrees with the caller's."""

    question: str
    answer: str | None = None
    agrees: bool = False


class ShadowDisagreement(Contract, kw_only=True):
    """A live answer that its paraphrases did not all confirm (stored only for a route with
    ``shadow_store``)."""

    route: str
    question: str
    answer: str
    #: share of the answered paraphrases whose answer is grouped with the caller's
    agreement: float
    variants: list[ShadowVariant]
    #: Unix time of the check
    created_at: float
    elapsed_s: float = 0.0


class ShadowDisagreementPage(Contract, kw_only=True):
    """``GET /v1/shadow/disagreements``: stored shadow-check disagreements, newest first."""

    disagreements: list[ShadowDisagreement]
