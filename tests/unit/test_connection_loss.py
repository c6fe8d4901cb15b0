"""Telling the loss of a database connection from a statement's own fault."""

from __future__ import annotations

import sqlite3

import pytest
import sqlalchemy as sa
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError

from steadfast.shared import db
from steadfast.shared.db import is_connection_loss


class PostgresError(Exception):
    """Shaped like asyncpg's errors: a SQLSTATE."""

    def __init__(self, sqlstate: str) -> None:
        super().__init__(sqlstate)
        self.sqlstate = sqlstate


def wrapped(orig: BaseException, *, invalidated: bool = False) -> DBAPIError:
    return DBAPIError("SELECT 1", None, orig, connection_invalidated=invalidated)  # type: ignore[arg-type]


def raised_from(error: BaseException, cause: BaseException) -> BaseException:
    try:
        raise error from cause
    except BaseException as raised:
        return raised


def test_a_lost_connection_is_one_however_it_is_reported() -> None:
    assert is_connection_loss(ConnectionResetError("reset by peer"))
    assert is_connection_loss(wrapped(Exception("closed"), invalidated=True))
    assert is_connection_loss(PostgresError("57P01"))  # terminated by an administrator
    assert is_connection_loss(PostgresError("08003"))  # the connection does not exist
    assert is_connection_loss(wrapped(PostgresError("57P01")))  # the driver's error inside
    assert is_connection_loss(raised_from(RuntimeError("run ended"), ConnectionResetError()))
    group = ExceptionGroup("lanes", [ConnectionResetError(), wrapped(PostgresError("08006"))])
    assert is_connection_loss(group)


def test_a_statement_s_own_fault_is_none() -> None:
    assert not is_connection_loss(ValueError("bad data"))
    assert not is_connection_loss(PostgresError("23505"))  # a unique violation
    assert not is_connection_loss(IntegrityError("INSERT", None, sqlite3.IntegrityError()))
    assert not is_connection_loss(OperationalError("x", None, sqlite3.OperationalError("locked")))
    # one lane's bug among lost connections is still a bug
    assert not is_connection_loss(ExceptionGroup("lanes", [ConnectionResetError(), KeyError()]))


async def test_a_postgresql_statement_that_never_answers_is_given_up(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A statement whose answer never comes (the server gone without a reset) ends in a
    TimeoutError instead of holding its caller for ever; the engine works on after it."""
    monkeypatch.setattr(db, "STATEMENT_TIMEOUT_S", 0.5)
    engine = db.create_engine(postgres_url)
    try:
        with pytest.raises(TimeoutError):
            async with engine.connect() as connection:
                await connection.execute(sa.text("SELECT pg_sleep(5)"))
        async with engine.connect() as connection:
            assert (await connection.execute(sa.text("SELECT 1"))).scalar() == 1
    finally:
        await engine.dispose()
