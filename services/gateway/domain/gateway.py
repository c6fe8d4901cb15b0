"""``ModelGateway``: the one in-process entry point for model calls."""

from __future__ import annotations

import asyncio
import functools
import logging
import random
import time
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass

import msgspec

from steadfast.services.gateway import metrics
from steadfast.services.gateway.domain.backend import Backend, Completion, nothing_written
from steadfast.services.gateway.domain.cache import ResponseCache, cache_key, is_cacheable
from steadfast.services.gateway.domain.errors import (
    UNREACHABLE_RETRY_AFTER_S,
    BackendError,
    GenerationFailed,
    UnknownRoute,
    UnsupportedParameter,
)
from steadfast.services.gateway.domain.limits import RouteLimiter, SlotWaitExceeded
from steadfast.services.gateway.domain.routes import Route
from steadfast.shared.backoff import Backoff
from steadfast.shared.contracts.gateway import GenerateRequest, GenerateResponse, Usage

logger = logging.getLogger(__name__)

#: a lookup slower than this (a locked SQLite file, an exhausted pool) counts as a miss
CACHE_LOOKUP_TIMEOUT_S = 5.0
#: a store slower than this is given up (the answer is still returned): callers waiting on a
#: shared call must not wait on a database that does not answer
CACHE_STORE_TIMEOUT_S = 10.0

BackendFactory = Callable[[Route], Backend]


@dataclass
class DropSignal:
    """Set by a caller that cancels calls it no longer needs (paraphrase-vote's early stop),
    just before it cancels them: such a call is then cancelled upstream too, unless another
    caller still waits for it or one that left wanted it kept. Any other cancellation (a client
    that went away) leaves a cacheable call running, so that a retry finds the answer cached."""

    drop: bool = False


#: the drop signal of the calls made in this context (none: never dropped)
DROP_WHEN_CANCELLED: ContextVar[DropSignal | None] = ContextVar("drop_when_cancelled", default=None)


@dataclass
class _SharedCall:
    """A cacheable upstream call in progress and the callers waiting for it."""

    task: asyncio.Future[tuple[Completion, int]]
    waiters: int = 0
    #: a caller that left did not ask for the call to be dropped
    keep: bool = False


@dataclass
class _Lane:
    """A route's backend instance and limits, created on first use."""

    backend: Backend
    limiter: RouteLimiter
    metrics: metrics.RouteMetrics


@dataclass
class _Attempts:
    """Bookkeeping of one request's attempts (for the overhead metric)."""

    count: int = 0
    upstream_s: float = 0.0
    waited_s: float = 0.0
    #: why the last attempt failed: what a retry that never got a slot fails with
    last_error: BackendError | None = None
    #: when the reply is cut, of a request with a time limit (counted from its arrival)
    stop_at: float | None = None


