"""Judge thresholds as the gateway keeps them, read at most every ``ttl_s`` per route, prompt and
task."""

from __future__ import annotations

import time
from typing import Protocol

from steadfast.services.verify.domain.prompts import JudgePrompt
from steadfast.shared.contracts.base import Task
from steadfast.shared.contracts.calibration import JudgeThreshold

#: a calibration stored by ``steadfast calibrate`` is used by verify within this many seconds
THRESHOLD_TTL_S = 30.0


class ThresholdKeeper(Protocol):
    """The gateway's ``/v1/calibrations``, asked for a judge route's threshold."""

    async def judge_threshold(
        self, route: str, prompt_version: str, task: Task | None = None
    ) -> JudgeThreshold: ...


class GatewayThresholds:
    """A judge route's P(YES) threshold as the gateway keeps it, re-read after ``ttl_s``."""

    def __init__(self, gateway: ThresholdKeeper, ttl_s: float = THRESHOLD_TTL_S) -> None:
        self._gateway = gateway
        self._ttl_s = ttl_s
        self._read: dict[tuple[str, str, Task | None], tuple[float, JudgeThreshold]] = {}

    async def __call__(
        self, route: str, prompt: JudgePrompt, task: Task | None = None
    ) -> JudgeThreshold:
        """Raises :class:`shared.http_client.ServiceCallError` when the gateway cannot say."""
        key = (route, prompt.version, task)
        now = time.monotonic()
        read = self._read.get(key)
        if read is not None and now - read[0] < self._ttl_s:
            return read[1]
        threshold = await self._gateway.judge_threshold(route, prompt.version, task)
        self._read[key] = (now, threshold)
        return threshold
