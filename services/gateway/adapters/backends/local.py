"""Backend for the bundled models, run in-process by llama.cpp through ``xllamacpp``.

The GGUF is assembled and verified, and the model loaded, on the first request, so the service is
ready at once. Inference runs in a thread pool with one thread per llama.cpp slot
(``n_parallel``): the native call releases the GIL, so concurrent requests are batched by
llama.cpp while the event loop stays free.
"""

from __future__ import annotations

import asyncio
import logging
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import msgspec

from services.gateway.adapters.backends import BackendContext
from services.gateway.adapters.backends.http_errors import error_for_status
from services.gateway.adapters.backends.openai import ChatCompletion, chat_body, completion_from
from services.gateway.adapters.local_models import (
    BUNDLED_MODELS,
    LocalModelError,
    ensure_model_file,
)
from services.gateway.domain.backend import Completion
from services.gateway.domain.errors import BackendError
from services.gateway.domain.routes import Route
from shared.contracts.gateway import GenerateRequest

logger = logging.getLogger(__name__)

LOOPBACK = "127.0.0.1"


class LocalBackend:
    name = "local"
    supports_logprobs = True
    retry_timeouts = False

    def __init__(self, route: Route, context: BackendContext) -> None:
        self.route = route
        self.models_dir = context.models_dir
        self._server: Any = None
        self._loading: asyncio.Future[Any] | None = None
        self._executor = ThreadPoolExecutor(
            max_workers=route.n_parallel, thread_name_prefix=f"llama-{route.name}"
        )

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
        self._server = await asyncio.shield(self._loading)

    def _load_blocking(self) -> Any:
        import xllamacpp

        path = ensure_model_file(BUNDLED_MODELS[self.route.model], self.models_dir)
        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.n_ctx = self.route.n_ctx
        params.n_parallel = self.route.n_parallel
        threads = self.route.threads or max(1, (os.cpu_count() or 2) - 1)
        params.cpuparams.n_threads = threads
        params.cpuparams_batch.n_threads = threads
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
        try:
            await self.load()
        except LocalModelError as exc:
            raise BackendError("unavailable", str(exc)) from exc
        body = chat_body(self.route.model, request)
        loop = asyncio.get_running_loop()
        try:
            result = await loop.run_in_executor(
                self._executor, self._server.handle_chat_completions, body
            )
        except Exception as exc:  # the native call reports failures as exceptions
            raise BackendError("upstream_error", f"llama.cpp: {exc}", status=500) from exc
        return _completion(result, request)

    async def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
        self._server = None


def _failed(loading: asyncio.Future[Any]) -> bool:
    return loading.done() and (loading.cancelled() or loading.exception() is not None)


def _completion(result: Any, request: GenerateRequest) -> Completion:
    if not isinstance(result, dict):
        raise BackendError("bad_response", f"llama.cpp answered {type(result).__name__}")
    if "error" in result:
        error = result["error"]
        status = int(error.get("code", 500)) if isinstance(error, dict) else 500
        message = error.get("message", str(error)) if isinstance(error, dict) else str(error)
        raise error_for_status(status, str(message), {})
    try:
        response = msgspec.convert(result, type=ChatCompletion)
    except msgspec.ValidationError as exc:
        raise BackendError("bad_response", f"llama.cpp answer: {exc}") from exc
    return completion_from(response, request)
