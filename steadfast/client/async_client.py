"""The asynchronous client of the public API (:class:`AsyncClient`): one coroutine a call, a 429
or 503 asked again after the server's ``Retry-After``, waits that poll a job until it ends."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

import aiohttp

from steadfast.client.polling import polled
from steadfast.shared.backoff import Backoff
from steadfast.shared.contracts.base import ReportFormat
from steadfast.shared.contracts.evaluator import (
    DatasetInfo,
    DatasetItemPage,
    DatasetList,
    EvaluateRequest,
    EvaluateResponse,
    EvaluationAccepted,
    EvaluationCreate,
    EvaluationPage,
    EvaluationReport,
    EvaluationStatus,
    ItemPage,
    ItemResult,
)
from steadfast.shared.contracts.monitors import (
    Monitor,
    MonitorCreate,
    MonitorMetric,
    MonitorPage,
    MonitorRunAccepted,
    MonitorSeries,
    MonitorUpdate,
)
from steadfast.shared.contracts.position import (
    PositionBiasEvaluate,
    PositionBiasEvaluation,
    PositionBiasJob,
)
from steadfast.shared.contracts.studies import (
    StudyAccepted,
    StudyCreate,
    StudyPage,
    StudyReport,
    StudyStatus,
)
from steadfast.shared.http_client import ServiceCallError, ServiceClient

#: the error every call raises: ``status`` (None: unreachable) and ``problem`` (the body)
ApiError = ServiceCallError

DEFAULT_URL = "http://127.0.0.1:8000"
FINISHED = frozenset({"succeeded", "failed", "cancelled"})
#: statuses that say "later", not "no"
RETRIED_STATUSES = frozenset({429, 503})

T = TypeVar("T")


def _later(error: Exception) -> bool:
    """The server said "not now" (429, 503): asking again later may succeed."""
    return isinstance(error, ServiceCallError) and error.status in RETRIED_STATUSES


class AsyncClient:
    """The public API, asynchronous. Use as ``async with AsyncClient() as client: ...``."""

    def __init__(
        self,
        base_url: str | None = None,
        *,
        api_key: str | None = None,
        timeout_s: float = 600.0,
        max_retries: int = 5,
    ) -> None:
        url = base_url or os.environ.get("STEADFAST_EVALUATOR_URL") or DEFAULT_URL
        key = api_key if api_key is not None else os.environ.get("STEADFAST_API_KEY")
        headers = {"Authorization": f"Bearer {key}"} if key else None
        self._session: aiohttp.ClientSession | None = None
        self._http = ServiceClient(
            "evaluator", url, timeout_s, headers=headers, session=self._connection_pool
        )
        #: a 429 or 503 is asked again up to ``max_retries`` times, 1 s, 2 s, 4 s ... apart (at
        #: most 30 s), never sooner than the server's Retry-After
        self.retries = Backoff(attempts=max_retries + 1, base_delay_s=1.0, max_delay_s=30.0)

    @property
    def base_url(self) -> str:
        return self._http.base_url

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    def _connection_pool(self) -> aiohttp.ClientSession:
        """The client's own connections (not the services' process-wide pool), made on first
        use in the loop the client runs in."""
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(raise_for_status=False)
        return self._session

    async def close(self) -> None:
        """Close the client's connections."""
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def _call(
        self, method: str, path: str, response_type: type[T], body: Any = None, **kwargs: Any
    ) -> T:
        return await self.retries.run(
            lambda: self._http.request(method, path, response_type, body, **kwargs),
            retryable=_later,
            retry_after=lambda error: getattr(error, "retry_after_s", None),
        )

    # ---- one request, answered at once ----------------------------------------------------

    async def evaluate(self, request: EvaluateRequest) -> EvaluateResponse:
        """``POST /v1/evaluate``: a few items, evaluated within the request."""
        return await self._call("POST", "/v1/evaluate", EvaluateResponse, request)

    async def position_bias(self, request: PositionBiasEvaluate) -> PositionBiasEvaluation:
        """``POST /v1/position-bias``: the option-order protocol on a few items."""
        return await self._call("POST", "/v1/position-bias", PositionBiasEvaluation, request)

    # ---- evaluations (persisted jobs) -----------------------------------------------------

    async def create_evaluation(
        self, request: EvaluationCreate, idempotency_key: str | None = None
    ) -> EvaluationAccepted:
        """``POST /v1/evaluations``. A retried request carries the same idempotency key (one
        is made when none is given), so it never starts the job twice."""
        headers = {"Idempotency-Key": idempotency_key or uuid.uuid4().hex}
        return await self._call(
            "POST", "/v1/evaluations", EvaluationAccepted, request, headers=headers
        )

    async def evaluation(self, evaluation_id: str) -> EvaluationStatus:
        return await self._call("GET", f"/v1/evaluations/{evaluation_id}", EvaluationStatus)

    async def evaluations(self, limit: int = 20, offset: int = 0) -> EvaluationPage:
        params = {"limit": str(limit), "offset": str(offset)}
        return await self._call("GET", "/v1/evaluations", EvaluationPage, params=params)

    async def wait(
        self,
        evaluation_id: str,
        *,
        progress: Callable[[EvaluationStatus], object] | None = None,
        poll_s: float = 1.0,
        timeout_s: float | None = None,
    ) -> EvaluationStatus:
        """Poll until the evaluation has finished (succeeded, failed or cancelled); ``progress``
        is called with every status read. ``TimeoutError`` after ``timeout_s``."""
        return await polled(
            lambda: self.evaluation(evaluation_id),
            lambda status: status.status in FINISHED,
            f"evaluation {evaluation_id}",
            progress,
            poll_s,
            timeout_s,
        )

    async def cancel(self, evaluation_id: str) -> EvaluationStatus:
        return await self._call("DELETE", f"/v1/evaluations/{evaluation_id}", EvaluationStatus)

    async def retry(self, evaluation_id: str) -> EvaluationAccepted:
        """``POST /v1/evaluations/{id}/retry``: run a finished job's failed parts again."""
        return await self._call(
            "POST", f"/v1/evaluations/{evaluation_id}/retry", EvaluationAccepted
        )

    async def items(self, evaluation_id: str, limit: int = 50, offset: int = 0) -> ItemPage:
        params = {"limit": str(limit), "offset": str(offset)}
        return await self._call(
            "GET", f"/v1/evaluations/{evaluation_id}/items", ItemPage, params=params
        )

    async def all_items(self, evaluation_id: str, page_size: int = 200) -> list[ItemResult]:
        """Every item's result, page by page."""
        results: list[ItemResult] = []
        async for page in self._item_pages(evaluation_id, page_size):
            results.extend(page.items)
        return results

    async def _item_pages(self, evaluation_id: str, page_size: int) -> AsyncIterator[ItemPage]:
        offset = 0
        while True:
            page = await self.items(evaluation_id, limit=page_size, offset=offset)
            yield page
            offset += len(page.items)
            if not page.items or offset >= page.total:
                return

    async def report(self, evaluation_id: str) -> EvaluationReport:
        return await self._call("GET", f"/v1/evaluations/{evaluation_id}/report", EvaluationReport)

    async def rendered_report(self, evaluation_id: str, fmt: ReportFormat) -> bytes:
        """The report as a document: ``html`` (a self-contained page) or ``csv``."""
        return await self._call(
            "GET", f"/v1/evaluations/{evaluation_id}/report", bytes, params={"format": fmt}
        )

    # ---- positional bias as a job ---------------------------------------------------------

    async def create_position_job(
        self, request: PositionBiasEvaluate, idempotency_key: str | None = None
    ) -> PositionBiasJob:
        headers = {"Idempotency-Key": idempotency_key or uuid.uuid4().hex}
        return await self._call(
            "POST", "/v1/position-bias/jobs", PositionBiasJob, request, headers=headers
        )

    async def position_job(self, job_id: str) -> PositionBiasJob:
        return await self._call("GET", f"/v1/position-bias/jobs/{job_id}", PositionBiasJob)

    async def cancel_position_job(self, job_id: str) -> PositionBiasJob:
        return await self._call("DELETE", f"/v1/position-bias/jobs/{job_id}", PositionBiasJob)

    async def wait_position_job(
        self, job_id: str, *, poll_s: float = 1.0, timeout_s: float | None = None
    ) -> PositionBiasJob:
        return await polled(
            lambda: self.position_job(job_id),
            lambda job: job.status in FINISHED,
            f"position-bias job {job_id}",
            None,
            poll_s,
            timeout_s,
        )

    # ---- datasets -------------------------------------------------------------------------

    async def upload_dataset(
        self, content: bytes, name: str, *, task: str = "factual", fmt: str | None = None
    ) -> DatasetInfo:
        """``POST /v1/datasets``: a JSONL, CSV, MMLU or SQuAD file's bytes."""
        params = {"name": name, "task": task, **({"format": fmt} if fmt else {})}
        return await self._call("POST", "/v1/datasets", DatasetInfo, content, params=params)

    async def datasets(self, limit: int = 100, offset: int = 0) -> DatasetList:
        params = {"limit": str(limit), "offset": str(offset)}
        return await self._call("GET", "/v1/datasets", DatasetList, params=params)

    async def dataset(self, dataset_id: str) -> DatasetInfo:
        return await self._call("GET", f"/v1/datasets/{dataset_id}", DatasetInfo)

    async def dataset_items(
        self, dataset_id: str, limit: int = 50, offset: int = 0
    ) -> DatasetItemPage:
        params = {"limit": str(limit), "offset": str(offset)}
        return await self._call(
            "GET", f"/v1/datasets/{dataset_id}/items", DatasetItemPage, params=params
        )

    async def delete_dataset(self, dataset_id: str) -> None:
        await self._call("DELETE", f"/v1/datasets/{dataset_id}", bytes)

    # ---- monitors -------------------------------------------------------------------------

    async def create_monitor(self, request: MonitorCreate) -> Monitor:
        return await self._call("POST", "/v1/monitors", Monitor, request)

    async def monitors(self) -> MonitorPage:
        return await self._call("GET", "/v1/monitors", MonitorPage)

    async def monitor(self, monitor_id: str) -> Monitor:
        return await self._call("GET", f"/v1/monitors/{monitor_id}", Monitor)

    async def update_monitor(self, monitor_id: str, change: MonitorUpdate) -> Monitor:
        return await self._call("PATCH", f"/v1/monitors/{monitor_id}", Monitor, change)

    async def delete_monitor(self, monitor_id: str) -> None:
        await self._call("DELETE", f"/v1/monitors/{monitor_id}", bytes)

    async def run_monitor(self, monitor_id: str) -> MonitorRunAccepted:
        return await self._call("POST", f"/v1/monitors/{monitor_id}/runs", MonitorRunAccepted)

    async def monitor_series(
        self, monitor_id: str, model: str, metric: MonitorMetric
    ) -> MonitorSeries:
        params = {"model": model, "metric": metric}
        return await self._call(
            "GET", f"/v1/monitors/{monitor_id}/series", MonitorSeries, params=params
        )

    # ---- studies --------------------------------------------------------------------------

    async def create_study(self, request: StudyCreate) -> StudyAccepted:
        """``POST /v1/studies``: every part starts as its own job."""
        return await self._call("POST", "/v1/studies", StudyAccepted, request)

    async def study(self, study_id: str) -> StudyStatus:
        return await self._call("GET", f"/v1/studies/{study_id}", StudyStatus)

    async def studies(self, limit: int = 20, offset: int = 0) -> StudyPage:
        params = {"limit": str(limit), "offset": str(offset)}
        return await self._call("GET", "/v1/studies", StudyPage, params=params)

    async def wait_study(
        self,
        study_id: str,
        *,
        progress: Callable[[StudyStatus], object] | None = None,
        poll_s: float = 2.0,
        timeout_s: float | None = None,
    ) -> StudyStatus:
        """Poll until every part has ended; ``progress`` is called with every status read."""
        return await polled(
            lambda: self.study(study_id),
            lambda status: status.status != "running",
            f"study {study_id}",
            progress,
            poll_s,
            timeout_s,
        )

    async def study_report(self, study_id: str) -> StudyReport:
        return await self._call("GET", f"/v1/studies/{study_id}/report", StudyReport)

    async def rendered_study_report(self, study_id: str, fmt: ReportFormat) -> bytes:
        """The study's report as a document: ``html`` or ``csv``."""
        return await self._call(
            "GET", f"/v1/studies/{study_id}/report", bytes, params={"format": fmt}
        )
