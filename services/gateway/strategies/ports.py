"""What the strategies need from the rest of the gateway."""

from __future__ import annotations

from typing import Protocol

from shared.contracts.gateway import GenerateRequest, GenerateResponse


class ModelGateway(Protocol):
    """Routing, cache, limits and retries of one model call; raises on a final failure."""

    async def generate(self, request: GenerateRequest) -> GenerateResponse: ...
