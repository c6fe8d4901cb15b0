"""Why the domain refuses a request, without a word of HTTP.

Domain code of every service raises these; ``shared.problems`` maps each kind to its status
and problem details in one exception handler (as the gateway maps its ``GatewayError``s), so
the same refusal reads the same from every service and the domain stays testable on its own.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Iterator
from typing import Literal

#: where msgspec's messages name the field at fault
_PATH_IN_MESSAGE = re.compile(r"at `\$(?P<path>[^`]*)`")
NAMED_FIELD = re.compile(r"(?:missing required field|unknown field) `(?P<name>[^`]+)`")

#: the part of the request a refused field is in
FieldSource = Literal["body", "path", "query", "header"]


class RequestRefused(Exception):
    """A request the domain will not carry out, naming the field at fault where there is one.

    Subclasses say why (``InvalidRequest``, ``NotFound``, ``Conflict``...); ``title`` is the
    short summary callers see, ``detail`` the explanation."""

    title = "Invalid request"

    def __init__(
        self,
        detail: str,
        *,
        field: str | None = None,
        source: FieldSource = "body",
        title: str | None = None,
    ) -> None:
        super().__init__(detail)
        self.detail = detail
        self.field = field
        self.source: FieldSource = source
        if title is not None:
            self.title = title


class InvalidRequest(RequestRefused):
    """The request contradicts itself or asks for something that cannot be run."""


class NotFound(RequestRefused):
    """The request names something that does not exist (an id, a model, a dataset)."""

    title = "Not found"


class Conflict(RequestRefused):
    """The request is valid but clashes with the current state of what it names."""

    title = "Conflict"


class Unprocessable(RequestRefused):
    """Well-formed, but its content cannot be used (an unknown model route, sets of another k)."""

    title = "Unprocessable request"


class TooLarge(RequestRefused):
    """The request asks for more work than one request may."""

    title = "Request too large"


class Unavailable(RequestRefused):
    """Something the request needs is down or not configured: the caller may ask again later."""

    title = "Service unavailable"


class OverLimit(RequestRefused):
    """The caller's key is over one of its limits (``limit``: ``rpm``, ``concurrent_jobs``,
    ``token_budget``) for now: it may ask again after ``retry_after_s`` seconds."""

    title = "Too many requests"

    def __init__(self, detail: str, *, limit: str, retry_after_s: float) -> None:
        super().__init__(detail)
        self.limit = limit
        #: whole seconds, at least 1 (the response's Retry-After)
        self.retry_after_s = max(1, math.ceil(retry_after_s))


def not_found(what: str, key: str, field: str) -> NotFound:
    """The refusal of an id in the path that names nothing: ``no evaluation 'ev-1'``."""
    return NotFound(f"no {what} {key!r}", field=field, source="path")


@contextlib.contextmanager
def nested_under(prefix: str) -> Iterator[None]:
    """A refusal of a field of a request nested in another (a monitor's repeated evaluation, a
    study's part) names the field where it is in the outer body: ``parts[2].evaluation.k``."""
    try:
        yield
    except RequestRefused as error:
        if error.field and error.source == "body":
            error.field = f"{prefix}.{error.field}"
        raise


def field_from_message(message: str) -> str | None:
    """``"Expected `int`, got `str` - at `$.items[0].k`"`` → ``"items[0].k"``."""
    path_match = _PATH_IN_MESSAGE.search(message)
    path = path_match.group("path").lstrip(".") if path_match else ""
    named = NAMED_FIELD.search(message)
    if named:
        path = f"{path}.{named.group('name')}" if path else named.group("name")
    return path or None
