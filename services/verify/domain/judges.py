"""Which judge answers a request: its route checked first, one judge per route and prompt."""

from __future__ import annotations

from typing import Protocol

from steadfast.services.verify.domain.judge import Judge
from steadfast.services.verify.domain.prompts import ANSWER_FIT, AUDIT, EQUIVALENCE, JudgePrompt
from steadfast.shared.contracts.verify import VerifyRequest
from steadfast.shared.errors import Unavailable, Unprocessable
from steadfast.shared.metering import ModelCaller


class RoutedCaller(ModelCaller, Protocol):
    """A model caller that can list the routes it knows (``None``: it cannot tell)."""

    async def route_names(self) -> set[str] | None: ...


class JudgePool:
    """The judges this service has asked, shared by every request (a route's concurrency
    limit holds across requests), and the check that a request's judge route exists."""

    def __init__(self, caller: RoutedCaller, default_model: str, concurrency: int) -> None:
        self.caller = caller
        self.default_model = default_model
        self.concurrency = concurrency
        self._judges: dict[tuple[str, str], Judge] = {}

    async def judge_for(self, request: VerifyRequest) -> Judge:
        """The equivalence judge, once the gateway is known to have its route (checked before
        any stage runs: a candidate may never reach the judge, and a caller would learn of a
        misspelt route rounds later); a default route the gateway lacks is this service's
        misconfiguration (unavailable, not the caller's fault)."""
        model = request.judge_model or self.default_model
        await self._require_route(model, "judge_model", default=request.judge_model is None)
        return self._judge(model, EQUIVALENCE)

    async def audit_judge_for(self, request: VerifyRequest) -> Judge:
        """The judge of the audit's second question: its own route, else the judge's."""
        if request.audit_judge_model is not None:
            await self._require_route(request.audit_judge_model, "audit_judge_model")
            return self._judge(request.audit_judge_model, AUDIT)
        model = request.judge_model or self.default_model
        await self._require_route(model, "judge_model", default=request.judge_model is None)
        return self._judge(model, AUDIT)

    def answer_judge_of(self, audit_judge: Judge) -> Judge:
        """The judge of the audit's answer check: the audit's route, with its own prompt."""
        return self._judge(audit_judge.model, ANSWER_FIT)

    async def _require_route(self, model: str, field: str, *, default: bool = False) -> None:
        known = await self.caller.route_names()
        if known is None or model in known:
            return
        if default:
            detail = f"the default judge route {model!r} is not a gateway route: set judge_model"
            raise Unavailable(detail, title="Judge route not configured")
        detail = f"the gateway has no model {model!r}"
        raise Unprocessable(detail, field=field, title="Unknown judge model")

    def _judge(self, model: str, prompt: JudgePrompt) -> Judge:
        key = (model, prompt.version)
        if key not in self._judges:
            self._judges[key] = Judge(
                self.caller, model, concurrency=self.concurrency, prompt=prompt
            )
        return self._judges[key]
