"""``steadfast migrate``: upgrade the tables of the services that have a database (evaluator,
gateway), or wait until another process has (a Kubernetes init container).

Where a job runs this before the services roll out, the services are started with
``STEADFAST_MIGRATE_ON_START=false`` and refuse to start on tables of another version.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time

from sqlalchemy.exc import DBAPIError

from steadfast.shared.db import Database, pending_migration, resolve_database_url
from steadfast.shared.settings import ServiceSettings, load_settings

SERVICES_WITH_DATABASE = ("evaluator", "gateway")
#: how often a waiting command tries again (the database starting, another process migrating)
POLL_S = 2.0


def _database(service: str) -> Database:
    settings = load_settings(service, ServiceSettings)
    url = resolve_database_url(settings.database_url, service, settings.resolved_data_dir())
    return Database(service, url)


async def _migrate_or_check(service: str, check_only: bool) -> str | None:
    """None once ``service``'s tables are at its code's version (migrated unless
    ``check_only``), else why not."""
    database = _database(service)
    try:
        if not check_only:
            await database.migrate()
        return await pending_migration(database.engine, service)
    finally:
        await database.dispose()


async def run(services: list[str], *, check_only: bool, wait_s: float) -> int:
    """Migrate (or check) each service, trying again for ``wait_s`` seconds while its
    database cannot be reached or (checking) its tables are behind."""
    deadline = time.monotonic() + wait_s
    for service in services:
        while True:
            try:
                reason = await _migrate_or_check(service, check_only)
            except (OSError, DBAPIError) as error:  # not up yet, starting, out of connections
                reason = f"{service}'s database cannot be reached: {error}"
            if reason is None:
                print(f"{service}: tables at the code's version")
                break
            if time.monotonic() >= deadline:
                print(f"steadfast migrate: {reason}", file=sys.stderr)
                return 1
            await asyncio.sleep(POLL_S)
    return 0


def command_migrate(args: argparse.Namespace) -> int:
    services = args.service or list(SERVICES_WITH_DATABASE)
    return asyncio.run(run(services, check_only=args.check, wait_s=args.wait))


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    migrate = commands.add_parser(
        "migrate",
        help="upgrade the evaluator's and the gateway's tables (or --check that they are)",
    )
    migrate.add_argument(
        "--service", action="append", choices=SERVICES_WITH_DATABASE, help="only this service"
    )
    migrate.add_argument(
        "--check",
        action="store_true",
        help="change nothing: exit 0 when the tables are at the code's version, else 1",
    )
    migrate.add_argument(
        "--wait",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="try again for this long while the database is unreachable or (--check) behind",
    )
    migrate.set_defaults(handler=command_migrate)
