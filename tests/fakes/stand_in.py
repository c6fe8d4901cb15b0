"""Common machinery of the stand-in upstream model servers (OpenAI, Gemini, Ollama).

A stand-in is an aiohttp app that runs either in a background thread of the test process (use it
as a context manager) or as its own process (``python -m tests.fakes.<name>``). Every request it
receives is recorded in ``calls``; faults are injected per request, from a FIFO queue
(``enqueue``) or by a callable that looks at the request (``fault_for``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from aiohttp import web

FaultKind = Literal["status", "hang", "malformed", "delay", "refuse"]


@dataclass(frozen=True)
class Fault:
    """One injected misbehaviour. Build with the class methods."""

    kind: FaultKind
    status: int = 200
    retry_after_s: float | None = None
    seconds: float | None = None
    body: str | None = None

    @classmethod
    def error(cls, status: int = 500, body: str | None = None, after_s: float = 0.0) -> Fault:
        """Answer ``status`` (e.g. 500, 503, 400) with an error body, after ``after_s``."""
        return cls("status", status=status, body=body, seconds=after_s or None)

    @classmethod
    def rate_limit(cls, retry_after_s: float | None = 1.0) -> Fault:
        """Answer 429, with ``Retry-After`` when given."""
        return cls("status", status=429, retry_after_s=retry_after_s)

    @classmethod
    def hang(cls, seconds: float | None = None) -> Fault:
        """Never answer (until ``seconds`` passed or the server stops)."""
        return cls("hang", seconds=seconds)

    @classmethod
    def malformed(cls) -> Fault:
        """Answer 200 with a body that is not the expected JSON."""
        return cls("malformed")

    @classmethod
    def delay(cls, seconds: float) -> Fault:
        """Answer normally after ``seconds``."""
        return cls("delay", seconds=seconds)

    @classmethod
    def refuse(cls) -> Fault:
        """Answer with the backend's safety block (content filter)."""
        return cls("refuse")


Responder = Callable[[dict[str, Any]], Any]
FaultPicker = Callable[[dict[str, Any]], Fault | None]


