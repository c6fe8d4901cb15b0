"""``POST /v1/chat/completions``: an OpenAI-compatible reliability proxy.

The model name picks the route and strategy (``"paraphrase-vote:local"``); a plain route passes
through. Every error is in OpenAI's shape, so OpenAI client libraries raise their usual
exceptions."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from litestar import Controller, Request, Response, post
from litestar.di import NamedDependency
from litestar.exceptions import HTTPException, ValidationException
from litestar.openapi import ResponseSpec
from litestar.params import JSONBody
from litestar.response import Stream

from steadfast.services.gateway.controllers.callers import (
    CALLER_FORBIDDEN,
    CALLER_RATE_LIMITED,
    CALLER_SECURITY,
    KEY_UNAUTHORIZED,
    charge_caller,
    require_caller,
)
from steadfast.services.gateway.controllers.problems import (
    counting_unread_rejections,
    problem_for,
    retry_after_headers,
)
from steadfast.services.gateway.controllers.streaming import StreamTiming
from steadfast.services.gateway.domain.errors import (
    GatewayError,
    GenerationFailed,
    UnknownRoute,
    UnsupportedParameter,
)
from steadfast.services.gateway.strategies import metrics, openai_format
from steadfast.services.gateway.strategies.paraphrasers import ParaphraseOptionsRefused
from steadfast.services.gateway.strategies.question import AnswerSettings
from steadfast.services.gateway.strategies.service import PASSTHROUGH, SelfParaphraseService
from steadfast.services.gateway.strategies.shadow import ShadowChecker
from steadfast.shared.contracts.gateway import Usage
from steadfast.shared.contracts.proxy import (
    ChatCompletion,
    ChatCompletionRequest,
    OpenAIError,
    StrategyOptions,
    split_model,
)
from steadfast.shared.errors import OverLimit, field_from_message
from steadfast.shared.metering import MeteredCaller
from steadfast.shared.problems import (
    TOO_DEEP_BODY,
    ProblemError,
    internal_error,
    is_too_deep_body,
    is_undecodable_body,
    undecodable_body_error,
    validation_errors,
)

logger = logging.getLogger(__name__)

#: OpenAI's ``finish_reason`` for the gateway's (a blocked answer is a ``refused`` failure)
FINISH_REASONS = {"length": "length"}
#: OpenAI's error ``code`` where it has its own for a gateway outcome
ERROR_CODES = {"rate_limited": "rate_limit_exceeded"}


class ChatCompletionsController(Controller):
    """``/v1/chat/completions``: the OpenAI-compatible proxy, answering with a self-paraphrase
    strategy or a plain route, its errors in OpenAI's shape."""

    path = "/v1"
    tags = ["proxy"]  # noqa: RUF012
    guards = [require_caller]  # noqa: RUF012
    security = CALLER_SECURITY
    exception_handlers = {  # noqa: RUF012
        ValidationException: counting_unread_rejections(
            lambda request, exc: _invalid(request, exc)
        ),
        ProblemError: lambda _, exc: _error(
            exc.status, exc.detail or exc.title, exc.field, getattr(exc, "code", None)
        ),
        HTTPException: counting_unread_rejections(lambda request, exc: _http_error(request, exc)),
        GatewayError: lambda _, exc: _gateway_error(exc),
        OverLimit: lambda _, exc: _over_limit(exc),
        Exception: counting_unread_rejections(lambda request, exc: _unexpected(request, exc)),
    }

    @post(
        "/chat/completions",
        operation_id="createChatCompletion",
        summary="OpenAI-compatible chat completion, answered by a self-paraphrase strategy",
        description=(
            "`model` is `<strategy>:<route>` (single-prompt, canonicalize, paraphrase-vote) or a "
            "plain route, which passes through. With `stream: true` the final answer is sent as "
            "`chat.completion.chunk` server-sent events ending with `data: [DONE]`."
        ),
        status_code=200,
        responses={
            status: ResponseSpec(
                data_container=OpenAIError, description=description, generate_examples=False
            )
            for status, description in {
                401: KEY_UNAUTHORIZED,
                403: CALLER_FORBIDDEN,
                400: "Invalid request; also an OpenAI option the proxy does not honour set to "
                "anything but its neutral value (`n` 1, `top_p` 1, penalties 0, no `logit_bias`, "
                "`logprobs`, `tools`, a text `response_format`)",
                404: "Unknown model route",
                413: "More than the model takes (the body or the context is too long)",
                422: "Unsupported parameter, or the answer was refused",
                429: f"{CALLER_RATE_LIMITED}. In OpenAI's shape: `rate_limit_exceeded` for the "
                "requests per minute, `insufficient_quota` for the token budget",
                502: "Upstream error",
                500: "Unexpected error (its type; the request id finds it in the log)",
                503: "Backend unavailable",
                504: "Timed out",
            }.items()
        },
    )
    async def create_chat_completion(
        self,
        request: Request[Any, Any, Any],
        data: JSONBody[ChatCompletionRequest],
        self_paraphrase: NamedDependency[SelfParaphraseService],
        shadow: NamedDependency[ShadowChecker],
        stream_timing: NamedDependency[StreamTiming],
    ) -> Response[ChatCompletion]:
        def charge(calls: int, usage: Usage) -> None:
            charge_caller(request, calls, usage)

        if not data.stream:
            return Response(await _complete(data, self_paraphrase, shadow, charge))
        include_usage = bool(data.stream_options and data.stream_options.include_usage)
        timing = stream_timing
        work = asyncio.ensure_future(_complete(data, self_paraphrase, shadow, charge))
        try:
            await asyncio.wait({work}, timeout=timing.hold_s)
        except asyncio.CancelledError:
            work.cancel()
            raise
        if work.done():  # answered (or failed, with its status code) before the stream starts
            events: AsyncIterator[bytes] | Iterator[bytes] = openai_format.chunk_events(
                work.result(), include_usage
            )
        else:
            events = _events_once_answered(work, data.model, include_usage, timing.keepalive_s)
        return Stream(  # type: ignore[return-value]
            events, media_type="text/event-stream", headers={"Cache-Control": "no-cache"}
        )


