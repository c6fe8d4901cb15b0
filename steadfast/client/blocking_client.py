"""The blocking client of the public API (:class:`Client`): the asynchronous client's methods, run
on an event loop of the client's own thread."""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from concurrent.futures import Future
from types import TracebackType
from typing import Any, Concatenate, ParamSpec, TypeVar

from steadfast.client.async_client import AsyncClient
from steadfast.shared.contracts.evaluator import ItemResult

P = ParamSpec("P")
R = TypeVar("R")


def _blocking(
    method: Callable[Concatenate[AsyncClient, P], Awaitable[R]],
) -> Callable[Concatenate[Client, P], R]:
    """``AsyncClient.method`` as a method of ``Client`` that waits for its result."""

    @functools.wraps(method)
    def call(self: Client, *args: P.args, **kwargs: P.kwargs) -> R:
        return self._run(method(self._async, *args, **kwargs))  # type: ignore[arg-type]

    call.__qualname__ = f"Client.{method.__name__}"
    return call


class Client:
    """The public API, blocking: the same methods as :class:`AsyncClient`, run on an event
    loop of the client's own (a thread), so it works in scripts and in notebooks that already
    run a loop. Use as ``with Client() as client: ...`` or call :meth:`close`."""

    def __init__(
        self,
        base_url: str | None = None,
        *,
        api_key: str | None = None,
        timeout_s: float = 600.0,
        max_retries: int = 5,
    ) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="steadfast-client", daemon=True
        )
        self._thread.start()
        self._async = AsyncClient(
            base_url, api_key=api_key, timeout_s=timeout_s, max_retries=max_retries
        )

    @property
    def base_url(self) -> str:
        return self._async.base_url

    def _run(self, coroutine: Coroutine[Any, Any, R]) -> R:
        if self._loop.is_closed():
            coroutine.close()
            raise RuntimeError("the client is closed")
        if threading.current_thread() is self._thread:
            coroutine.close()  # from a progress callback: waiting here would wait for ever
            raise RuntimeError("the client cannot be called from its own callbacks")
        future: Future[R] = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        try:
            return future.result()
        except BaseException:
            future.cancel()  # Ctrl-C in a wait: the call stops too, not only the waiting
            raise

    def close(self) -> None:
        """Stop every call still running, close the connections and the client's thread."""
        if self._loop.is_closed():
            return
        try:
            self._run(self._shut_down())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join()
            self._loop.close()

    async def _shut_down(self) -> None:
        running = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        await self._async.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def iter_items(self, evaluation_id: str, page_size: int = 200) -> Iterator[ItemResult]:
        """Every item's result, fetched a page at a time as the loop goes on."""
        offset = 0
        while True:
            page = self.items(evaluation_id, limit=page_size, offset=offset)
            yield from page.items
            offset += len(page.items)
            if not page.items or offset >= page.total:
                return

    evaluate = _blocking(AsyncClient.evaluate)
    position_bias = _blocking(AsyncClient.position_bias)
    create_evaluation = _blocking(AsyncClient.create_evaluation)
    evaluation = _blocking(AsyncClient.evaluation)
    evaluations = _blocking(AsyncClient.evaluations)
    wait = _blocking(AsyncClient.wait)
    cancel = _blocking(AsyncClient.cancel)
    retry = _blocking(AsyncClient.retry)
    items = _blocking(AsyncClient.items)
    all_items = _blocking(AsyncClient.all_items)
    report = _blocking(AsyncClient.report)
    rendered_report = _blocking(AsyncClient.rendered_report)
    create_position_job = _blocking(AsyncClient.create_position_job)
    position_job = _blocking(AsyncClient.position_job)
    cancel_position_job = _blocking(AsyncClient.cancel_position_job)
    wait_position_job = _blocking(AsyncClient.wait_position_job)
    upload_dataset = _blocking(AsyncClient.upload_dataset)
    datasets = _blocking(AsyncClient.datasets)
    dataset = _blocking(AsyncClient.dataset)
    dataset_items = _blocking(AsyncClient.dataset_items)
    delete_dataset = _blocking(AsyncClient.delete_dataset)
    create_monitor = _blocking(AsyncClient.create_monitor)
    monitors = _blocking(AsyncClient.monitors)
    monitor = _blocking(AsyncClient.monitor)
    update_monitor = _blocking(AsyncClient.update_monitor)
    delete_monitor = _blocking(AsyncClient.delete_monitor)
    run_monitor = _blocking(AsyncClient.run_monitor)
    monitor_series = _blocking(AsyncClient.monitor_series)
    create_study = _blocking(AsyncClient.create_study)
    study = _blocking(AsyncClient.study)
    studies = _blocking(AsyncClient.studies)
    wait_study = _blocking(AsyncClient.wait_study)
    study_report = _blocking(AsyncClient.study_report)
    rendered_study_report = _blocking(AsyncClient.rendered_study_report)
