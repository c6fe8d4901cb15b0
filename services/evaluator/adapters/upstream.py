"""The :class:`Upstream` port over HTTP: perturb, gateway and scoring through their clients."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import msgspec

from steadfast.services.evaluator.errors import UpstreamError
from steadfast.services.evaluator.records import Generated
from steadfast.shared.clients.gateway import GatewayClient
from steadfast.shared.clients.perturb import PerturbClient
from steadfast.shared.clients.scoring import ScoringClient
from steadfast.shared.clients.verify import VerifyClient
from steadfast.shared.contracts.base import Problem, ReportFormat
from steadfast.shared.contracts.calibration import JudgeThreshold
from steadfast.shared.contracts.gateway import GenerateRequest, gateway_outcome
from steadfast.shared.contracts.perturb import (
    DistractorRequest,
    DistractorResponse,
    ParaphraseRequest,
    ParaphraseResponse,
    PermutationRequest,
    PermutationResponse,
)
from steadfast.shared.contracts.scoring import (
    ConsistencyRequest,
    GradeRequest,
    GradeResult,
    PositionBiasRequest,
    PositionBiasResponse,
    Report,
    ReportRenderRequest,
)
from steadfast.shared.contracts.verify import VerifyRequest, VerifyResponse
from steadfast.shared.http_client import ServiceCallError, is_transient
from steadfast.shared.settings import ServiceSettings

Renderer = Callable[[Report, ReportFormat], Awaitable[bytes]]

#: gateway outcomes worth another attempt later (the gateway already retried them itself)
RETRYABLE_OUTCOMES = frozenset({"rate_limited", "timeout", "upstream_error", "unavailable"})


def describe(problem: Problem) -> str:
    head = gateway_outcome(problem) or problem.title
    return f"{head}: {problem.detail}" if problem.detail else head


def _retryable(status: int | None, problem: Problem) -> bool:
    outcome = gateway_outcome(problem)
    if outcome is not None:
        return outcome in RETRYABLE_OUTCOMES
    return status is None or status >= 500 or status == 429


def upstream_error(error: ServiceCallError) -> UpstreamError:
    """A failed call; one that is down for now (the service or the model server behind the
    gateway) is waited for as long as an unreachable service, not given up on after a few
    quick attempts: its work would be lost, not failed on its merits."""
    reason = f"{error.service}: {describe(error.problem)}"
    retryable = _retryable(error.status, error.problem)
    return UpstreamError(reason, retryable=retryable, unreachable=error.transient)


class HttpUpstream:
    """The evaluator's upstream port over HTTP: the gateway, perturb, verify and scoring
    clients, their failures as :class:`UpstreamError`."""

    def __init__(self, settings: ServiceSettings) -> None:
        timeout, token = settings.call_timeout_s, settings.internal_token
        self.gateway = GatewayClient(settings.service_url("gateway"), timeout, token=token)
        self.perturb = PerturbClient(settings.service_url("perturb"), timeout, token)
        self.scoring = ScoringClient(settings.service_url("scoring"), timeout, token)
        self.verifier = VerifyClient(settings.service_url("verify"), timeout, token)

    async def render(self, report: Report, fmt: ReportFormat) -> bytes:
        """The report rendered by the scoring service (HTML page or CSV)."""
        request = ReportRenderRequest(report=report, format=fmt)
        try:
            return await self.scoring.render_report(request)
        except ServiceCallError as error:
            raise upstream_error(error) from error

    async def paraphrase(self, request: ParaphraseRequest) -> ParaphraseResponse:
        try:
            return await self.perturb.paraphrases(request)
        except ServiceCallError as error:
            raise upstream_error(error) from error

    async def generate_batch(self, requests: list[GenerateRequest]) -> list[Generated]:
        try:
            response = await self.gateway.generate_batch(requests)
        except ServiceCallError as error:
            raise upstream_error(error) from error
        outcomes = []
        for item in response.results:
            if item.result is not None:
                result = item.result
                outcomes.append(
                    Generated(
                        text=result.text,
                        cached=result.cached,
                        logprobs=result.logprobs,
                        cut=result.finish_reason == "length",
                    )
                )
            else:
                problem = item.error or Problem(title="no result", status=502)
                failure = UpstreamError(
                    f"gateway: {describe(problem)}",
                    retryable=_retryable(problem.status, problem),
                    unreachable=is_transient(problem.status, problem),
                )
                outcomes.append(Generated(error=failure))
        return outcomes

    async def verify(self, request: VerifyRequest) -> VerifyResponse:
        try:
            return await self.verifier.verify(request)
        except ServiceCallError as error:
            raise upstream_error(error) from error

    async def judge_threshold(self, route: str, prompt_version: str) -> JudgeThreshold:
        try:
            return await self.gateway.judge_threshold(route, prompt_version)
        except ServiceCallError as error:
            raise upstream_error(error) from error

    async def grade(self, request: GradeRequest) -> list[GradeResult]:
        try:
            return (await self.scoring.grade(request)).results
        except ServiceCallError as error:
            raise upstream_error(error) from error

    async def consistency(self, request: ConsistencyRequest) -> dict[str, Any]:
        try:
            response = await self.scoring.consistency(request)
        except ServiceCallError as error:
            raise upstream_error(error) from error
        result: dict[str, Any] = msgspec.to_builtins(response)
        return result

    async def distractors(self, request: DistractorRequest) -> DistractorResponse:
        try:
            return await self.perturb.distractors(request)
        except ServiceCallError as error:
            raise upstream_error(error) from error

    async def permutations(self, request: PermutationRequest) -> PermutationResponse:
        try:
            return await self.perturb.permutations(request)
        except ServiceCallError as error:
            raise upstream_error(error) from error

    async def position_bias(self, request: PositionBiasRequest) -> PositionBiasResponse:
        try:
            return await self.scoring.position_bias(request)
        except ServiceCallError as error:
            raise upstream_error(error) from error

    async def route_names(self) -> set[str] | None:
        return await self.gateway.route_names()

    async def logprob_routes(self) -> set[str]:
        try:
            listing = await self.gateway.models()
        except ServiceCallError as error:
            raise upstream_error(error) from error
        return {route.name for route in listing.models if route.supports_logprobs}
