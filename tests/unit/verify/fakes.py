"""In-process stand-ins for the gateway and the embedder, for unit tests."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import msgspec
import numpy as np

from steadfast.shared.contracts.base import FieldError
from steadfast.shared.contracts.calibration import JudgeThreshold
from steadfast.shared.contracts.gateway import (
    GatewayProblem,
    GenerateRequest,
    GenerateResponse,
    TokenAlternative,
    Usage,
)
from steadfast.shared.http_client import ServiceCallError

Reply = str | GenerateResponse | ServiceCallError


def gateway_error(
    status: int,
    outcome: str | None = None,
    detail: str = "failed",
    field: str | None = None,
    retry_after_s: float | None = None,
) -> ServiceCallError:
    errors = [FieldError(field=field, message=detail)] if field else None
    problem = GatewayProblem(
        title="failed",
        status=status,
        detail=detail,
        outcome=outcome,
        errors=errors,
        retry_after_s=retry_after_s,
    )
    return ServiceCallError("gateway", status, problem, "http://gateway/v1/generate")


def response(text: str, logprobs: list[tuple[str, float]] | None = None) -> GenerateResponse:
    return GenerateResponse(
        text=text,
        model="fake",
        backend="openai",
        finish_reason="stop",
        usage=Usage(),
        latency_s=0.0,
        cached=False,
        logprobs=[TokenAlternative(token=t, logprob=lp) for t, lp in logprobs]
        if logprobs
        else None,
    )


class FakeGateway:
    """``generate`` answers with ``responder(request)``: a text, a full response, or an error,
    after ``latency_s``. A request with a ``time_limit_s`` shorter than that is answered at its
    limit, as the gateway does, with the part of the reply written by then (the reply is
    written evenly over the latency)."""

    def __init__(self, responder: Callable[[GenerateRequest], Reply], latency_s: float = 0.0):
        self.responder = responder
        self.latency_s = latency_s
        self.requests: list[GenerateRequest] = []
        self.inflight = 0
        self.max_inflight = 0
        #: the names the gateway answers to; None: it cannot say (nothing checked up front)
        self.routes: set[str] | None = None

        #: calibrated thresholds by (route, prompt version); others get METHOD's default
        #: by (route, prompt version), or (route, prompt version, task) for a task's own
        self.thresholds: dict[tuple[str, ...], float] = {}
        self.threshold_lookups: list[tuple[str, str, str | None]] = []

    async def route_names(self) -> set[str] | None:
        return self.routes

    async def judge_threshold(
        self, route: str, prompt_version: str, task: str | None = None
    ) -> JudgeThreshold:
        self.threshold_lookups.append((route, prompt_version, task))
        value = self.thresholds.get((route, prompt_version, task or ""))
        value = self.thresholds.get((route, prompt_version)) if value is None else value
        if value is None:
            return JudgeThreshold(value=0.5, source="method_default", origin="METHOD's default")
        return JudgeThreshold(value=value, source="calibrated", origin="stand-in calibration")

    async def generate(self, request: GenerateRequest) -> GenerateResponse:
        self.requests.append(request)
        self.inflight += 1
        self.max_inflight = max(self.max_inflight, self.inflight)
        limit = request.time_limit_s
        cut = limit is not None and self.latency_s > limit
        try:
            if self.latency_s:
                await asyncio.sleep(limit if cut and limit is not None else self.latency_s)
        finally:
            self.inflight -= 1
        reply = self.responder(request)
        if isinstance(reply, ServiceCallError):
            raise reply
        answer = reply if isinstance(reply, GenerateResponse) else response(reply)
        if not cut or limit is None:
            return answer
        share = limit / self.latency_s
        texts = [text[: int(len(text) * share)] for text in answer.samples or [answer.text]]
        return msgspec.structs.replace(
            answer,
            text=texts[0],
            samples=texts if answer.samples else None,
            finish_reason="time_limit",
        )


def user_text(request: GenerateRequest) -> str:
    return request.messages[-1].content


class BagOfWordsEmbedder:
    """Deterministic embedding: normalised word counts over a vocabulary built on the fly."""

    def __init__(self) -> None:
        self.vocabulary: dict[str, int] = {}
        self.calls: list[list[str]] = []

    async def embed(self, texts: list[str]) -> Any:
        self.calls.append(texts)
        rows = []
        for text in texts:
            vector = np.zeros(512)
            for word in text.lower().split():
                index = self.vocabulary.setdefault(word.strip("?.,!"), len(self.vocabulary))
                vector[index] += 1
            rows.append(vector / max(np.linalg.norm(vector), 1e-9))
        return np.array(rows)
