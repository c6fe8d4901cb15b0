"""Every error leaves a service as problem-details JSON (``application/problem+json``)."""

from __future__ import annotations

import inspect
import json
import logging
import math
import os
import re
import traceback
from typing import Any

import msgspec
from litestar import Litestar, Request, Response
from litestar.constants import RESERVED_KWARGS
from litestar.enums import ParamType
from litestar.exceptions import (
    ClientException,
    HTTPException,
    SerializationException,
    ValidationException,
)
from litestar.exceptions.http_exceptions import RequestEntityTooLarge
from litestar.openapi import ResponseSpec
from litestar.openapi.spec import OpenAPIHeader, OpenAPIResponse, OpenAPIType, Schema
from litestar.params import ParameterKwarg
from litestar.status_codes import (
    HTTP_400_BAD_REQUEST,
    HTTP_404_NOT_FOUND,
    HTTP_409_CONFLICT,
    HTTP_413_REQUEST_ENTITY_TOO_LARGE,
    HTTP_422_UNPROCESSABLE_ENTITY,
    HTTP_429_TOO_MANY_REQUESTS,
    HTTP_500_INTERNAL_SERVER_ERROR,
    HTTP_503_SERVICE_UNAVAILABLE,
)
from litestar.utils.scope.state import ScopeState
from sqlalchemy.exc import DBAPIError

from steadfast.shared.contracts.base import FieldError, Problem
from steadfast.shared.errors import (
    NAMED_FIELD,
    Conflict,
    InvalidRequest,
    NotFound,
    OverLimit,
    RequestRefused,
    TooLarge,
    Unavailable,
    Unprocessable,
    field_from_message,
)
from steadfast.shared.guards import INTERNAL_UNAUTHORIZED, require_internal_token
from steadfast.shared.request_context import current_request_id

PROBLEM_MEDIA_TYPE = "application/problem+json"
logger = logging.getLogger(__name__)


class ProblemError(Exception):
    """Raised by domain code or controllers for an error the caller should see."""

    def __init__(
        self,
        status: int,
        title: str,
        detail: str | None = None,
        *,
        field: str | None = None,
        source: str = "body",
    ) -> None:
        super().__init__(detail or title)
        self.status = status
        self.title = title
        self.detail = detail
        self.field = field
        #: where ``field`` is: ``body``, ``path``, ``query`` or ``header``
        self.source = source


def problem_response(problem: Problem, headers: dict[str, str] | None = None) -> Response[Any]:
    problem.request_id = problem.request_id or current_request_id.get()
    return Response(
        content=msgspec.json.encode(problem),
        status_code=problem.status,
        media_type=PROBLEM_MEDIA_TYPE,
        headers=headers,
    )


def validation_errors(extra: Any, request: Request[Any, Any, Any]) -> list[FieldError]:
    """The field errors of a Litestar ``ValidationException.extra``, each with its full path,
    a parameter named as the caller sent it."""
    errors: list[FieldError] = []
    for entry in extra if isinstance(extra, list) else []:
        if not isinstance(entry, dict):
            continue
        message = str(entry.get("message", "invalid value"))
        key = entry.get("key")
        if key == "data":  # litestar's name for the whole body
            key = None
        field = field_from_message(message)
        if field is None:
            field = key or "body"
        elif key and NAMED_FIELD.search(message) and not field.startswith(f"{key}."):
            # litestar keeps the path of a missing/unknown field in the key, not the message
            field = f"{key}.{field}"
        error = FieldError(field=str(field), message=_readable(message), source=_source_of(entry))
        errors.append(_as_sent(request, error))
    return errors


_HEADERS_OR_COOKIES = (ParamType.HEADER, ParamType.COOKIE)


def _as_sent(request: Request[Any, Any, Any], error: FieldError) -> FieldError:
    """litestar names a parameter by its Python name (``idempotency_key``, not the header's
    ``Idempotency-Key``) and gives any whose name begins with "data" (``dataset_id``) as the
    body's; the handler's signature says what the caller sent."""
    handler = request.scope.get("route_handler")
    if handler is None or (error.source == "body" and not error.field.startswith("data")):
        return error
    parameter = handler.parsed_fn_signature.parameters.get(error.field)
    if parameter is None or error.field in RESERVED_KWARGS:
        return error
    if error.field in request.path_params:
        return FieldError(field=error.field, message=error.message, source="path")
    kwarg = parameter.kwarg_definition
    if not isinstance(kwarg, ParameterKwarg):
        return FieldError(field=error.field, message=error.message, source="query")
    kind = kwarg.param_type
    source = kind.value if kind is not None and kind in _HEADERS_OR_COOKIES else "query"
    return FieldError(field=kwarg.name or error.field, message=error.message, source=source)


