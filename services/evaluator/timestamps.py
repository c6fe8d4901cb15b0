"""Times as the evaluator's API shows them: stored as epoch seconds, shown in ISO 8601 (UTC)."""

from __future__ import annotations

from datetime import UTC, datetime


def iso(epoch: float | None) -> str | None:
    return datetime.fromtimestamp(epoch, UTC).isoformat() if epoch is not None else None