class ModelGateway:
    """Routes generate requests to backends, with cache, per-route limits and retries.

    ``await gateway.generate(request)`` returns a :class:`GenerateResponse` or raises
    :class:`UnknownRoute` (no such route), :class:`UnsupportedParameter` (the backend cannot do
    what was asked, e.g. ``top_logprobs``) or :class:`GenerationFailed` (typed ``outcome``,
    ``detail``, ``attempts``, ``retry_after_s``) once retries and the route's deadline are spent.
    Cache hits cost no upstream call and come back with ``cached=True``; so do identical
    cacheable requests that arrive while the first is still on its way upstream (they share it).
    """

    def __init__(
        self,
        routes: Mapping[str, Route],
        *,
        backend_factory: BackendFactory,
        cache: ResponseCache | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.routes: dict[str, Route] = dict(routes)
        self._cache = cache
        self._backend_factory = backend_factory
        self._rng = rng or random.Random()
        self._lanes: dict[str, _Lane] = {}
        #: upstream calls of cacheable requests in progress, by cache key
        self._pending: dict[str, _SharedCall] = {}
        self._closing = False

    def route(self, name: str) -> Route:
        try:
            return self.routes[name]
        except KeyError:
            raise UnknownRoute(name, sorted(self.routes)) from None

    def backend(self, route: Route) -> Backend:
        """The route's backend instance (created on first use; SDKs load on first call)."""
        return self._lane(route).backend

    def supports_logprobs(self, route: Route) -> bool:
        return self.backend(route).supports_logprobs

    def use_cache(self, cache: ResponseCache | None) -> None:
        """Attach the response cache (the database opens after the gateway is built)."""
        self._cache = cache

    async def generate(self, request: GenerateRequest) -> GenerateResponse:
        started = time.perf_counter()
        route = self.route(request.model)
        if self._closing:
            raise GenerationFailed(
                "unavailable",
                "the gateway is shutting down",
                route=route.name,
                attempts=0,
                retry_after_s=UNREACHABLE_RETRY_AFTER_S,
            )
        lane = self._lane(route)
        if request.top_logprobs is not None and not lane.backend.supports_logprobs:
            raise UnsupportedParameter(
                "top_logprobs",
                f"route {route.name!r} (backend {route.backend}) cannot return logprobs",
            )
        if request.top_logprobs is not None and request.time_limit_s is not None:
            raise UnsupportedParameter(
                "time_limit_s", "a reply read as it is written returns no top_logprobs"
            )
        if request.n > 1 and request.n > lane.backend.max_samples(route):
            return await self._one_request_a_sample(route, request, started)
        if not request.cache or self._cache is None:
            completion, attempts = await self._call(route, lane, request, started, key=None)
            return self._response(route, completion, started, cached=False, attempts=attempts)
        key = cache_key(route, request)
        cached = await self._cache_get(key)
        if cached is not None:
            return self._response(route, cached, started, cached=True, attempts=0)
        if request.time_limit_s is not None:
            # a reply cut at this request's limit is no answer for a caller with another one
            completion, attempts = await self._call(route, lane, request, started, key)
            return self._response(route, completion, started, cached=False, attempts=attempts)
        pending = self._pending.get(key)
        if pending is not None:  # an identical request is already on its way upstream
            completion, _ = await self._wait_for(key, pending)
            return self._response(route, completion, started, cached=True, attempts=0)
        # a task of its own, so the answer is stored even if this caller goes away
        call = _SharedCall(asyncio.ensure_future(self._call(route, lane, request, started, key)))
        self._pending[key] = call
        call.task.add_done_callback(functools.partial(self._settled, key, call))
        completion, attempts = await self._wait_for(key, call)
        return self._response(route, completion, started, cached=False, attempts=attempts)

    async def close(self, grace_s: float = 2.0) -> None:
        """Calls still running for the cache (their callers gone) get ``grace_s`` to finish
        and are cancelled after it; then the cache and the backends close under nobody."""
        self._closing = True
        deadline = time.monotonic() + grace_s
        while self._pending:  # a request past the closing check may still add one
            calls = list(self._pending.items())
            running = {call.task for _, call in calls}
            _, unfinished = await asyncio.wait(
                running, timeout=max(0.0, deadline - time.monotonic())
            )
            for task in unfinished:
                task.cancel()
            await asyncio.gather(*running, return_exceptions=True)
            for key, call in calls:
                self._forget(key, call)
        if self._cache is not None:
            await self._cache.close()
        lanes, self._lanes = list(self._lanes.values()), {}
        for lane in lanes:
            await lane.backend.close()

    # ----- internals -----
    async def _one_request_a_sample(
        self, route: Route, request: GenerateRequest, started: float
    ) -> GenerateResponse:
        """The ``n`` samples of a backend that cannot write them in one request: a request
        each, as repeated samples are asked (sample ``i`` with ``sample_index + i`` and
        ``seed + i``); all must succeed."""
        seed = request.seed

        def sample(index: int) -> GenerateRequest:
            return msgspec.structs.replace(
                request,
                n=1,
                sample_index=request.sample_index + index,
                seed=None if seed is None else _next_seed(seed, index),
            )

        replies = await asyncio.gather(*(self.generate(sample(i)) for i in range(request.n)))
        first = replies[0]
        cut = any(reply.finish_reason == "time_limit" for reply in replies)
        return msgspec.structs.replace(
            first,
            # one sample cut at the time limit: the caller reads every sample as cut
            finish_reason="time_limit" if cut else first.finish_reason,
            usage=Usage(
                input_tokens=sum(reply.usage.input_tokens for reply in replies),
                output_tokens=sum(reply.usage.output_tokens for reply in replies),
            ),
            latency_s=time.perf_counter() - started,
            cached=all(reply.cached for reply in replies),
            attempts=sum(reply.attempts for reply in replies),
            samples=[reply.text for reply in replies],
        )

    async def _call(
        self, route: Route, lane: _Lane, request: GenerateRequest, started: float, key: str | None
    ) -> tuple[Completion, int]:
        """The upstream call with its retries; stores a cacheable answer under ``key``."""
        limit = request.time_limit_s
        attempts = _Attempts(stop_at=None if limit is None else started + limit)
        completion = await self._call_with_retries(route, lane, request, started, attempts)
        if key is not None and is_cacheable(completion):
            # an answer paid for is stored even if the call is dropped while it is written
            await asyncio.shield(self._cache_put(key, route, completion))
        in_gateway = time.perf_counter() - started - attempts.upstream_s - attempts.waited_s
        metrics.GATEWAY_OVERHEAD.observe(max(0.0, in_gateway))
        return completion, attempts.count

    async def _wait_for(self, key: str, call: _SharedCall) -> tuple[Completion, int]:
        call.waiters += 1
        try:
            return await asyncio.shield(call.task)
        except asyncio.CancelledError:
            signal = DROP_WHEN_CANCELLED.get()
            if signal is None or not signal.drop:
                call.keep = True
            elif call.waiters == 1 and not call.keep:
                self._forget(key, call)  # a request arriving now starts a call of its own
                call.task.cancel()
            raise
        finally:
            call.waiters -= 1

    def _forget(self, key: str, call: _SharedCall) -> None:
        if self._pending.get(key) is call:
            del self._pending[key]

    def _settled(
        self, key: str, call: _SharedCall, task: asyncio.Future[tuple[Completion, int]]
    ) -> None:
        self._forget(key, call)
        if not task.cancelled():
            task.exception()  # retrieved: a failure nobody waited for is not logged as lost

    def _lane(self, route: Route) -> _Lane:
        lane = self._lanes.get(route.name)
        if lane is None:
            lane = _Lane(
                backend=self._backend_factory(route),
                limiter=RouteLimiter(route.max_concurrency, route.requests_per_minute),
                metrics=metrics.RouteMetrics(route.name, route.backend),
            )
            self._lanes[route.name] = lane
        return lane

    async def _call_with_retries(
        self,
        route: Route,
        lane: _Lane,
        request: GenerateRequest,
        started: float,
        attempts: _Attempts,
    ) -> Completion:
        deadline = started + route.deadline_s
        while True:
            try:
                completion = await self._attempt(route, lane, request, deadline, attempts)
            except BackendError as error:
                attempts.last_error = error
                delay = self._retry_delay(route, error, attempts, deadline)
                metrics.MODEL_RETRIES.labels(route.name, error.outcome).inc()
                logger.info(
                    "model call retried",
                    extra={
                        "route": route.name,
                        "outcome": error.outcome,
                        "status": error.status,
                        "detail": error.detail,
                        "attempts": attempts.count,
                        "delay_s": round(delay, 3),
                    },
                )
                attempts.waited_s += delay
                await asyncio.sleep(delay)
                continue
            lane.metrics.ok.inc()
            lane.metrics.input_tokens.inc(completion.input_tokens)
            lane.metrics.output_tokens.inc(completion.output_tokens)
            return completion

    def _retry_delay(
        self, route: Route, error: BackendError, attempts: _Attempts, deadline: float
    ) -> float:
        """Seconds until the next attempt, or raise the final failure."""
        backoff = Backoff(
            attempts=route.max_retries + 1,
            base_delay_s=route.retry_base_s,
            max_delay_s=route.retry_max_s,
        )
        if backoff.gives_up(attempts.count, retryable=error.retryable):
            raise self._failed(route, error, attempts.count)
        delay = backoff.jittered_delay(attempts.count, self._rng, error.retry_after_s)
        if time.perf_counter() + delay >= deadline:
            error.detail += f" (next retry in {delay:.3g} s would pass the route's deadline)"
            raise self._failed(route, error, attempts.count)
        if attempts.stop_at is not None and time.perf_counter() + delay >= attempts.stop_at:
            error.detail += f" (next retry in {delay:.3g} s would pass the request's time limit)"
            raise self._failed(route, error, attempts.count)
        return delay

    async def _attempt(
        self,
        route: Route,
        lane: _Lane,
        request: GenerateRequest,
        deadline: float,
        attempts: _Attempts,
    ) -> Completion:
        until = deadline if attempts.stop_at is None else min(deadline, attempts.stop_at)
        remaining = until - time.perf_counter()
        try:
            async with lane.limiter.slot(remaining) as waited:
                attempts.waited_s += waited
                attempts.count += 1
                return await self._upstream(route, lane, request, deadline, attempts)
        except SlotWaitExceeded as exc:
            if until < deadline and attempts.last_error is None:
                return nothing_written(request.n)  # the time limit passed while it waited
            error = BackendError("timeout", f"waited for a free slot: {exc}")
            if attempts.last_error is not None:
                # the upstream's reason (and its Retry-After) is what the caller acts on
                error = attempts.last_error
                error.detail += f"; the retry then waited for a free slot: {exc}"
            raise self._failed(route, error, attempts.count) from exc

    async def _upstream(
        self,
        route: Route,
        lane: _Lane,
        request: GenerateRequest,
        deadline: float,
        attempts: _Attempts,
    ) -> Completion:
        timeout_s = min(route.timeout_s, deadline - time.perf_counter())
        if attempts.stop_at is not None:
            left = attempts.stop_at - time.perf_counter()
            if left <= 0:  # the limit passed while the request waited for a slot or a retry
                return nothing_written(request.n)
            request = msgspec.structs.replace(request, time_limit_s=left)
        lane.metrics.inflight.inc()
        began = time.perf_counter()
        try:
            async with asyncio.timeout(timeout_s):
                completion = await lane.backend.complete(request, timeout_s)
        except TimeoutError as exc:
            raise BackendError(
                "timeout",
                f"no answer within {timeout_s:.3g} s",
                retryable=getattr(lane.backend, "retry_timeouts", True),
            ) from exc
        except BackendError:
            raise
        except Exception as exc:
            logger.exception(
                "backend %s of route %s failed unexpectedly", route.backend, route.name
            )
            raise BackendError("bad_response", f"{type(exc).__name__}: {exc}") from exc
        finally:
            lane.metrics.inflight.dec()
            elapsed = time.perf_counter() - began
            attempts.upstream_s += elapsed
            lane.metrics.duration.observe(elapsed)
        if completion.finish_reason == "content_filter":
            raise BackendError("refused", "the backend's safety filter blocked the answer")
        return completion

    def _failed(self, route: Route, error: BackendError, attempts: int) -> GenerationFailed:
        self._count(route, error.outcome)
        logger.warning(
            "model call failed",
            extra={
                "route": route.name,
                "outcome": error.outcome,
                "status": error.status,
                "detail": error.detail,
                "attempts": attempts,
            },
        )
        return GenerationFailed.from_backend(error, route.name, attempts)

    @staticmethod
    def _count(route: Route, outcome: str) -> None:
        metrics.MODEL_REQUESTS.labels(route.name, route.backend, outcome).inc()

    async def _cache_get(self, key: str) -> Completion | None:
        assert self._cache is not None
        try:
            async with asyncio.timeout(CACHE_LOOKUP_TIMEOUT_S):
                hit = await self._cache.get(key)
        except TimeoutError:
            logger.warning("response cache lookup timed out; calling the backend")
            hit = None
        except Exception:
            logger.exception("response cache lookup failed; calling the backend")
            hit = None
        metrics.CACHE_REQUESTS.labels("hit" if hit is not None else "miss").inc()
        return hit

    async def _cache_put(self, key: str, route: Route, completion: Completion) -> None:
        assert self._cache is not None
        try:
            async with asyncio.timeout(CACHE_STORE_TIMEOUT_S):
                await self._cache.put(key, route, completion)
        except TimeoutError:
            logger.warning("storing a response in the cache timed out; not cached")
        except Exception:
            logger.exception("storing a response in the cache failed")

    @staticmethod
    def _response(
        route: Route, completion: Completion, started: float, *, cached: bool, attempts: int
    ) -> GenerateResponse:
        return GenerateResponse(
            text=completion.text,
            model=route.model,
            route=route.name,
            backend=route.backend,
            finish_reason=completion.finish_reason,
            usage=Usage(
                input_tokens=completion.input_tokens, output_tokens=completion.output_tokens
            ),
            latency_s=time.perf_counter() - started,
            cached=cached,
            logprobs=completion.logprobs,
            attempts=attempts,
            samples=list(completion.samples) if completion.samples is not None else None,
        )


def _next_seed(seed: int, step: int) -> int:
    """``seed + step``, wrapped within the signed 64 bits a model seed takes."""
    return (seed + step + 2**63) % 2**64 - 2**63
