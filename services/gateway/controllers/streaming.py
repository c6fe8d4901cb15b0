"""How the proxy streams an answer that is not ready yet."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class StreamTiming:
    """When a streamed answer that is not ready starts its stream, and how it is kept alive."""

    hold_s: float
    keepalive_s: float
