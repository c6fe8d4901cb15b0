"""The request id of the request being handled, propagated to logs and outgoing calls."""

from __future__ import annotations

import re
import uuid
from contextvars import ContextVar

REQUEST_ID_HEADER = "X-Request-ID"
_VALID_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")

current_request_id: ContextVar[str | None] = ContextVar("steadfast_request_id", default=None)


def new_request_id() -> str:
    return uuid.uuid4().hex


def accept_request_id(incoming: str | None) -> str:
    """Keep a caller's id when it is well-formed (so traces join up), else mint one."""
    if incoming and _VALID_REQUEST_ID.match(incoming):
        return incoming
    return new_request_id()
