"""ASGI middleware shared by every service."""

from __future__ import annotations

from litestar.datastructures import MutableScopeHeaders
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from steadfast.shared.request_context import (
    REQUEST_ID_HEADER,
    accept_request_id,
    current_request_id,
)


def request_id_middleware(app: ASGIApp) -> ASGIApp:
    """Adopt or mint the request id, expose it to logs/clients, and echo it in the response."""

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        incoming = None
        for name, value in scope.get("headers", []):
            if name == b"x-request-id":
                incoming = value.decode("latin-1")
                break
        request_id = accept_request_id(incoming)
        token = current_request_id.set(request_id)

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableScopeHeaders.from_message(message)[REQUEST_ID_HEADER] = request_id
            await send(message)

        try:
            await app(scope, receive, send_with_id)
        finally:
            current_request_id.reset(token)

    return middleware
