"""Counts the model calls one proxied request makes and sums their token usage."""

from __future__ import annotations

from dataclasses import dataclass

from services.gateway.strategies.ports import ModelGateway
from shared.contracts.gateway import GenerateRequest, GenerateResponse, Usage


@dataclass
class MeteredGateway:
    """Wraps the gateway for one request: every call, failed or cached, is counted."""

    gateway: ModelGateway
    calls: int = 0
    cached_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    async def generate(self, request: GenerateRequest) -> GenerateResponse:
        self.calls += 1
        response = await self.gateway.generate(request)
        if response.cached:
            self.cached_calls += 1
        self.input_tokens += response.usage.input_tokens
        self.output_tokens += response.usage.output_tokens
        return response

    @property
    def upstream_calls(self) -> int:
        return self.calls - self.cached_calls

    @property
    def usage(self) -> Usage:
        return Usage(input_tokens=self.input_tokens, output_tokens=self.output_tokens)
