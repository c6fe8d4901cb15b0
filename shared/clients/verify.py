"""Client of the verify service."""

from __future__ import annotations

from steadfast.shared.contracts.verify import VerifyRequest, VerifyResponse
from steadfast.shared.http_client import ServiceClient
from steadfast.shared.internal_token import internal_headers


class VerifyClient:
    """The verify service's ``POST /v1/verify``."""

    def __init__(self, base_url: str, timeout_s: float = 600.0, token: str = "") -> None:
        self._client = ServiceClient("verify", base_url, timeout_s, headers=internal_headers(token))

    async def verify(self, request: VerifyRequest) -> VerifyResponse:
        """Raises :class:`shared.http_client.ServiceCallError` with the callee's problem."""
        return await self._client.post("/v1/verify", request, VerifyResponse)
