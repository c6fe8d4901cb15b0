"""Fixtures shared by every test: data directories, databases (SQLite and PostgreSQL), ports."""

from __future__ import annotations

import asyncio
import os
import random
import socket
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]


#: found before the watch below starts: finding it opens files, which the watch would see
TEMPORARY = Path(tempfile.gettempdir()).resolve()


def outside_the_checkout(path: str, repo: Path = REPO, temporary: Path = TEMPORARY) -> bool:
    """A path beside the checkout (a folder next to it): under the repository's parent
    directory but not in the repository, and not in the temporary directory. Undecidable, and so
    never flagged, when the parent is the file system's root or the temporary directory."""
    parent = repo.parent
    if parent == Path(parent.anchor) or parent == temporary:
        return False
    absolute = Path(os.path.abspath(path))
    inside = (repo, temporary, Path(sys.prefix), Path(sys.base_prefix))
    return absolute.is_relative_to(parent) and not any(absolute.is_relative_to(p) for p in inside)


#: files the test process opened beside the checkout (see ``pytest_sessionfinish``)
OUTSIDE_READS: set[str] = set()


_WATCHING = threading.local()


def _watch_opens(event: str, args: tuple[Any, ...]) -> None:
    """Audit hook: notes every file opened beside the checkout. It must not open a file itself
    (it would be called again), hence the guard."""
    if event != "open" or not args or getattr(_WATCHING, "busy", False):
        return
    if isinstance(args[0], str | bytes | os.PathLike):
        _WATCHING.busy = True
        try:
            path = os.fsdecode(args[0])
            if outside_the_checkout(path):
                OUTSIDE_READS.add(path)
        finally:
            _WATCHING.busy = False


sys.addaudithook(_watch_opens)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """The repository stands alone: a test that opened a file beside the checkout fails the run
    (a clone with nothing beside it could not run it). A pytest-xdist worker hands what it saw
    to the controller (``pytest_testnodedown``), which fails the run."""
    worker_output = getattr(session.config, "workeroutput", None)
    if worker_output is not None:
        worker_output["outside_reads"] = sorted(OUTSIDE_READS)
        return
    if OUTSIDE_READS:
        listing = "\n  ".join(sorted(OUTSIDE_READS)[:20])
        print(f"\ntests opened files outside the checkout:\n  {listing}", file=sys.stderr)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """pytest-xdist: a worker has finished; gather the files it opened beside the checkout."""
    OUTSIDE_READS.update(getattr(node, "workeroutput", {}).get("outside_reads", []))


POSTGRES_ADMIN_URL = os.environ.get(
    "STEADFAST_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test"
)


@pytest.fixture(scope="session", autouse=True)
async def _shared_http_session_closed() -> AsyncIterator[None]:
    """Async tests share one event loop and, through it, shared.http_client's pooled session;
    close it when the tests end (left to the interpreter's exit, aiohttp warns of it unclosed)."""
    yield
    from steadfast.shared.http_client import close_session

    await close_session()


def listening_port_range() -> range:
    """Ports the system never hands out to outgoing connections: below (or above) the
    ephemeral range. A port from the ephemeral range, free when checked, may be taken by one of
    the many connections the services open before the service meant for it binds."""
    try:
        text = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text()
        low, high = (int(part) for part in text.split())
    except (OSError, ValueError):
        low, high = 32768, 60999  # Linux's default
    return range(10000, low) if low > 12000 else range(high + 1, 65000)


_ports = random.Random(f"{os.getpid()}-{time.time_ns()}")


def free_port() -> int:
    return free_port_block(1)


def free_port_block(count: int) -> int:
    """A first port such that ``count`` consecutive ports are free (outside the ephemeral range:
    see :func:`listening_port_range`)."""
    candidates = listening_port_range()
    for _ in range(200):
        base = _ports.randrange(candidates.start, candidates.stop - count)
        sockets = []
        try:
            for offset in range(count):
                sock = socket.socket()
                sockets.append(sock)
                sock.bind(("127.0.0.1", base + offset))
        except OSError:
            continue
        finally:
            for sock in sockets:
                sock.close()
        return base
    raise RuntimeError("no block of free ports")


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "data"
    monkeypatch.setenv("STEADFAST_DATA_DIR", str(directory))
    return directory


#: whether PostgreSQL answered the first time it was asked (asked once per session)
_postgres_up: dict[str, bool] = {}


async def _admin_connection() -> Any:
    """A connection to the admin database, asked again for ~10 s after a failure: on a busy
    machine PostgreSQL can be slow to accept one, and a test should not fail for that."""
    import asyncpg  # type: ignore[import-untyped]

    for attempt in range(1, 6):
        try:
            return await asyncpg.connect(_asyncpg_dsn(POSTGRES_ADMIN_URL), timeout=10)
        except (OSError, asyncpg.PostgresError):
            if attempt == 5:
                raise
            await asyncio.sleep(attempt)
    raise AssertionError("unreachable: the last attempt returns or raises")


async def _postgres_available() -> bool:
    import asyncpg

    if "up" not in _postgres_up:
        try:
            connection = await _admin_connection()
        except (OSError, asyncpg.PostgresError):
            _postgres_up["up"] = False
        else:
            await connection.close()
            _postgres_up["up"] = True
    return _postgres_up["up"]


def _asyncpg_dsn(url: str) -> str:
    return url.replace("postgresql+asyncpg://", "postgresql://")


@asynccontextmanager
async def postgres_database() -> AsyncIterator[str]:
    """A fresh, empty PostgreSQL database, dropped afterwards."""
    if not await _postgres_available():
        if os.environ.get("STEADFAST_REQUIRE_POSTGRES"):
            pytest.fail(f"PostgreSQL required but not reachable at {POSTGRES_ADMIN_URL}")
        pytest.skip("PostgreSQL not reachable")
    name = f"steadfast_test_{uuid.uuid4().hex[:12]}"
    admin = await _admin_connection()
    await admin.execute(f'CREATE DATABASE "{name}"')
    await admin.close()
    base, _, _ = POSTGRES_ADMIN_URL.rpartition("/")
    try:
        yield f"{base}/{name}".replace("postgresql://", "postgresql+asyncpg://")
    finally:
        admin = await _admin_connection()
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


@pytest.fixture
async def postgres_url() -> AsyncIterator[str]:
    async with postgres_database() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgres"])
async def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    """Every persistence test runs twice: on SQLite and on a real PostgreSQL."""
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'test.sqlite3'}"
        return
    async with postgres_database() as url:
        yield url


@pytest.fixture
def port_block() -> Iterator[int]:
    yield free_port_block(5)
