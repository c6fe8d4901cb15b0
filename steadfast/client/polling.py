"""Waiting for a job: reading its status until it ends, or until a timeout."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar


class _Status(Protocol):
    """What a polled job reports: its status."""

    @property
    def status(self) -> str: ...


S = TypeVar("S", bound=_Status)


async def polled(
    read: Callable[[], Awaitable[S]],
    ended: Callable[[S], bool],
    what: str,
    progress: Callable[[S], object] | None,
    poll_s: float,
    timeout_s: float | None,
) -> S:
    """``read()`` every ``poll_s`` until ``ended``; ``TimeoutError`` after ``timeout_s``."""
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    while True:
        status = await read()
        if progress is not None:
            progress(status)
        if ended(status):
            return status
        if deadline is not None and time.monotonic() >= deadline:
            raise TimeoutError(f"{what} is still {status.status}")
        await asyncio.sleep(poll_s)
