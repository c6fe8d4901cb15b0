"""What the HTTP backends share: one pooled session per route and a JSON POST."""

from __future__ import annotations

import asyncio

import aiohttp

from steadfast.services.gateway.adapters.backends.http_errors import (
    error_for_status,
    error_for_transport,
)
from steadfast.services.gateway.adapters.backends.streaming import StreamedReply, read_stream
from steadfast.services.gateway.domain.backend import Completion
from steadfast.services.gateway.domain.errors import BackendError
from steadfast.services.gateway.domain.routes import Route


class HttpBackend:
    """A backend that POSTs JSON to ``url``; non-2xx answers and transport errors are typed."""

    retry_timeouts = True

    def __init__(self, route: Route, url: str) -> None:
        self.route = route
        self.url = url
        self._session: aiohttp.ClientSession | None = None

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(
                limit=max(self.route.max_concurrency, 16), keepalive_timeout=30
            )
            self._session = aiohttp.ClientSession(connector=connector)
        return self._session

    async def _post(self, body: bytes, headers: dict[str, str], timeout_s: float) -> bytes:
        """The answer's body; raises :class:`BackendError` for non-2xx and transport errors."""
        timeout = aiohttp.ClientTimeout(total=timeout_s)
        try:
            async with self._client().post(
                self.url, data=body, headers=headers, timeout=timeout
            ) as response:
                payload = await response.read()
                if response.status >= 400:
                    text = payload.decode("utf-8", "replace")
                    raise error_for_status(response.status, text, response.headers)
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise error_for_transport(exc, retry_timeouts=self.retry_timeouts) from exc
        return payload

    async def _post_streamed(
        self, body: bytes, headers: dict[str, str], timeout_s: float, samples: int, limit_s: float
    ) -> Completion:
        """A streamed answer read until it ends or ``limit_s`` passes, counted from the request
        (llama.cpp sends its headers only once the prompt is read, which with several requests
        queued can take longer than the limit). At the limit the connection is closed, which
        stops a llama.cpp server writing (it notices within about a second)."""
        timeout = aiohttp.ClientTimeout(total=timeout_s)
        reply = StreamedReply(samples)
        try:
            async with asyncio.timeout(limit_s) as limit:
                async with self._client().post(
                    self.url, data=body, headers=headers, timeout=timeout
                ) as response:
                    if response.status >= 400:
                        limit.reschedule(None)  # an error is read to its end, not cut
                        text = (await response.read()).decode("utf-8", "replace")
                        raise error_for_status(response.status, text, response.headers)
                    await read_stream(response.content, reply)
                    if not reply.done and not reply.finished():
                        raise BackendError(
                            "upstream_error", "the stream ended before the reply did"
                        )
        except TimeoutError as exc:
            if limit.expired():
                return reply.completion(cut=True)
            raise error_for_transport(exc, retry_timeouts=self.retry_timeouts) from exc
        except aiohttp.ClientError as exc:
            raise error_for_transport(exc, retry_timeouts=self.retry_timeouts) from exc
        return reply.completion(cut=False)

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
