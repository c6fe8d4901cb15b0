"""Client of the scoring service: grading, consistency and positional-bias metrics, reports."""

from __future__ import annotations

from steadfast.shared.contracts.scoring import (
    ConsistencyRequest,
    ConsistencyResponse,
    GradeRequest,
    GradeResponse,
    PositionBiasRequest,
    PositionBiasResponse,
    ReportRenderRequest,
)
from steadfast.shared.http_client import ServiceClient
from steadfast.shared.internal_token import internal_headers


class ScoringClient:
    """The scoring service's API: grading, consistency and positional-bias metrics, reports."""

    def __init__(self, base_url: str, timeout_s: float = 600.0, token: str = "") -> None:
        self._client = ServiceClient(
            "scoring", base_url, timeout_s, headers=internal_headers(token)
        )

    async def grade(self, request: GradeRequest) -> GradeResponse:
        """Raises :class:`shared.http_client.ServiceCallError` (422 names the bad item)."""
        return await self._client.post("/v1/grade", request, GradeResponse)

    async def consistency(self, request: ConsistencyRequest) -> ConsistencyResponse:
        return await self._client.post("/v1/metrics/consistency", request, ConsistencyResponse)

    async def position_bias(self, request: PositionBiasRequest) -> PositionBiasResponse:
        return await self._client.post("/v1/metrics/position-bias", request, PositionBiasResponse)

    async def render_report(self, request: ReportRenderRequest) -> bytes:
        """The rendered document (UTF-8 JSON, CSV or HTML, as ``request.format`` asks)."""
        return await self._client.post("/v1/reports/render", request, bytes)