#: litestar's message for a required parameter that did not come
_MISSING_PARAMETER = re.compile(r"Missing required (?P<source>\w+) parameter '(?P<name>[^']+)'")


def _missing_parameter(detail: str) -> FieldError | None:
    missing = _MISSING_PARAMETER.search(detail)
    if missing is None:
        return None
    return FieldError(field=missing["name"], message=detail, source=missing["source"])


#: msgspec's words for the rule of :data:`STORABLE_TEXT` (its backslash escaped once or twice)
_NO_NUL_RULE = re.compile(r"matching regex '\^\[\^\\+x00\]\*\$'")


#: litestar's message for a body that is missing altogether (a KeyError's text)
_MISSING_BODY = "'data'"


def _readable(message: str) -> str:
    if message == _MISSING_BODY:
        return "the request body is empty: a JSON object is expected"
    return _NO_NUL_RULE.sub("without a NUL character (\\\\u0000)", message)


def handle_validation(request: Request[Any, Any, Any], exc: ValidationException) -> Response[Any]:
    errors = validation_errors(exc.extra, request)
    detail = exc.detail
    if not errors:
        missing = _missing_parameter(detail)
        errors = [missing or FieldError(field=field_from_message(detail) or "body", message=detail)]
    detail = "; ".join(f"{error.field}: {error.message}" for error in errors)
    return problem_response(
        Problem(title="Invalid request", status=HTTP_400_BAD_REQUEST, detail=detail, errors=errors)
    )


def is_undecodable_body(exc: Exception) -> bool:
    """Litestar raises a bare ClientException from the decoder's error when the body cannot be
    decoded at all (its other bare ones are of headers: a bad Host, a bad Content-Length)."""
    return type(exc) is ClientException and isinstance(exc.__cause__, SerializationException)


#: msgspec's words for a body nested deeper than the interpreter's recursion limit
_TOO_DEEP = "while deserializing"


def is_too_deep_body(exc: Exception) -> bool:
    """msgspec raises a plain ``RecursionError`` for a body nested too deep to decode; one
    raised while decoding something else (a service's reply) is not the caller's."""
    if not isinstance(exc, RecursionError) or _TOO_DEEP not in str(exc):
        return False
    frames = traceback.extract_tb(exc.__traceback__)
    return any(frame.filename.endswith(_BODY_DECODER) for frame in frames)


#: where litestar decodes a request body (``Request.json``)
_BODY_DECODER = os.path.join("litestar", "connection", "request.py")


TOO_DEEP_BODY = FieldError(field="body", message="the body nests too deep to decode")


def is_unread_body(exc: Exception) -> bool:
    """Whether ``exc`` refused a request body before it could be read as the endpoint's request:
    too large, undecodable, too deep or not of the request's shape."""
    return (
        isinstance(exc, ValidationException | RequestEntityTooLarge)
        or is_undecodable_body(exc)
        or is_too_deep_body(exc)
    )


#: msgspec's message for a number no float holds (``1e999``), which it cannot place in the body
_OUT_OF_RANGE = "Number out of range"
_OUT_OF_RANGE_MESSAGE = "number out of range: no float holds it"
#: a body larger than this is not parsed a second time to find where such a number is
_SEARCHED_BODY_BYTES = 1024 * 1024


def undecodable_body_error(request: Request[Any, Any, Any], detail: str) -> FieldError:
    """The field error of a body that could not be decoded, naming the field where it can."""
    if detail.startswith(_OUT_OF_RANGE):
        field = _field_out_of_range(request) or "body"
        return FieldError(field=field, message=_OUT_OF_RANGE_MESSAGE)
    return FieldError(field=field_from_message(detail) or "body", message=detail)


def _field_out_of_range(request: Request[Any, Any, Any]) -> str | None:
    # the stdlib parser reads such a number as ±inf, whose place names the field; litestar
    # keeps the body it read in the scope (an internal API: without it the answer names no field)
    body = ScopeState.from_scope(request.scope).body
    if not isinstance(body, bytes) or len(body) > _SEARCHED_BODY_BYTES:
        return None
    try:
        document = json.loads(body)
    except (ValueError, RecursionError):
        return None
    return _path_of_infinity(document)


