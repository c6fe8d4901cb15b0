"""``steadfast keys create|list|revoke``: the evaluator's API keys, in its database
(``DATABASE_URL`` / ``STEADFAST_DATA_DIR``, as the evaluator reads them)."""

from __future__ import annotations

import argparse
import asyncio
import datetime
from collections.abc import Awaitable, Callable

from steadfast.services.evaluator.settings import EvaluatorSettings
from steadfast.shared.api_keys import DEFAULT_SCOPES, SCOPES, ApiKeyStore
from steadfast.shared.db import Database, resolve_database_url
from steadfast.shared.settings import load_settings
from steadfast.shared.tenancy import DEFAULT_TENANT, valid_tenant

KeysCommand = Callable[[ApiKeyStore, argparse.Namespace], Awaitable[int]]


async def _with_store(command: KeysCommand, args: argparse.Namespace) -> int:
    settings = load_settings("evaluator", EvaluatorSettings)
    url = resolve_database_url(settings.database_url, "evaluator", settings.resolved_data_dir())
    database = Database("evaluator", url)
    try:
        await database.migrate()
        return await command(ApiKeyStore(database.engine), args)
    finally:
        await database.dispose()


def _when(epoch: float | None) -> str:
    if epoch is None:
        return "-"
    return datetime.datetime.fromtimestamp(epoch, datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")


async def _create(store: ApiKeyStore, args: argparse.Namespace) -> int:
    record, key = await store.create(args.name, args.scope or DEFAULT_SCOPES, args.tenant)
    scopes = ", ".join(record.scopes)
    print(
        f"created {record.id} ({record.name}; scopes: {scopes}; tenant: {record.tenant}); "
        "the key, shown this once:"
    )
    print(key)
    return 0


async def _list(store: ApiKeyStore, _: argparse.Namespace) -> int:
    print(f"{'id':<22} {'name':<24} {'scopes':<26} {'tenant':<16} {'created':<21} revoked")
    for record in await store.list():
        print(
            f"{record.id:<22} {record.name:<24} {','.join(record.scopes):<26} "
            f"{record.tenant:<16} {_when(record.created_at):<21} {_when(record.revoked_at)}"
        )
    return 0


async def _revoke(store: ApiKeyStore, args: argparse.Namespace) -> int:
    if await store.revoke(args.id):
        print(f"revoked {args.id}")
        return 0
    print(f"no active key {args.id}")
    return 1


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    keys = commands.add_parser("keys", help="the evaluator's API keys (stored hashed)")
    actions = keys.add_subparsers(dest="keys_command", required=True)
    create = actions.add_parser("create", help="make a key and print it once")
    create.add_argument("name", help="who or what the key is for")
    create.add_argument(
        "--scope",
        action="append",
        choices=SCOPES,
        help="what it may do (repeat; default: evaluate, read, proxy; admin: everything, "
        "and the keys API)",
    )
    create.add_argument(
        "--tenant",
        type=_tenant,
        default=DEFAULT_TENANT,
        help="whose resources the key makes and sees (a short slug: a-z, 0-9, - and _; "
        f"default: {DEFAULT_TENANT}); an admin key sees every tenant's",
    )
    create.set_defaults(keys_handler=_create)
    listing = actions.add_parser("list", help="every key: id, name, tenant, created, revoked")
    listing.set_defaults(keys_handler=_list)
    revoke = actions.add_parser("revoke", help="stop a key from being accepted")
    revoke.add_argument("id")
    revoke.set_defaults(keys_handler=_revoke)
    keys.set_defaults(handler=command_keys)


def _tenant(name: str) -> str:
    if not valid_tenant(name):
        raise argparse.ArgumentTypeError(
            f"{name!r} is not a tenant name: 1-63 of a-z, 0-9, - and _, starting with a letter "
            "or digit"
        )
    return name


def command_keys(args: argparse.Namespace) -> int:
    return asyncio.run(_with_store(args.keys_handler, args))
