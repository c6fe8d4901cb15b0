"""Python client of Steadfast's public API (the evaluator): ``AsyncClient`` and ``Client``.

    from steadfast.client import Client, EvaluationCreate, EvaluationItem

    with Client("http://127.0.0.1:8000") as steadfast:
        accepted = steadfast.create_evaluation(
            EvaluationCreate(models=["local"], k=5, items=[EvaluationItem(question="...")])
        )
        final = steadfast.wait(accepted.id, progress=print)
        report = steadfast.report(accepted.id)

Results are the services' own wire contracts (msgspec Structs, re-exported here). A 429 or 503
is asked again after the server's ``Retry-After`` (else a growing back-off), up to
``max_retries`` times; every other error raises :class:`ApiError` with the server's
problem-details body. The API key comes from the argument or ``STEADFAST_API_KEY``; the address
from the argument, ``STEADFAST_EVALUATOR_URL`` or ``http://127.0.0.1:8000``.

Needs only ``msgspec`` and ``aiohttp``: ``pip install steadfast-reliability`` installs the client
without the services' dependencies.
"""

from __future__ import annotations

from steadfast.client.async_client import ApiError, AsyncClient
from steadfast.client.blocking_client import Client
from steadfast.shared.contracts.base import ReportFormat
from steadfast.shared.contracts.evaluator import (
    DatasetInfo,
    DatasetItemPage,
    DatasetList,
    EvaluateRequest,
    EvaluateResponse,
    EvaluationAccepted,
    EvaluationCreate,
    EvaluationItem,
    EvaluationPage,
    EvaluationReport,
    EvaluationSettings,
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

__all__ = [
    "ApiError",
    "AsyncClient",
    "Client",
    "DatasetInfo",
    "DatasetItemPage",
    "DatasetList",
    "EvaluateRequest",
    "EvaluateResponse",
    "EvaluationAccepted",
    "EvaluationCreate",
    "EvaluationItem",
    "EvaluationPage",
    "EvaluationReport",
    "EvaluationSettings",
    "EvaluationStatus",
    "ItemPage",
    "ItemResult",
    "Monitor",
    "MonitorCreate",
    "MonitorMetric",
    "MonitorPage",
    "MonitorRunAccepted",
    "MonitorSeries",
    "MonitorUpdate",
    "PositionBiasEvaluate",
    "PositionBiasEvaluation",
    "PositionBiasJob",
    "ReportFormat",
    "StudyAccepted",
    "StudyCreate",
    "StudyPage",
    "StudyReport",
    "StudyStatus",
]