def _path_of_infinity(document: Any) -> str | None:
    """The path (``items[1].k``) of the first infinite number in ``document``, depth first."""
    pending: list[tuple[str, Any]] = [("", document)]
    while pending:
        path, value = pending.pop()
        if isinstance(value, float) and math.isinf(value):
            return path or None
        if isinstance(value, dict):
            children = [(f"{path}.{key}" if path else str(key), v) for key, v in value.items()]
        elif isinstance(value, list):
            children = [(f"{path}[{index}]", child) for index, child in enumerate(value)]
        else:
            continue
        pending.extend(reversed(children))
    return None


def _malformed_body(error: FieldError) -> Response[Any]:
    return problem_response(
        Problem(
            title="Malformed JSON body",
            status=HTTP_400_BAD_REQUEST,
            detail=f"{error.field}: {error.message}",
            errors=[error],
        )
    )


def handle_http(request: Request[Any, Any, Any], exc: HTTPException) -> Response[Any]:
    if is_undecodable_body(exc):
        return _malformed_body(undecodable_body_error(request, exc.detail))
    errors = validation_errors(exc.extra, request) or None
    problem = Problem(
        title=_title_for(exc.status_code, exc.detail),
        status=exc.status_code,
        detail=exc.detail,
        errors=errors,
    )
    return problem_response(problem, headers=exc.headers)


def _source_of(entry: dict[str, Any]) -> str:
    """``body``, ``query``, ``path``... (litestar gives a parameter's as an enum)."""
    source = entry.get("source", "body")
    return str(getattr(source, "value", source))


def handle_problem(_: Request[Any, Any, Any], exc: ProblemError) -> Response[Any]:
    message = exc.detail or exc.title
    errors = (
        [FieldError(field=exc.field, message=message, source=exc.source)] if exc.field else None
    )
    return problem_response(
        Problem(title=exc.title, status=exc.status, detail=exc.detail, errors=errors)
    )


#: the status of each kind of refusal the domain code of the services raises
REFUSAL_STATUSES: dict[type[RequestRefused], int] = {
    InvalidRequest: HTTP_400_BAD_REQUEST,
    NotFound: HTTP_404_NOT_FOUND,
    Conflict: HTTP_409_CONFLICT,
    TooLarge: HTTP_413_REQUEST_ENTITY_TOO_LARGE,
    Unprocessable: HTTP_422_UNPROCESSABLE_ENTITY,
    OverLimit: HTTP_429_TOO_MANY_REQUESTS,
    Unavailable: HTTP_503_SERVICE_UNAVAILABLE,
}


def status_of(refusal: RequestRefused) -> int:
    """The status of a refusal: that of its nearest kind, 400 for an unlisted one."""
    for kind in type(refusal).__mro__:
        if kind in REFUSAL_STATUSES:
            return REFUSAL_STATUSES[kind]
    return HTTP_400_BAD_REQUEST


def handle_refusal(request: Request[Any, Any, Any], exc: RequestRefused) -> Response[Any]:
    if isinstance(exc, OverLimit):
        return over_limit_response(exc)
    problem = ProblemError(
        status_of(exc), exc.title, exc.detail, field=exc.field, source=exc.source
    )
    return handle_problem(request, problem)


def over_limit_response(exc: OverLimit) -> Response[Any]:
    """429 with ``Retry-After`` (whole seconds) and the problem naming the limit."""
    problem = Problem(
        title=exc.title, status=HTTP_429_TOO_MANY_REQUESTS, detail=exc.detail, limit=exc.limit
    )
    return problem_response(problem, headers={"Retry-After": str(exc.retry_after_s)})


def internal_error(exc: Exception) -> Problem:
    """The problem a caller sees for an error nobody expected, logged where it happened: its
    type and the request id to find it in the log by, not its message (which may hold a SQL
    statement and its values, a path, a key)."""
    return Problem(
        title="Internal server error",
        status=HTTP_500_INTERNAL_SERVER_ERROR,
        detail=f"{type(exc).__name__}; the service log has the details under the request id",
        request_id=current_request_id.get(),
    )


