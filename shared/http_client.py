"""The aiohttp client every service-to-service call goes through.

One pooled ``aiohttp.ClientSession`` per process (created lazily, closed on shutdown), a timeout
on every call, the current ``X-Request-ID`` forwarded, and any non-2xx answer turned into a
:class:`ServiceCallError` that carries the callee's problem-details body. Responses are read
leniently (:mod:`shared.tolerant_reader`): a field the callee added in a newer version is ignored.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

import aiohttp
import msgspec

from steadfast.shared.contracts.base import Problem
from steadfast.shared.contracts.gateway import GatewayProblem
from steadfast.shared.request_context import REQUEST_ID_HEADER, current_request_id
from steadfast.shared.tolerant_reader import decode_response

T = TypeVar("T")

_session: aiohttp.ClientSession | None = None
_session_loop: asyncio.AbstractEventLoop | None = None


def is_transient(status: int | None, problem: Problem) -> bool:
    """Whether a failure says "down for now, ask again later": the service could not be
    reached, answered 503 of its own, or relayed a model server it could not reach (the
    gateway's ``unavailable`` with a Retry-After; without one it is a lasting refusal, a wrong
    key or model name, that waiting will not mend)."""
    if status is None:
        return True
    if status != 503:
        return False
    if not isinstance(problem, GatewayProblem) or problem.outcome is None:
        return True  # a 503 of the service's own
    return problem.retry_after_s is not None


class ServiceCallError(Exception):
    """A call to another service failed: it answered non-2xx, or could not be reached."""

    def __init__(
        self,
        service: str,
        status: int | None,
        problem: Problem,
        url: str,
        retry_after_s: float | None = None,
    ) -> None:
        self.service = service
        self.status = status
        self.problem = problem
        self.url = url
        #: the response's Retry-After header (seconds), when it had one
        self.retry_after_s = retry_after_s
        super().__init__(f"{service} call to {url} failed ({status}): {problem.title}")

    @property
    def unreachable(self) -> bool:
        return self.status is None

    @property
    def transient(self) -> bool:
        """Down for now: worth waiting for (see :func:`is_transient`)."""
        return is_transient(self.status, self.problem)

    @property
    def refused(self) -> bool:
        """The callee found the request itself wrong (a 4xx but 429, which says: later):
        asking again cannot help."""
        return self.status is not None and 400 <= self.status < 500 and self.status != 429


def get_session() -> aiohttp.ClientSession:
    """The process-wide pooled session (one per event loop, for tests that run several)."""
    global _session, _session_loop
    loop = asyncio.get_running_loop()
    if _session is None or _session.closed or _session_loop is not loop:
        connector = aiohttp.TCPConnector(limit=256, limit_per_host=128, keepalive_timeout=30)
        _session = aiohttp.ClientSession(connector=connector, raise_for_status=False)
        _session_loop = loop
    return _session


async def close_session() -> None:
    """Close this loop's session; one another (finished) loop made is only dropped: closing it
    from here would wait on that loop's futures."""
    global _session
    if _session is not None and not _session.closed and _session_loop is asyncio.get_running_loop():
        await _session.close()
    _session = None


def retry_after_seconds(header: str | None) -> float | None:
    """A Retry-After given in seconds; None when absent, or given as a date (not ours)."""
    try:
        seconds = float(header) if header else None
    except ValueError:
        return None
    return seconds if seconds is not None and 0 <= seconds < 86400 else None


def _decode_problem(
    status: int, body: bytes, reason: str, problem_type: type[Problem] = Problem
) -> Problem:
    try:
        return msgspec.json.decode(body, type=problem_type)
    except (msgspec.DecodeError, msgspec.ValidationError):
        text = body.decode("utf-8", "replace")[:500]
        return problem_type(title=reason or "error", status=status, detail=text or None)


class ServiceClient:
    """Typed JSON calls to one service; its error answers are read as ``problem_type`` (the
    gateway's carry more than every service's :class:`Problem`)."""

    def __init__(
        self,
        service: str,
        base_url: str,
        timeout_s: float = 300.0,
        headers: dict[str, str] | None = None,
        session: Callable[[], aiohttp.ClientSession] = get_session,
        problem_type: type[Problem] = Problem,
    ) -> None:
        self.service = service
        self.problem_type = problem_type
        #: where the connection comes from: the process-wide pool by default
        self.session = session
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s
        #: sent with every call (an API key, say)
        self.default_headers = dict(headers or {})

    def _headers(self, extra: dict[str, str] | None) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        headers.update(self.default_headers)
        request_id = current_request_id.get()
        if request_id:
            headers[REQUEST_ID_HEADER] = request_id
        if extra:
            headers.update(extra)
        return headers

    async def request(
        self,
        method: str,
        path: str,
        response_type: type[T],
        body: Any = None,
        *,
        params: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
        timeout_s: float | None = None,
    ) -> T:
        url = f"{self.base_url}{path}"
        # bytes go as they are (an uploaded file); anything else is encoded as JSON
        data = body if body is None or isinstance(body, bytes) else msgspec.json.encode(body)
        timeout = aiohttp.ClientTimeout(total=timeout_s or self.timeout_s)
        try:
            async with self.session().request(
                method,
                url,
                data=data,
                params=params,
                headers=self._headers(headers),
                timeout=timeout,
            ) as response:
                payload = await response.read()
                if response.status >= 400:
                    reason = response.reason or ""
                    problem = _decode_problem(response.status, payload, reason, self.problem_type)
                    wait = retry_after_seconds(response.headers.get("Retry-After"))
                    raise ServiceCallError(self.service, response.status, problem, url, wait)
        except (aiohttp.ClientError, TimeoutError) as exc:
            detail = str(exc) or type(exc).__name__
            title = f"{self.service} unreachable"
            problem = self.problem_type(title=title, status=503, detail=detail)
            raise ServiceCallError(self.service, None, problem, url) from exc
        if response_type is bytes:  # a document that is not JSON (a rendered report)
            return payload  # type: ignore[return-value]
        return decode_response(payload, response_type)

    async def post(self, path: str, body: Any, response_type: type[T], **kwargs: Any) -> T:
        return await self.request("POST", path, response_type, body, **kwargs)

    async def get(self, path: str, response_type: type[T], **kwargs: Any) -> T:
        return await self.request("GET", path, response_type, **kwargs)