def last_user_text(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            content = message.get("content", "")
            return content if isinstance(content, str) else json.dumps(content)
    return ""


def count_words(text: str) -> int:
    return max(1, len(text.split()))


class StandInServer:
    """Base class: subclasses add their routes in :meth:`add_routes` and render faults."""

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        latency_s: float = 0.0,
        latency_spread: float = 0.0,
        fault_for: FaultPicker | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.responder = responder
        self.latency_s = latency_s
        #: each answer waits latency_s × uniform(1 − spread, 1 + spread): the mean stays
        #: latency_s, but answers no longer all fall due together as with a fixed latency
        self.latency_spread = latency_spread
        self._random = random.Random(0)
        self.fault_for = fault_for
        self.host = host
        self.port = port
        self._calls: list[dict[str, Any]] = []
        self._faults: deque[Fault] = deque()
        self._inflight = 0
        self._max_inflight = 0
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._stopping: asyncio.Event | None = None
        self._started = threading.Event()
        self._start_error: BaseException | None = None

    # ----- what tests use -----
    @property
    def root(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def calls(self) -> list[dict[str, Any]]:
        """Bodies of the requests received so far (a copy, oldest first)."""
        with self._lock:
            return list(self._calls)

    @property
    def call_count(self) -> int:
        with self._lock:
            return len(self._calls)

    def enqueue(self, *faults: Fault) -> None:
        """The next requests get these faults, one each, in order."""
        with self._lock:
            self._faults.extend(faults)

    def clear(self) -> None:
        with self._lock:
            self._calls.clear()
            self._faults.clear()
            self._max_inflight = self._inflight

    # ----- subclass hooks -----
    def add_routes(self, app: web.Application) -> None:
        raise NotImplementedError

    def fault_response(self, fault: Fault) -> web.Response:
        """Render an error/refusal fault in this backend's wire format."""
        headers = {}
        if fault.retry_after_s is not None:
            headers["Retry-After"] = f"{fault.retry_after_s:g}"
        body = fault.body or json.dumps(
            {"error": {"message": f"injected {fault.status}", "code": fault.status}}
        )
        return web.Response(
            status=fault.status, text=body, content_type="application/json", headers=headers
        )

    # ----- request handling -----
    async def begin(self, body: dict[str, Any]) -> Fault | None:
        """Record the request, apply latency, and return the fault to render (if any)."""
        with self._lock:
            self._calls.append(body)
            fault = self._faults.popleft() if self._faults else None
        if fault is None and self.fault_for is not None:
            fault = self.fault_for(body)
        if fault is not None and fault.kind == "hang":
            await self._wait_stopping(fault.seconds)
            return fault
        waits = fault is not None and fault.kind in ("delay", "status")
        delay = self._latency() + ((fault.seconds or 0.0) if waits and fault else 0.0)
        if delay > 0:
            await asyncio.sleep(delay)
        return None if fault is not None and fault.kind == "delay" else fault

    def _latency(self) -> float:
        if not self.latency_spread:
            return self.latency_s
        with self._lock:
            factor = self._random.uniform(1 - self.latency_spread, 1 + self.latency_spread)
        return self.latency_s * factor

    def reply_for(self, body: dict[str, Any], default: Callable[[dict[str, Any]], str]) -> Any:
        return self.responder(body) if self.responder is not None else default(body)

    async def _wait_stopping(self, seconds: float | None) -> None:
        assert self._stopping is not None
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopping.wait(), seconds)

    @property
    def max_inflight(self) -> int:
        """The most requests this server was handling at the same time."""
        with self._lock:
            return self._max_inflight

    @web.middleware
    async def _track_inflight(self, request: web.Request, handler: Any) -> web.StreamResponse:
        with self._lock:
            self._inflight += 1
            self._max_inflight = max(self._max_inflight, self._inflight)
        try:
            response: web.StreamResponse = await handler(request)
            return response
        finally:
            with self._lock:
                self._inflight -= 1

    def build_app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024, middlewares=[self._track_inflight])
        self.add_routes(app)
        return app

    # ----- lifecycle in a background thread -----
    def start(self) -> None:
        """Serve (again, after :meth:`stop`: on the same port, as a restarted server would)."""
        self._started.clear()
        self._start_error = None
        self._thread = threading.Thread(target=self._run, name=type(self).__name__, daemon=True)
        self._thread.start()
        self._started.wait(15)
        if self._start_error is not None:
            raise RuntimeError(f"{type(self).__name__} failed to start") from self._start_error

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(self._serve())
        except BaseException as exc:  # reported to the starting thread
            self._start_error = exc
        finally:
            self._started.set()
            loop.close()

    async def _serve(self) -> None:
        self._stopping = asyncio.Event()
        self._runner = web.AppRunner(self.build_app(), access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, reuse_address=True)
        await site.start()
        server = site._server
        assert server is not None
        self.port = server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._started.set()
        await self._stopping.wait()
        await self._runner.cleanup()

    def stop(self) -> None:
        if self._loop is not None and self._stopping is not None and self._loop.is_running():
            self._loop.call_soon_threadsafe(self._stopping.set)
        if self._thread is not None:
            self._thread.join(10)
        self._thread = None

    def __enter__(self) -> StandInServer:
        self.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()


def serve_forever(server: StandInServer, description: str) -> None:
    """Entry point of ``python -m tests.fakes.<name> --port N [--latency-ms M]``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--latency-ms", type=float, default=0.0)
    args = parser.parse_args()
    server.host, server.port, server.latency_s = args.host, args.port, args.latency_ms / 1000

    async def stopping_event() -> web.Application:
        server._stopping = asyncio.Event()
        return server.build_app()

    try:
        import uvloop

        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    except ImportError:
        pass
    web.run_app(stopping_event(), host=args.host, port=args.port, access_log=None, print=None)
