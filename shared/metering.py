"""Counts the model calls made on one request's behalf and sums their token usage: the gateway's
strategies, the perturb service's generation and the verify service's judge share it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from steadfast.shared.contracts.gateway import GenerateRequest, GenerateResponse, ModelCalls, Usage


class ModelCaller(Protocol):
    """One model call by a gateway route; raises on a final failure."""

    async def generate(self, request: GenerateRequest) -> GenerateResponse: ...


@dataclass
class MeteredCaller:
    """Wraps a model caller for one request: every call, failed or cached, is counted."""

    caller: ModelCaller
    calls: int = 0
    cached_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    async def generate(self, request: GenerateRequest) -> GenerateResponse:
        self.calls += 1
        response = await self.caller.generate(request)
        if response.cached:
            self.cached_calls += 1
        self.input_tokens += response.usage.input_tokens
        self.output_tokens += response.usage.output_tokens
        return response

    def add(self, other: ModelCalls) -> None:
        """Counts the calls another service made for this request."""
        self.calls += other.calls
        self.cached_calls += other.cached_calls
        self.input_tokens += other.usage.input_tokens
        self.output_tokens += other.usage.output_tokens

    @property
    def upstream_calls(self) -> int:
        return self.calls - self.cached_calls

    @property
    def usage(self) -> Usage:
        return Usage(input_tokens=self.input_tokens, output_tokens=self.output_tokens)

    def summary(self) -> ModelCalls:
        return ModelCalls(calls=self.calls, cached_calls=self.cached_calls, usage=self.usage)


def sum_calls(parts: Iterable[ModelCalls]) -> ModelCalls:
    """The calls and tokens of several counts together."""
    calls = cached = input_tokens = output_tokens = 0
    for part in parts:
        calls += part.calls
        cached += part.cached_calls
        input_tokens += part.usage.input_tokens
        output_tokens += part.usage.output_tokens
    usage = Usage(input_tokens=input_tokens, output_tokens=output_tokens)
    return ModelCalls(calls=calls, cached_calls=cached, usage=usage)
