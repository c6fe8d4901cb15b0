"""The ``steadfast`` command's entry point: the command line needs the services' packages (the
``server`` extra), which a client-only install lacks; say so instead of a traceback."""

from __future__ import annotations

import sys

#: top-level modules of the ``server`` extra's packages
SERVER_MODULES = frozenset(
    {"litestar", "sqlalchemy", "alembic", "asyncpg", "aiosqlite", "prometheus_client", "uvicorn"}
    | {"numpy", "aiolimiter"}
)


def main() -> int:
    try:
        from steadfast.cli import main as command_line
    except ModuleNotFoundError as missing:
        if (missing.name or "").partition(".")[0] not in SERVER_MODULES:
            raise
        print(
            f"steadfast: the command line needs the services' packages ({missing.name} is not "
            "installed): pip install 'steadfast-reliability[server]'. The Python client "
            "(steadfast.client) works without them.",
            file=sys.stderr,
        )
        return 2
    return command_line()


if __name__ == "__main__":
    sys.exit(main())
