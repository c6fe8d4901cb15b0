"""Errors of the perturb service's domain: a request it cannot serve, and the generator or verify
service out of reach or refusing."""

from __future__ import annotations

from steadfast.shared.http_client import ServiceCallError


class RequestError(Exception):
    """The request cannot be served as asked; ``field`` names the culprit."""

    title = "Invalid request"

    def __init__(self, field: str, detail: str) -> None:
        super().__init__(detail)
        self.field = field


class UnknownRouteError(RequestError):
    """The gateway has no route of the requested name."""

    title = "Unknown model route"


def unknown_route(error: ServiceCallError) -> UnknownRouteError | None:
    """The gateway's 404 (no such route) as an error of the request's ``generator``."""
    if error.status != 404:
        return None
    return UnknownRouteError("generator", error.problem.detail or str(error))


class UpstreamUnavailable(Exception):
    """The generator's model or the verify service is down for now: the set cannot be built
    now, and asking again later may build it. Returned as an incomplete set it would be taken
    as final by an evaluation, and its answers lost."""


class VerifyRejectedError(Exception):
    """The verify service refused the request (4xx): the caller's verify settings are wrong."""

    def __init__(self, error: ServiceCallError) -> None:
        super().__init__(error.problem.detail or error.problem.title)
        self.error = error
