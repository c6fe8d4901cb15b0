"""Backend for the bundled models, run in-process by llama.cpp through ``xllamacpp``.

The GGUF is assembled and verified, and the model loaded, on the first request, so the service is
ready at once. Requests go to llama.cpp's own HTTP listener on 127.0.0.1 rather than through its
blocking Python call: llama.cpp batches them over its slots (``n_parallel``), the event loop stays
free, and a request given up (a timeout, an early stop) closes its connection, which llama.cpp
notices within about a second and stops generating, freeing the slot and the CPU.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from typing import Any

import msgspec

from steadfast.services.gateway.adapters.backends import BackendContext
from steadfast.services.gateway.adapters.backends.http_backend import HttpBackend
from steadfast.services.gateway.adapters.backends.openai import (
    chat_body,
    decode_completion,
    streamed_body,
)
from steadfast.services.gateway.adapters.local_models import (
    BUNDLED_MODELS,
    LocalModelError,
    ensure_model_file,
)
from steadfast.services.gateway.domain.backend import Completion, nothing_written
from steadfast.services.gateway.domain.errors import BackendError
from steadfast.services.gateway.domain.routes import Route
from steadfast.shared.contracts.gateway import GenerateRequest

logger = logging.getLogger(__name__)

LOOPBACK = "127.0.0.1"
JSON_HEADERS = {"Content-Type": "application/json"}
MAX_HTTP_THREADS = 64


class LocalBackend(HttpBackend):
    """The bundled GGUF models, served in-process by llama.cpp (loaded on the first request)."""

    name = "local"
    supports_logprobs = True
    retry_timeouts = False

    def __init__(self, route: Route, context: BackendContext) -> None:
        super().__init__(route, url="")  # known once the model is loaded
        self.models_dir = context.models_dir
        self.threads = route.threads or context.local_threads or max(1, (os.cpu_count() or 2) - 1)
        self._server: Any = None
        self._loading: asyncio.Future[Any] | None = None

    def max_samples(self, route: Route) -> int:
        return route.n_parallel  # llama.cpp writes a sample a slot and refuses more

    @property
    def listening_address(self) -> str | None:
        """Where llama.cpp's own HTTP listener is (always 127.0.0.1), once loaded."""
        return str(self._server.listening_address) if self._server is not None else None

    async def load(self) -> None:
        """Assemble, verify and load the model (done by the first request otherwise). Every
        caller waits for the one load; a caller that gives up does not stop it (the thread
        could not be stopped anyway, and the next caller would start a second one)."""
        if self._server is not None:
            return
        if self._loading is None or _failed(self._loading):
            self._loading = asyncio.ensure_future(asyncio.to_thread(self._load_blocking))
        server = await asyncio.shield(self._loading)
        self.url = f"{server.listening_address}/v1/chat/completions"
        self._server = server

    def _load_blocking(self) -> Any:
        import xllamacpp

        path = ensure_model_file(BUNDLED_MODELS[self.route.model], self.models_dir)
        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.n_ctx = self.route.n_ctx
        params.n_parallel = self.route.n_parallel
        params.cpuparams.n_threads = self.threads
        params.cpuparams_batch.n_threads = self.threads
        # a thread per request the route lets in (within reason), so that a queued request that
        # is given up is noticed too
        admitted = max(self.route.n_parallel, self.route.max_concurrency)
        params.n_threads_http = min(admitted, MAX_HTTP_THREADS) + 2
        params.verbosity = 1  # errors only: llama.cpp logs every slot and token timing to stderr
        # llama.cpp opens an unauthenticated HTTP listener: loopback only
        params.hostnames = [LOOPBACK]
        server = xllamacpp.Server(params)
        address = str(server.listening_address)
        if not address.startswith(f"http://{LOOPBACK}:"):
            raise LocalModelError(f"llama.cpp listens on {address}, not on {LOOPBACK} only")
        logger.info("local model loaded", extra={"route": self.route.name, "path": str(path)})
        return server

    async def complete(self, request: GenerateRequest, timeout_s: float) -> Completion:
        began = time.perf_counter()
        try:
            await self.load()
        except LocalModelError as exc:
            raise BackendError("unavailable", str(exc)) from exc
        except (ImportError, OSError, RuntimeError) as exc:
            # xllamacpp missing, the model file unwritable, llama.cpp refusing the model: the
            # route has no model to answer with, which is no bad answer of one
            detail = f"the local model could not be loaded: {type(exc).__name__}: {exc}"
            raise BackendError("unavailable", detail) from exc
        if request.time_limit_s is not None:
            # the first request's load counts against its limit too
            left_s = request.time_limit_s - (time.perf_counter() - began)
            if left_s <= 0:
                return nothing_written(request.n)
            # llama.cpp says in every chunk what it has read and written: a reply cut at the
            # limit is counted too
            streamed = streamed_body(self.route.model, request, timings_per_token=True)
            return await self._post_streamed(
                msgspec.json.encode(streamed), JSON_HEADERS, timeout_s, request.n, left_s
            )
        body = msgspec.json.encode(chat_body(self.route.model, request))
        payload = await self._post(body, JSON_HEADERS, timeout_s)
        return decode_completion(payload, request)

    async def close(self) -> None:
        await super().close()
        self._server = self._loading = None


def _failed(loading: asyncio.Future[Any]) -> bool:
    return loading.done() and (loading.cancelled() or loading.exception() is not None)
