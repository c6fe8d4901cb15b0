"""Request bodies checked strictly against the handler's contract.

Litestar converts a handler's arguments leniently (``strict=False``), as query parameters need:
there, ``"2"`` may well be the number 2. A JSON body says what it means, and the contracts
promise their types: ``{"k": "2"}`` is a 400 naming ``k``, not k = 2."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request
from litestar.exceptions import ValidationException


def _contract(request: Request[Any, Any, Any]) -> type[msgspec.Struct] | None:
    """The wire contract the handler's ``data`` is, when it is one."""
    data = request.route_handler.parsed_fn_signature.parameters.get("data")
    annotation = data.annotation if data is not None else None
    if isinstance(annotation, type) and issubclass(annotation, msgspec.Struct):
        return annotation
    return None


class StrictBodyRequest(Request[Any, Any, Any]):
    """A request whose JSON body is converted strictly to the handler's contract."""

    async def json(self) -> Any:
        # read as Litestar reads it: a body that is not JSON (or holds a number no float holds)
        # is answered as before, naming where
        raw = await super().json()
        contract = _contract(self)
        if contract is None or isinstance(raw, contract):
            return raw
        try:
            value = msgspec.convert(raw, type=contract, strict=True)
        except msgspec.ValidationError as error:
            # answered as Litestar's own validation failures are, in every service's shape
            extra = [{"message": str(error), "key": "data", "source": "body"}]
            raise ValidationException(detail="Validation failed", extra=extra) from error
        self._json = self._connection_state.json = value
        return value
