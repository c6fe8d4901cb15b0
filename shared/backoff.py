"""Exponential back-off: one definition for every caller that asks a failing callee again."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")

#: the jitter of :meth:`Backoff.run`: callers that failed together do not ask again together
_JITTER = random.Random()


@dataclass(frozen=True)
class Backoff:
    """At most ``attempts`` tries, waiting ``base_delay_s * 2**(n-1)`` (capped at
    ``max_delay_s``) after the n-th failed one."""

    attempts: int = 3
    base_delay_s: float = 0.5
    max_delay_s: float = 30.0

    def delay(self, attempt: int) -> float:
        """Seconds to wait after failed attempt ``attempt`` (1 for the first) before the next."""
        return float(min(self.max_delay_s, self.base_delay_s * 2 ** (attempt - 1)))

    def jittered_delay(
        self, attempt: int, rng: random.Random, retry_after_s: float | None = None
    ) -> float:
        """Between 50% and 100% of :meth:`delay`, so that concurrent callers spread out, and
        never shorter than the server's Retry-After."""
        jittered = self.delay(attempt) * (0.5 + 0.5 * rng.random())
        return max(jittered, retry_after_s or 0.0)

    @classmethod
    def lasting(cls, total_s: float, base_delay_s: float, max_delay_s: float = 30.0) -> Backoff:
        """As many attempts as fit waits adding up to at least ``total_s``."""
        if base_delay_s <= 0 or max_delay_s <= 0:
            raise ValueError("the delays must be positive: waits that never grow never add up")
        policy, waited = cls(1, base_delay_s, max_delay_s), 0.0
        while waited < total_s:
            waited += policy.delay(policy.attempts)
            policy = cls(policy.attempts + 1, base_delay_s, max_delay_s)
        return policy

    def gives_up(self, attempts: int, *, retryable: bool) -> bool:
        """Whether to stop after ``attempts`` failed tries, the last one ``retryable`` or not."""
        return not retryable or attempts >= self.attempts

    async def run(
        self,
        call: Callable[[], Awaitable[T]],
        *,
        retryable: Callable[[Exception], bool],
        retry_after: Callable[[Exception], float | None] | None = None,
    ) -> T:
        """``call()``, tried again after each failure ``retryable`` says is worth it, after a
        jittered wait that is never shorter than ``retry_after(failure)`` (the server's
        Retry-After); the last failure is raised."""
        attempt = 1
        while True:
            try:
                return await call()
            except Exception as error:
                if self.gives_up(attempt, retryable=retryable(error)):
                    raise
                wait_at_least = retry_after(error) if retry_after else None
            await asyncio.sleep(self.jittered_delay(attempt, _JITTER, wait_at_least))
            attempt += 1
