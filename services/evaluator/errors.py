"""Errors both the evaluator's domain and its adapters raise: a failed call to another service,
an Idempotency-Key reused for another request. Neither knows HTTP: the controllers answer them."""

from __future__ import annotations


class UpstreamError(Exception):
    """A call to another service failed; ``retryable`` says whether trying again may help."""

    def __init__(self, reason: str, *, retryable: bool = True, unreachable: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retryable = retryable
        #: the service itself could not be reached (restarting, overloaded): worth waiting for
        #: longer than a failing model call
        self.unreachable = unreachable


class IdempotencyConflict(Exception):
    """The Idempotency-Key was used before with a different request: it made ``job_id``, a
    job of ``kind`` ("evaluation", "position-bias job")."""

    def __init__(self, job_id: str, kind: str) -> None:
        super().__init__(f"the key was used for {kind} {job_id} with a different request")
        self.job_id = job_id
        self.kind = kind
