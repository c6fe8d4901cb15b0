"""A stand-in verify service for the round logic."""

from __future__ import annotations

from collections.abc import Callable

from steadfast.shared.contracts.gateway import ModelCalls, Usage
from steadfast.shared.contracts.verify import CandidateVerdict, VerifyRequest, VerifyResponse
from steadfast.shared.http_client import ServiceCallError


class FakeVerifier:
    """Accepts the candidates ``accept(text)`` says yes to; rejects the rest at the judge. Reports
    the judge's calls: two a candidate (both orders), its words in, one token out each."""

    def __init__(
        self,
        accept: Callable[[str], bool] = lambda _: True,
        error: ServiceCallError | None = None,
        fail_first: int | None = None,
        judge_error: str | None = None,
    ) -> None:
        self.accept = accept
        self.error = error
        #: with ``error``: only the first calls fail (all of them when None)
        self.fail_first = fail_first
        #: the judge stage fails on every candidate with this error
        self.judge_error = judge_error
        self.requests: list[VerifyRequest] = []
        self.responses: list[VerifyResponse] = []

    async def verify(self, request: VerifyRequest) -> VerifyResponse:
        self.requests.append(request)
        failing = self.fail_first is None or len(self.requests) <= self.fail_first
        if self.error is not None and failing:
            raise self.error
        results = [
            CandidateVerdict(
                text=text,
                accepted=False,
                deciding_stage="judge",
                reason=self.judge_error,
                error=self.judge_error,
            )
            if self.judge_error
            else CandidateVerdict(text=text, accepted=True, judge_verdict="yes")
            if self.accept(text)
            else CandidateVerdict(
                text=text,
                accepted=False,
                deciding_stage="judge",
                reason="judge answered no",
                judge_verdict="no",
            )
            for text in request.candidates
        ]
        words = sum(len(text.split()) for text in request.candidates)
        judge_calls = ModelCalls(
            calls=2 * len(request.candidates),
            usage=Usage(input_tokens=2 * words, output_tokens=2 * len(request.candidates)),
        )
        response = VerifyResponse(
            results=results,
            semantic_check="embedding",
            judge_model=request.judge_model,
            model_calls=judge_calls,
        )
        self.responses.append(response)
        return response