def handle_unexpected(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    if is_too_deep_body(exc):
        return _malformed_body(TOO_DEEP_BODY)
    logger.exception("unhandled error on %s %s", request.method, request.url.path)
    return problem_response(internal_error(exc))


def _title_for(status: int, detail: str) -> str:
    titles = {
        400: "Bad request",
        401: "Unauthorized",
        403: "Forbidden",
        404: "Not found",
        405: "Method not allowed",
        409: "Conflict",
        413: "Request body too large",
        415: "Unsupported media type",
        422: "Unprocessable request",
        429: "Too many requests",
        503: "Service unavailable",
    }
    return titles.get(status, detail or "Error")


def problem_responses(
    descriptions: dict[int, str], problem_type: type[Problem] = Problem
) -> dict[int, ResponseSpec]:
    """OpenAPI documentation of error answers: problem-details bodies (``problem_type``, when a
    service's carry more), by status."""
    return {
        status: ResponseSpec(
            data_container=problem_type,
            description=description,
            media_type=PROBLEM_MEDIA_TYPE,
            generate_examples=False,
        )
        for status, description in descriptions.items()
    }


def document_problems(
    app: Litestar,
    *,
    unauthorized: str | None,
    forbidden: str | None = None,
    rate_limited: str | None = None,
) -> None:
    """Every API route's error answers in its OpenAPI operation, as problem-details: a bad
    request (400) and an unexpected error (500) anywhere, an unknown id (404) where the path
    names one, ``unauthorized`` (401) where a key or token is asked for, a body too large (413)
    where the handler reads one; a route's own descriptions win."""
    for route in app.routes:
        if not route.path.startswith("/v1/"):
            continue
        defaults = {
            400: "Invalid request: the problem's `errors` name each field and where it is",
            500: "Unexpected error: its type and the request id to find it in the log by",
        }
        if "{" in route.path:
            defaults[404] = "Nothing under this id"
        if unauthorized:
            defaults[401] = unauthorized
        if forbidden:
            defaults[403] = forbidden
        if rate_limited:
            defaults[429] = rate_limited
        for handler in getattr(route, "route_handlers", []):
            own = handler.responses or {}
            documented = dict(defaults)
            if require_internal_token in handler.resolve_guards():
                documented[401] = INTERNAL_UNAUTHORIZED
            if "data" in inspect.signature(handler.fn).parameters:
                documented[413] = "The body is larger than the service accepts (max_body_bytes)"
            handler.responses = {**problem_responses(documented), **own}


RETRY_AFTER_HEADER = OpenAPIHeader(
    description="Seconds to wait before asking again (a whole number, at least 1)",
    schema=Schema(type=OpenAPIType.INTEGER, minimum=1),
)


def document_retry_after(app: Litestar) -> None:
    """Every 429 answer of the app's OpenAPI document carries the ``Retry-After`` header
    (litestar's response specs say nothing of headers): the document is built now, its
    routes all known, and kept (litestar builds it once, on first use, the same way)."""
    openapi = app.openapi_schema
    for path in (openapi.paths or {}).values():
        for method in ("get", "put", "post", "delete", "patch"):
            operation = getattr(path, method, None)
            answer = (operation.responses or {}).get("429") if operation else None
            if isinstance(answer, OpenAPIResponse):
                answer.headers = {**(answer.headers or {}), "Retry-After": RETRY_AFTER_HEADER}


#: the SQLSTATE of text the database cannot store (PostgreSQL: a NUL character)
_UNSTORABLE_TEXT = "22021"


def handle_database_error(request: Request[Any, Any, Any], exc: DBAPIError) -> Response[Any]:
    """Text a field's rule let through (a path parameter, an answer of a list) but the database
    refuses is the caller's to fix: a 400, not an unexpected error."""
    if getattr(exc.orig, "sqlstate", None) != _UNSTORABLE_TEXT:
        return handle_unexpected(request, exc)
    detail = "the request holds text the database cannot store: a NUL character (\\u0000)"
    return problem_response(Problem(title="Invalid request", status=400, detail=detail))


EXCEPTION_HANDLERS: dict[Any, Any] = {
    ValidationException: handle_validation,
    ProblemError: handle_problem,
    RequestRefused: handle_refusal,
    HTTPException: handle_http,
    DBAPIError: handle_database_error,
    Exception: handle_unexpected,
}