async def _events_once_answered(
    work: asyncio.Future[ChatCompletion], model: str, include_usage: bool, keepalive_s: float
) -> AsyncIterator[bytes]:
    """The stream of an answer still being worked out: the role at once, a comment line every
    ``keepalive_s`` until the answer is ready, then its chunks, or an ``error`` event (which
    OpenAI's clients raise as an ``APIError``)."""
    opening = openai_format.opening_chunk(
        openai_format.new_completion_id(), model, int(time.time()), include_usage
    )
    try:
        yield openai_format.event(opening)
        while not (await asyncio.wait({work}, timeout=keepalive_s))[0]:
            yield b": keep-alive\n\n"
        try:
            completion = work.result()
        except Exception as exc:
            yield openai_format.error_event(_error_body(exc))
            return
        completion.id, completion.created = opening.id, opening.created
        for chunk in openai_format.chunk_events(completion, include_usage, opened=True):
            yield chunk
    finally:
        work.cancel()  # the caller went away: a strategy still running is not waited for
        if work.done() and not work.cancelled():
            work.exception()  # retrieved: a failure the caller left before is not logged as lost


class UnsupportedField(ProblemError):
    """A field set to a value the proxy cannot honour (OpenAI's own 400 for such a field)."""

    code = "unsupported_parameter"


#: counts a request's model calls and their tokens against the caller's key
Charge = Callable[[int, Usage], None]


async def _complete(
    data: ChatCompletionRequest,
    service: SelfParaphraseService,
    shadow: ShadowChecker,
    charge: Charge,
) -> ChatCompletion:
    strategy, route = split_model(data.model)
    unsupported = openai_format.unsupported_field(data)
    if unsupported is not None:
        metrics.record_rejected(strategy or PASSTHROUGH)
        field, detail = unsupported
        raise UnsupportedField(400, "Unsupported parameter", detail, field=field)
    settings = openai_format.answer_settings(data, route)
    if strategy is None:
        return await _pass_through(data, settings, service, shadow, charge)
    try:
        question = openai_format.question_of(data)
    except ValueError as exc:
        metrics.record_rejected(strategy)
        raise ProblemError(400, "Invalid request", str(exc), field="messages") from exc
    options = data.steadfast or StrategyOptions()
    meter = MeteredCaller(service.gateway)
    try:
        run = await service.run(strategy, question, settings, options, meter)
    finally:  # every call of the strategy, perturb's too; those of a failed run as well
        charge(meter.calls, meter.usage)
    return openai_format.completion(
        data.model,
        run.result.content,
        run.meter.usage,
        finish_reason=FINISH_REASONS.get(run.result.finish_reason, "stop"),
        steadfast=openai_format.steadfast_info(run, route),
    )


