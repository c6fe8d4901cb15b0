"""``steadfast keys create|list|revoke``: the evaluator's API keys, in its database
(``DATABASE_URL`` / ``STEADFAST_DATA_DIR``, as the evaluator reads them)."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import datetime
from collections.abc import Awaitable, Callable
from typing import Any

from steadfast.services.evaluator.settings import EvaluatorSettings
from steadfast.shared.api_keys import DEFAULT_SCOPES, SCOPES, ApiKeyStore
from steadfast.shared.db import Database, resolve_database_url
from steadfast.shared.key_limit_values import KeyLimits
from steadfast.shared.key_limits import limits_text
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
    limits = KeyLimits(
        rpm=args.rpm,
        max_concurrent_jobs=args.max_jobs,
        token_budget=args.token_budget,
        budget_period=args.budget_period,
    )
    record, key = await store.create(args.name, args.scope or DEFAULT_SCOPES, args.tenant, limits)
    scopes = ", ".join(record.scopes)
    print(
        f"created {record.id} ({record.name}; scopes: {scopes}; tenant: {record.tenant}; "
        f"limits: {limits_text(limits)}); "
        "the key, shown this once:"
    )
    print(key)
    return 0


async def _list(store: ApiKeyStore, _: argparse.Namespace) -> int:
    header = f"{'id':<22} {'name':<24} {'scopes':<26} {'tenant':<16} {'created':<21}"
    print(f"{header} {'revoked':<21} limits")
    for record in await store.list():
        print(
            f"{record.id:<22} {record.name:<24} {','.join(record.scopes):<26} "
            f"{record.tenant:<16} {_when(record.created_at):<21} {_when(record.revoked_at):<21} "
            f"{limits_text(record.limits)}"
        )
    return 0


async def _revoke(store: ApiKeyStore, args: argparse.Namespace) -> int:
    if await store.revoke(args.id):
        print(f"revoked {args.id}")
        return 0
    print(f"no active key {args.id}")
    return 1


async def _limit(store: ApiKeyStore, args: argparse.Namespace) -> int:
    record = await store.get(args.id)
    if record is None or record.revoked_at is not None:
        print(f"no active key {args.id}")
        return 1
    changes = {
        name: value
        for name, value in (
            ("rpm", args.rpm),
            ("max_concurrent_jobs", args.max_jobs),
            ("token_budget", args.token_budget),
            ("budget_period", args.budget_period),
        )
        if value is not _KEEP
    }
    limits = dataclasses.replace(record.limits, **changes)
    await store.set_limits(args.id, limits)
    print(f"{args.id} limits: {limits_text(limits)}")
    return 0


def _at_least(low: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        value = int(text)
        if value < low:
            raise argparse.ArgumentTypeError(f"at least {low}")
        return value

    return parse


_positive = _at_least(1)
#: an option ``keys limit`` was not given: the limit stays
_KEEP: Any = object()


def _or_none(parse: Callable[[str], int]) -> Callable[[str], int | None]:
    """``none`` removes the limit (``keys limit``)."""

    def parsed(text: str) -> int | None:
        return None if text.lower() == "none" else parse(text)

    return parsed


def _limit_options(parser: argparse.ArgumentParser, change: bool) -> None:
    """The limits' options: of ``create``, or of ``limit`` (``none`` removes one, left out: it
    stays)."""

    def kind(parse: Callable[[str], int]) -> Callable[[str], int | None]:
        return _or_none(parse) if change else parse

    keep: dict[str, Any] = {"default": _KEEP} if change else {}
    none = " (none: no limit)" if change else ""
    parser.add_argument(
        "--rpm",
        type=kind(_positive),
        help=f"requests per minute, on every API the key reaches{none}",
        **keep,
    )
    parser.add_argument(
        "--max-jobs",
        type=kind(_at_least(0)),
        help=f"evaluations and position-bias jobs queued or running at once{none}",
        **keep,
    )
    parser.add_argument(
        "--token-budget",
        type=kind(_positive),
        help=f"tokens (input and output) a --budget-period through the gateway{none}",
        **keep,
    )
    parser.add_argument(
        "--budget-period",
        choices=("day", "month"),
        default=_KEEP if change else "month",
        help="the budget's period, UTC (default: month)",
    )


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
    _limit_options(create, change=False)
    create.set_defaults(keys_handler=_create)
    listing = actions.add_parser("list", help="every key: id, name, tenant, created, revoked")
    listing.set_defaults(keys_handler=_list)
    revoke = actions.add_parser("revoke", help="stop a key from being accepted")
    revoke.add_argument("id")
    revoke.set_defaults(keys_handler=_revoke)
    limit = actions.add_parser(
        "limit", help="change a key's limits (none removes one; the gateway within its key cache)"
    )
    limit.add_argument("id")
    _limit_options(limit, change=True)
    limit.set_defaults(keys_handler=_limit)
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
