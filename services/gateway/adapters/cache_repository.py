"""The response cache in the gateway's database (SQLite or PostgreSQL)."""

from __future__ import annotations

import time

import msgspec
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

from services.gateway.db.models import response_cache
from services.gateway.domain.backend import Completion
from services.gateway.domain.routes import Route
from shared.contracts.gateway import FinishReason, TokenAlternative
from shared.db import Database


class _Stored(msgspec.Struct):
    text: str
    finish_reason: FinishReason
    input_tokens: int
    output_tokens: int
    logprobs: list[TokenAlternative] | None = None


class SqlResponseCache:
    def __init__(self, database: Database) -> None:
        self._database = database
        self._insert = postgresql.insert if database.dialect == "postgresql" else sqlite.insert

    async def get(self, key: str) -> Completion | None:
        query = sa.select(response_cache.c.payload).where(response_cache.c.key == key)
        async with self._database.engine.connect() as connection:
            payload = (await connection.execute(query)).scalar_one_or_none()
        if payload is None:
            return None
        stored = msgspec.json.decode(payload, type=_Stored)
        return Completion(
            text=stored.text,
            finish_reason=stored.finish_reason,
            input_tokens=stored.input_tokens,
            output_tokens=stored.output_tokens,
            logprobs=stored.logprobs,
        )

    async def put(self, key: str, route: Route, completion: Completion) -> None:
        stored = _Stored(
            text=completion.text,
            finish_reason=completion.finish_reason,
            input_tokens=completion.input_tokens,
            output_tokens=completion.output_tokens,
            logprobs=completion.logprobs,
        )
        statement = (
            self._insert(response_cache)
            .values(
                key=key,
                route=route.name,
                model=route.model,
                payload=msgspec.json.encode(stored).decode(),
                created_at=time.time(),
            )
            .on_conflict_do_nothing(index_elements=["key"])
        )
        async with self._database.engine.begin() as connection:
            await connection.execute(statement)