async def _pass_through(
    data: ChatCompletionRequest,
    settings: AnswerSettings,
    service: SelfParaphraseService,
    shadow: ShadowChecker,
    charge: Charge,
) -> ChatCompletion:
    """A plain route: the conversation as it came (no user message needed), one call; a
    sample of the answers is checked afterwards with paraphrases (shadow checks)."""
    if data.steadfast is not None:
        detail = "steadfast options need a '<strategy>:<route>' model, e.g. paraphrase-vote:local"
        metrics.record_rejected(PASSTHROUGH)
        raise ProblemError(400, "Invalid request", detail, field="steadfast")
    try:
        with shadow.serving():
            passed = await service.passthrough(settings, openai_format.conversation(data))
    except GenerationFailed as failure:
        charge(1, Usage())  # a call made (its tokens unknown)
        if failure.outcome != "refused":
            raise
        # as OpenAI answers a blocked completion: 200, no content, finish_reason content_filter
        return openai_format.completion(data.model, "", Usage(), finish_reason="content_filter")
    if shadow.draws(settings.route):
        with contextlib.suppress(ValueError):  # a conversation without a question: no check
            shadow.offer(openai_format.question_of(data), settings, passed.response)
    charge(1, passed.response.usage)
    reason = FINISH_REASONS.get(passed.response.finish_reason, "stop")
    return openai_format.completion(
        data.model, passed.response.text, passed.response.usage, finish_reason=reason
    )


def _error(
    status: int,
    message: str,
    param: str | None = None,
    code: str | None = None,
    headers: dict[str, str] | None = None,
) -> Response[Any]:
    body = openai_format.error_body(status, message, param, code)
    return Response(body, status_code=status, headers=headers)


def _error_body(exc: Exception) -> OpenAIError:
    """The OpenAI error body of an error that ended a streamed answer."""
    if isinstance(exc, GatewayError):
        response = _gateway_error(exc)
    elif isinstance(exc, ProblemError):
        response = _error(exc.status, exc.detail or exc.title, exc.field)
    else:
        logger.exception("unhandled error in a streamed chat completion", exc_info=exc)
        response = _error(500, internal_error(exc).detail or "internal error")
    body: OpenAIError = response.content
    return body


def _http_error(request: Request[Any, Any, Any], exc: HTTPException) -> Response[Any]:
    if is_undecodable_body(exc):
        error = undecodable_body_error(request, exc.detail)
        return _error(400, error.message, None if error.field == "body" else error.field)
    if exc.status_code == 401:  # OpenAI's code for it: its SDKs raise AuthenticationError
        return _error(401, exc.detail, code="invalid_api_key", headers=exc.headers)
    return _error(exc.status_code, exc.detail)


def _invalid(request: Request[Any, Any, Any], exc: ValidationException) -> Response[Any]:
    errors = validation_errors(exc.extra, request)
    if not errors:
        return _error(400, exc.detail, field_from_message(exc.detail))
    message = "; ".join(error.message for error in errors)
    param = errors[0].field
    return _error(400, message, None if param == "body" else param)


def _gateway_error(exc: GatewayError) -> Response[Any]:
    problem = problem_for(exc)
    headers = retry_after_headers(problem) or {}
    if isinstance(exc, GenerationFailed):
        # the gateway has retried as the route allows: a client's own retries would repeat
        # every call of a strategy again
        headers["x-should-retry"] = "false"
    code = problem.outcome and ERROR_CODES.get(problem.outcome, problem.outcome)
    param = None
    if isinstance(exc, UnknownRoute):
        code, param = "model_not_found", _request_field(exc.field)
    elif isinstance(exc, UnsupportedParameter):
        code, param = "unsupported_parameter", exc.field
    elif isinstance(exc, ParaphraseOptionsRefused):
        param = _request_field(exc.field)
    elif problem.errors:
        param = problem.errors[0].field
    return _error(problem.status, problem.detail or problem.title, param, code, headers)


def _over_limit(exc: OverLimit) -> Response[Any]:
    """A key over its limit, as OpenAI answers (its SDKs raise ``RateLimitError``): requests
    per minute as its rate limits (``rate_limit_exceeded``, which the SDKs retry after the
    Retry-After), a spent token budget as its ``insufficient_quota`` (not to be retried)."""
    headers = {"Retry-After": str(exc.retry_after_s)}
    body = openai_format.error_body(429, exc.detail, code="rate_limit_exceeded")
    if exc.limit == "token_budget":
        body.error.type = body.error.code = "insufficient_quota"
        headers["x-should-retry"] = "false"  # spent until the period ends
    return Response(body, status_code=429, headers=headers)


def _request_field(field: str) -> str:
    """The chat request's name of a field: strategy options come in ``steadfast``."""
    return field if field == "model" else f"steadfast.{field}"


def _unexpected(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    if is_too_deep_body(exc):
        return _error(400, TOO_DEEP_BODY.message)
    logger.exception("unhandled error on %s %s", request.method, request.url.path)
    return _error(500, internal_error(exc).detail or "internal error")
