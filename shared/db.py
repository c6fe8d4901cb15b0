"""SQLAlchemy 2 async engine, session factory and Alembic migrations from one ``DATABASE_URL``.

Without a URL each service keeps an SQLite file (aiosqlite) in the data directory; a
``postgresql://`` URL selects asyncpg. Every service has its own Alembic history
(``services/<name>/migrations``, version table ``alembic_version_<name>``), so services can share
one PostgreSQL database without touching each other's tables.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.runtime.environment import EnvironmentContext
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Column, ColumnElement, MetaData, event, select, text
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)
from sqlalchemy.orm import DeclarativeBase

SERVICES_DIR = Path(__file__).resolve().parent.parent / "services"

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def new_metadata() -> MetaData:
    return MetaData(naming_convention=NAMING_CONVENTION)


class Base(DeclarativeBase):
    """Declarative base; each service subclasses it with its own ``metadata``."""

    __abstract__ = True


def resolve_database_url(url: str, service: str, data_dir: Path) -> str:
    """Normalise a configured URL to its async driver, or default to SQLite in ``data_dir``."""
    if not url:
        data_dir.mkdir(parents=True, exist_ok=True)
        return f"sqlite+aiosqlite:///{data_dir / f'{service}.sqlite3'}"
    parsed = make_url(url)
    if parsed.drivername in ("postgres", "postgresql", "postgresql+psycopg2", "postgresql+psycopg"):
        parsed = parsed.set(drivername="postgresql+asyncpg")
    elif parsed.drivername in ("sqlite", "sqlite+pysqlite"):
        parsed = parsed.set(drivername="sqlite+aiosqlite")
    return parsed.render_as_string(hide_password=False)


def is_sqlite(url: str) -> bool:
    return make_url(url).get_backend_name() == "sqlite"


def _tune_sqlite(dbapi_connection: Any, _: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


#: the longest a PostgreSQL statement may take: a connection the server dropped without a reset
#: (a failover, a network partition) would otherwise leave its caller waiting for ever
STATEMENT_TIMEOUT_S = 60.0
#: the longest connecting to PostgreSQL may take
CONNECT_TIMEOUT_S = 10.0


def create_engine(url: str, *, pool_size: int = 10) -> AsyncEngine:
    if is_sqlite(url):
        engine = create_async_engine(url, connect_args={"timeout": 30})
        event.listen(engine.sync_engine, "connect", _tune_sqlite)
        return engine
    return create_async_engine(
        url,
        pool_size=pool_size,
        max_overflow=pool_size,
        pool_pre_ping=True,
        connect_args={"command_timeout": STATEMENT_TIMEOUT_S, "timeout": CONNECT_TIMEOUT_S},
    )


#: SQLSTATEs of a lost connection: class 08 (connection exception) and 57P01-57P03 (an
#: administrator or a crash ended the connection, the server cannot take connections now)
LOST_CONNECTION_STATES = ("08", "57P01", "57P02", "57P03")


def is_connection_loss(error: BaseException) -> bool:
    """Whether ``error`` is the loss of the database connection rather than a statement's
    fault: a terminated backend (``pg_terminate_backend``), a server restarting or failing over,
    a reset socket. Follows the chain of causes; an exception group is one when all its
    exceptions are."""
    if isinstance(error, BaseExceptionGroup):
        return all(is_connection_loss(inner) for inner in error.exceptions)
    seen: set[int] = set()
    chain: list[BaseException | None] = [error]
    while chain:
        current = chain.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, DBAPIError) and current.connection_invalidated:
            return True
        if isinstance(current, ConnectionError):
            return True
        state = getattr(current, "sqlstate", None)
        if isinstance(state, str) and state.startswith(LOST_CONNECTION_STATES):
            return True
        original = getattr(current, "orig", None)
        chain += [current.__cause__, current.__context__]
        if isinstance(original, BaseException):
            chain.append(original)
    return False


def create_session_factory(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, expire_on_commit=False)


async def ping(engine: AsyncEngine) -> None:
    async with engine.connect() as connection:
        await connection.execute(text("SELECT 1"))


async def delete_in_chunks(
    engine: AsyncEngine, key: Column[Any], *conditions: ColumnElement[bool], chunk: int
) -> int:
    """Delete the rows of ``key``'s table that meet ``conditions``, ``chunk`` rows per
    transaction (a long delete would hold SQLite's one write lock), in ``key`` order so that
    each pass reads on from the last; returns how many. On PostgreSQL each chunk is locked
    first, skipping rows another transaction holds: the delete then never waits for a writer
    (no deadlock with one that updates those rows) and a row changed so that it no longer
    meets the conditions is left."""
    table = key.table
    deleted = 0
    last: Any = None
    while True:
        after = () if last is None else (key > last,)
        chosen = (
            select(key)
            .where(*conditions, *after)
            .order_by(key)
            .limit(chunk)
            .with_for_update(skip_locked=True, of=table)
        )
        async with engine.begin() as connection:
            keys = list(await connection.scalars(chosen))
            if not keys:
                return deleted
            result = await connection.execute(table.delete().where(key.in_(keys), *conditions))
        deleted += int(result.rowcount)
        last = keys[-1]


def migrations_dir(service: str) -> Path:
    return SERVICES_DIR / service / "migrations"


def alembic_config(service: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(migrations_dir(service)))
    config.attributes["service"] = service
    return config


def version_table(service: str) -> str:
    return f"alembic_version_{service}"


def run_migrations_online(context: EnvironmentContext, target_metadata: MetaData) -> None:
    """Body of every service's ``migrations/env.py``: migrate the connection handed in."""
    config = context.config
    connection: Connection = config.attributes["connection"]
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        version_table=version_table(config.attributes["service"]),
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()


async def _run_alembic(
    engine: AsyncEngine, service: str, operation: Callable[[Config, str], None], revision: str
) -> None:
    config = alembic_config(service)

    def run(connection: Connection) -> None:
        config.attributes["connection"] = connection
        operation(config, revision)

    async with engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            # replicas starting together migrate one at a time: the others then find it done
            # (two racing CREATE TABLEs of the version table failed on a unique index)
            lock = text("SELECT pg_advisory_xact_lock(:key)")
            await connection.execute(lock, {"key": migration_lock_key(service)})
        await connection.run_sync(run)


def migration_lock_key(service: str) -> int:
    """The PostgreSQL advisory lock (a signed 64-bit number) ``service``'s migrations take."""
    digest = hashlib.sha256(f"steadfast-migrations-{service}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


async def migrate(engine: AsyncEngine, service: str, revision: str = "head") -> None:
    """Upgrade ``service``'s tables to ``revision`` (idempotent)."""
    await _run_alembic(engine, service, command.upgrade, revision)


async def downgrade(engine: AsyncEngine, service: str, revision: str = "base") -> None:
    await _run_alembic(engine, service, command.downgrade, revision)


class MigrationsPending(RuntimeError):
    """The service's tables are not at the version of its code (``steadfast migrate``)."""


async def pending_migration(engine: AsyncEngine, service: str) -> str | None:
    """Why ``service``'s tables are not at the head revision of its migrations, or None."""
    head = ScriptDirectory.from_config(alembic_config(service)).get_current_head()

    def current(connection: Connection) -> str | None:
        context = MigrationContext.configure(
            connection, opts={"version_table": version_table(service)}
        )
        return context.get_current_revision()

    async with engine.connect() as connection:
        revision = await connection.run_sync(current)
    if revision == head:
        return None
    return f"{service}'s tables are at {revision or 'no revision'}, its code at {head}"


class Database:
    """A service's engine and session factory, opened at start-up and disposed at shutdown."""

    def __init__(self, service: str, url: str) -> None:
        self.service = service
        self.url = url
        self.engine = create_engine(url)
        self.sessions = create_session_factory(self.engine)

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    async def migrate(self) -> None:
        await migrate(self.engine, self.service)

    async def require_current(self) -> None:
        """Raise ``MigrationsPending`` unless the tables are at the code's version."""
        if (reason := await pending_migration(self.engine, self.service)) is not None:
            raise MigrationsPending(f"{reason}: run `steadfast migrate` first")

    async def ping(self) -> None:
        await ping(self.engine)

    @asynccontextmanager
    async def session(self) -> AsyncIterator[AsyncSession]:
        async with self.sessions() as session:
            yield session

    async def dispose(self) -> None:
        await self.engine.dispose()
