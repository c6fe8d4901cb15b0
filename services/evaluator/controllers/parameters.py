"""Path and query parameters the evaluator looks up in its database: text PostgreSQL can hold
(no NUL), so a stray ``%00`` is the caller's 400 naming the parameter, not a database error."""

from __future__ import annotations

from typing import Annotated

from litestar.params import Parameter

from steadfast.shared.contracts.base import STORABLE_TEXT

#: an id in the path (``/v1/evaluations/{evaluation_id}``)
StoredId = Annotated[str, Parameter(pattern=STORABLE_TEXT)]
#: an optional text filter in the query (``?model=...``)
StoredFilter = Annotated[str | None, Parameter(pattern=STORABLE_TEXT)]
