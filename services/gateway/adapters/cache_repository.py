"""The response cache in the gateway's database (SQLite or PostgreSQL).

Lookups and stores are coalesced: the requests that arrive while one query runs share the next
(one ``IN`` lookup, one multi-row insert), so the cache costs a few round-trips per batch of
concurrent requests rather than a transaction each. A store is still awaited before the answer
goes back, so an answer that was returned is in the database.

With a maximum age, an answer stored longer ago is not served (the model is asked again and the
new answer replaces it) and ``purge_older_than`` deletes such rows.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Sequence

import msgspec
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

from steadfast.services.gateway.db.models import response_cache
from steadfast.services.gateway.domain.backend import Completion
from steadfast.services.gateway.domain.routes import Route
from steadfast.shared.batching import Coalescer
from steadfast.shared.contracts.gateway import FinishReason, TokenAlternative
from steadfast.shared.db import Database, delete_in_chunks


class _Stored(msgspec.Struct):
    text: str
    finish_reason: FinishReason
    input_tokens: int
    output_tokens: int
    logprobs: list[TokenAlternative] | None = None
    samples: tuple[str, ...] | None = None


#: answers stored by this process that lookups also find in memory
RECENT_STORES = 4096

_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder(_Stored).decode


class SqlResponseCache:
    """The response cache in the gateway's database: one completion per request key, kept
    for ``max_age_s`` (unset: the first answer stored stays)."""

    def __init__(
        self,
        database: Database,
        *,
        max_age_s: float | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._database = database
        self._max_age_s = max_age_s
        self._clock = clock
        insert = postgresql.insert if database.dialect == "postgresql" else sqlite.insert
        statement = insert(response_cache)
        if max_age_s is None:  # the first answer stored stays
            self._insert = statement.on_conflict_do_nothing(index_elements=["key"])
        else:  # ... until it expires: then the new answer to the same request replaces it
            self._insert = statement.on_conflict_do_update(
                index_elements=["key"],
                set_={
                    column: statement.excluded[column]
                    for column in ("route", "model", "payload", "created_at")
                },
                where=response_cache.c.created_at < statement.excluded.created_at - max_age_s,
            )
        self._lookups: Coalescer[str, Completion | None] = Coalescer(self._get_many)
        self._stores: Coalescer[dict[str, object], None] = Coalescer(self._put_many)
        #: stored at (epoch seconds) and answer, by key
        self._recent: OrderedDict[str, tuple[float, Completion]] = OrderedDict()

    async def get(self, key: str) -> Completion | None:
        recent = self._recent_answer(key)
        if recent is not None:
            return recent
        found = await self._lookups.submit(key)
        return found if found is not None else self._recent_answer(key)

    async def purge_older_than(self, cutoff: float) -> int:
        """Delete the answers stored before ``cutoff`` (epoch seconds); returns how many."""
        old = response_cache.c.created_at < cutoff
        return await delete_in_chunks(self._database.engine, response_cache.c.key, old, chunk=5000)

    def _fresh_since(self) -> float | None:
        return None if self._max_age_s is None else self._clock() - self._max_age_s

    def _recent_answer(self, key: str) -> Completion | None:
        recent = self._recent.get(key)
        if recent is None:
            return None
        stored_at, completion = recent
        since = self._fresh_since()
        return completion if since is None or stored_at >= since else None

    async def put(self, key: str, route: Route, completion: Completion) -> None:
        stored = _Stored(
            text=completion.text,
            finish_reason=completion.finish_reason,
            input_tokens=completion.input_tokens,
            output_tokens=completion.output_tokens,
            logprobs=completion.logprobs,
            samples=completion.samples,
        )
        stored_at = self._clock()
        row = {
            "key": key,
            "route": route.name,
            "model": route.model,
            "payload": _encode(stored).decode(),
            "created_at": stored_at,
        }
        # remembered before the write: a lookup racing it must see it
        self._remember(key, stored_at, completion)
        await self._stores.submit(row)

    def _remember(self, key: str, stored_at: float, completion: Completion) -> None:
        self._recent[key] = (stored_at, completion)
        self._recent.move_to_end(key)
        while len(self._recent) > RECENT_STORES:
            self._recent.popitem(last=False)

    async def close(self) -> None:
        """Finish the stores in flight (at shutdown)."""
        await self._stores.drain()

    async def _get_many(self, keys: list[str]) -> list[Completion | None]:
        query = sa.select(response_cache.c.key, response_cache.c.payload).where(
            response_cache.c.key.in_(set(keys))
        )
        since = self._fresh_since()
        if since is not None:
            query = query.where(response_cache.c.created_at >= since)
        async with self._database.engine.connect() as connection:
            found = {key: value for key, value in (await connection.execute(query)).all()}
        return [_completion(found[key]) if key in found else None for key in keys]

    async def _put_many(self, rows: list[dict[str, object]]) -> Sequence[None]:
        # one row per key: an upsert may not touch a row twice in one statement (PostgreSQL)
        latest = {row["key"]: row for row in rows}
        async with self._database.engine.begin() as connection:
            await connection.execute(self._insert, list(latest.values()))
        return [None] * len(rows)


def _completion(payload: str) -> Completion:
    stored = _decode(payload)
    return Completion(
        text=stored.text,
        finish_reason=stored.finish_reason,
        input_tokens=stored.input_tokens,
        output_tokens=stored.output_tokens,
        logprobs=stored.logprobs,
        samples=stored.samples,
    )
