"""Client of the evaluator, the public API (used by the CLI and by other applications)."""

from __future__ import annotations

from steadfast.shared.contracts.evaluator import (
    DatasetInfo,
    DatasetList,
    EvaluateRequest,
    EvaluateResponse,
    EvaluationAccepted,
    EvaluationCreate,
    EvaluationPage,
    EvaluationReport,
    EvaluationStatus,
    ItemPage,
    ReportFormat,
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
from steadfast.shared.http_client import ServiceClient


class EvaluatorClient:
    def __init__(self, base_url: str, timeout_s: float = 600.0, api_key: str | None = None) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else None
        self._client = ServiceClient("evaluator", base_url, timeout_s, headers=headers)

    async def evaluate(self, request: EvaluateRequest) -> EvaluateResponse:
        return await self._client.post("/v1/evaluate", request, EvaluateResponse)

    async def position_bias(self, request: PositionBiasEvaluate) -> PositionBiasEvaluation:
        return await self._client.post("/v1/position-bias", request, PositionBiasEvaluation)

    async def create_position_job(
        self, request: PositionBiasEvaluate, idempotency_key: str | None = None
    ) -> PositionBiasJob:
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        return await self._client.post(
            "/v1/position-bias/jobs", request, PositionBiasJob, headers=headers
        )

    async def position_job(self, job_id: str) -> PositionBiasJob:
        return await self._client.get(f"/v1/position-bias/jobs/{job_id}", PositionBiasJob)

    async def create_evaluation(
        self, request: EvaluationCreate, idempotency_key: str | None = None
    ) -> EvaluationAccepted:
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        return await self._client.post(
            "/v1/evaluations", request, EvaluationAccepted, headers=headers
        )

    async def evaluation(self, evaluation_id: str) -> EvaluationStatus:
        return await self._client.get(f"/v1/evaluations/{evaluation_id}", EvaluationStatus)

    async def evaluations(self, limit: int = 20, offset: int = 0) -> EvaluationPage:
        params = {"limit": str(limit), "offset": str(offset)}
        return await self._client.get("/v1/evaluations", EvaluationPage, params=params)

    async def cancel(self, evaluation_id: str) -> EvaluationStatus:
        return await self._client.request(
            "DELETE", f"/v1/evaluations/{evaluation_id}", EvaluationStatus
        )

    async def items(self, evaluation_id: str, limit: int = 50, offset: int = 0) -> ItemPage:
        params = {"limit": str(limit), "offset": str(offset)}
        return await self._client.get(
            f"/v1/evaluations/{evaluation_id}/items", ItemPage, params=params
        )

    async def report(self, evaluation_id: str) -> EvaluationReport:
        return await self._client.get(f"/v1/evaluations/{evaluation_id}/report", EvaluationReport)

    async def rendered_report(self, evaluation_id: str, fmt: ReportFormat) -> bytes:
        """The report as a document: ``html`` (self-contained page) or ``csv``."""
        return await self._client.get(
            f"/v1/evaluations/{evaluation_id}/report", bytes, params={"format": fmt}
        )

    async def upload_dataset(
        self, content: bytes, name: str, *, task: str = "factual", fmt: str | None = None
    ) -> DatasetInfo:
        params = {"name": name, "task": task}
        if fmt:
            params["format"] = fmt
        return await self._client.request(
            "POST",
            "/v1/datasets",
            DatasetInfo,
            content,
            params=params,
        )

    async def datasets(self, limit: int = 100, offset: int = 0) -> DatasetList:
        params = {"limit": str(limit), "offset": str(offset)}
        return await self._client.get("/v1/datasets", DatasetList, params=params)

    async def create_monitor(self, request: MonitorCreate) -> Monitor:
        return await self._client.post("/v1/monitors", request, Monitor)

    async def monitors(self) -> MonitorPage:
        return await self._client.get("/v1/monitors", MonitorPage)

    async def monitor(self, monitor_id: str) -> Monitor:
        return await self._client.get(f"/v1/monitors/{monitor_id}", Monitor)

    async def update_monitor(self, monitor_id: str, change: MonitorUpdate) -> Monitor:
        return await self._client.request("PATCH", f"/v1/monitors/{monitor_id}", Monitor, change)

    async def delete_monitor(self, monitor_id: str) -> None:
        await self._client.request("DELETE", f"/v1/monitors/{monitor_id}", bytes)

    async def run_monitor(self, monitor_id: str) -> MonitorRunAccepted:
        return await self._client.post(f"/v1/monitors/{monitor_id}/runs", None, MonitorRunAccepted)

    async def monitor_series(
        self, monitor_id: str, model: str, metric: MonitorMetric
    ) -> MonitorSeries:
        params = {"model": model, "metric": metric}
        return await self._client.get(
            f"/v1/monitors/{monitor_id}/series", MonitorSeries, params=params
        )
