"""Client of the model gateway, used by every service that needs a model."""

from __future__ import annotations

from shared.contracts.gateway import (
    GenerateBatchRequest,
    GenerateBatchResponse,
    GenerateRequest,
    GenerateResponse,
    ModelList,
)
from shared.http_client import ServiceClient


class GatewayClient:
    def __init__(self, base_url: str, timeout_s: float = 600.0) -> None:
        self._client = ServiceClient("gateway", base_url, timeout_s)

    async def generate(self, request: GenerateRequest) -> GenerateResponse:
        """Raises :class:`shared.http_client.ServiceCallError`; its ``problem.outcome`` is typed."""
        return await self._client.post("/v1/generate", request, GenerateResponse)

    async def generate_batch(self, requests: list[GenerateRequest]) -> GenerateBatchResponse:
        return await self._client.post(
            "/v1/generate/batch", GenerateBatchRequest(requests=requests), GenerateBatchResponse
        )

    async def models(self) -> ModelList:
        return await self._client.get("/v1/models", ModelList)
