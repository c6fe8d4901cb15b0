"""Client of the verify service."""

from __future__ import annotations

from steadfast.shared.contracts.verify import VerifyRequest, VerifyResponse
from steadfast.shared.http_client import ServiceClient


class VerifyClient:
    """The verify service's ``POST /v1/verify``."""

    def __init__(self, base_url: str, timeout_s: float = 600.0) -> None:
        self._client = ServiceClient("verify", base_url, timeout_s)

    async def verify(self, request: VerifyRequest) -> VerifyResponse:
        """Raises :class:`shared.http_client.ServiceCallError` with the callee's problem."""
        return await self._client.post("/v1/verify", request, VerifyResponse)
