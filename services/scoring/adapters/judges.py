"""LLM judges reached through the model gateway."""

from __future__ import annotations

from steadfast.services.scoring.domain.errors import DependencyFailed
from steadfast.shared.clients.gateway import GatewayClient
from steadfast.shared.contracts.base import Problem
from steadfast.shared.contracts.gateway import ChatMessage, GenerateRequest
from steadfast.shared.http_client import ServiceCallError

#: the gateway accepts at most this many requests per batch call
BATCH = 1000


class GatewayJudges:
    """The LLM grader's judges: greedy completions of judge routes, asked through the model
    gateway in batches; a gateway that fails the whole batch fails grading (DependencyFailed)."""

    def __init__(self, client: GatewayClient, max_tokens: int = 8) -> None:
        self.client = client
        self.max_tokens = max_tokens

    async def replies(self, calls: list[tuple[str, list[dict[str, str]]]]) -> list[str | Problem]:
        """One greedy completion per (judge route, messages); a failed call gives its problem."""
        requests = [
            GenerateRequest(
                model=model,
                messages=[ChatMessage(role=m["role"], content=m["content"]) for m in messages],  # type: ignore[arg-type]
                temperature=0.0,
                max_tokens=self.max_tokens,
            )
            for model, messages in calls
        ]
        replies: list[str | Problem] = []
        for start in range(0, len(requests), BATCH):
            try:
                batch = await self.client.generate_batch(requests[start : start + BATCH])
            except ServiceCallError as error:
                detail = f"the gateway: {error.problem.title}: {error.problem.detail or ''}"
                raise DependencyFailed(
                    "Judge calls failed", detail.strip(), unavailable=error.unreachable
                ) from error
            for item in batch.results:
                if item.result is not None:
                    replies.append(item.result.text)
                else:
                    replies.append(item.error or Problem(title="no result", status=502))
        return replies
