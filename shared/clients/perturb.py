"""Client of the perturb service."""

from __future__ import annotations

from steadfast.shared.contracts.perturb import (
    DistractorRequest,
    DistractorResponse,
    ParaphraseBatchRequest,
    ParaphraseBatchResponse,
    ParaphraseRequest,
    ParaphraseResponse,
    PermutationRequest,
    PermutationResponse,
)
from steadfast.shared.http_client import ServiceClient
from steadfast.shared.internal_token import internal_headers


class PerturbClient:
    """The perturb service's API: paraphrases, distractors and option permutations."""

    def __init__(self, base_url: str, timeout_s: float = 3600.0, token: str = "") -> None:
        self._client = ServiceClient(
            "perturb", base_url, timeout_s, headers=internal_headers(token)
        )

    async def paraphrases(self, request: ParaphraseRequest) -> ParaphraseResponse:
        """Raises :class:`shared.http_client.ServiceCallError` with the callee's problem."""
        return await self._client.post("/v1/paraphrases", request, ParaphraseResponse)

    async def paraphrases_batch(self, requests: list[ParaphraseRequest]) -> ParaphraseBatchResponse:
        """Each item has its own result or error; one failure does not fail the batch."""
        return await self._client.post(
            "/v1/paraphrases/batch",
            ParaphraseBatchRequest(requests=requests),
            ParaphraseBatchResponse,
        )

    async def distractors(self, request: DistractorRequest) -> DistractorResponse:
        return await self._client.post("/v1/distractors", request, DistractorResponse)

    async def permutations(self, request: PermutationRequest) -> PermutationResponse:
        return await self._client.post("/v1/permutations", request, PermutationResponse)
