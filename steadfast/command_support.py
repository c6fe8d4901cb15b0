"""What the commands that call the evaluator share: finding it (or starting the services for the
command), a client closed when the command ends, running the command, its connection options,
and reading and writing its files."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TypeVar

import msgspec

from steadfast.client import AsyncClient
from steadfast.shared.http_client import ServiceCallError, close_session
from steadfast.shared.settings import ServiceSettings, load_settings
from steadfast.supervisor import Supervisor, exit_on_sigterm, readiness, service_ports

T = TypeVar("T")


def environment_settings() -> ServiceSettings:
    """The settings every service shares, read from the environment as the services read them
    (``STEADFAST_EVALUATOR_URL``, ``STEADFAST_DATA_DIR``, ...)."""
    return load_settings("cli", ServiceSettings)


def data_dir() -> Path:
    """Where the services keep their files: ``STEADFAST_DATA_DIR`` or the per-user default."""
    return environment_settings().resolved_data_dir()


def named_evaluator(args: argparse.Namespace) -> bool:
    """Whether the command was told which evaluator to use (``--url`` or the environment)."""
    return bool(args.url or os.environ.get("STEADFAST_EVALUATOR_URL"))


def evaluator_address(args: argparse.Namespace) -> str:
    """``--base-port``, else ``--url``, else ``STEADFAST_EVALUATOR_URL`` or the default port."""
    if args.base_port is not None:
        return f"http://127.0.0.1:{service_ports(args.base_port)['evaluator']}"
    return str(args.url or environment_settings().service_url("evaluator"))


#: services a command starts for itself (the demo, a study) run the local models on this
#: machine: one paraphrase set at a time, and no answer until every set is made, so the sets
#: (which have a time budget) have the model to themselves instead of queueing behind long
#: maths answers; then four answers at a time, one for each of the model's slots. The model gets
#: every core, as little else runs. (Demo, 2026-12-05: 441 s with answers after the sets, 414 to
#: 444 s with two answers beside them; a set made beside answers got 9 candidates in 60 s once.)
LOCAL_RUN_ENVIRONMENT = {
    "STEADFAST_EVALUATOR_PARAPHRASE_LANES": "1",
    "STEADFAST_EVALUATOR_ANSWER_LANES": "1",
    "STEADFAST_EVALUATOR_ANSWER_BATCH": "4",
    "STEADFAST_EVALUATOR_ANSWERS_AFTER_PARAPHRASES": "true",
    "STEADFAST_GATEWAY_LOCAL_THREADS": str(os.cpu_count() or 1),
}


@contextlib.asynccontextmanager
async def evaluator_url(
    args: argparse.Namespace, env: dict[str, str] | None = None
) -> AsyncIterator[str]:
    """The URL of a running evaluator, or of services started for this command (and stopped
    after it)."""
    ports = service_ports(args.base_port)
    url = evaluator_address(args)
    if not getattr(args, "start", False) and readiness(url, timeout_s=1.0)[0]:
        yield url
        return
    if not getattr(args, "start", False) and named_evaluator(args):
        # an evaluator asked for by name is the one meant: starting others would go elsewhere
        raise SystemExit(
            f"error: cannot reach the evaluator at {url} (is it running? does the URL start "
            "with http://?)"
        )
    args.started_services = True
    log_dir = data_dir() / "logs"
    print(f"starting the services (logs in {log_dir}) ...", flush=True)
    supervisor = Supervisor(ports=ports, log_dir=log_dir, env=env)
    with exit_on_sigterm():
        try:
            supervisor.start()
            ready = await asyncio.to_thread(supervisor.wait_ready, args.start_timeout)
            if not all(ready.values()):
                failing = ", ".join(name for name, ok in ready.items() if not ok)
                raise SystemExit(f"services not ready after {args.start_timeout:.0f} s: {failing}")
            yield f"http://127.0.0.1:{ports['evaluator']}"
        finally:
            print("stopping the services ...", flush=True)
            await asyncio.to_thread(supervisor.stop)


def dataset_reference(name: str | None) -> str | None:
    """A stored dataset's id, or a built-in sample's given by its short name (``mmlu``)."""
    if name and not name.startswith("sample-") and "-" not in name:
        return f"sample-{name}"
    return name


def read_jsonl(path: Path, kind: type[T]) -> list[T]:
    """One JSON object of ``kind`` per line; a bad line stops the command, naming it."""
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    items = []
    for number, line in enumerate(lines, 1):
        try:
            items.append(msgspec.json.decode(line, type=kind))
        except msgspec.DecodeError as error:
            raise SystemExit(f"{path}:{number}: {error}") from error
    return items


def save(path: Path, content: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    return path.resolve()


_CLIENTS: list[AsyncClient] = []


def client_for(url: str, args: argparse.Namespace) -> AsyncClient:
    """A client of the evaluator at ``url`` with the command's key, closed by :func:`run`."""
    client = AsyncClient(url, api_key=args.api_key)
    _CLIENTS.append(client)
    return client


def run(coroutine_function: object, args: argparse.Namespace) -> int:
    async def main() -> int:
        try:
            return await coroutine_function(args)  # type: ignore[operator]
        except ServiceCallError as error:
            detail = error.problem.detail or error.problem.title
            if error.unreachable:
                print(
                    f"error: cannot reach the {error.service} ({detail}); is `steadfast up` "
                    "running, and does --url start with http://?",
                    file=sys.stderr,
                )
            else:
                print(f"error: {error.service} answered {error.status}: {detail}", file=sys.stderr)
            return 1
        except (OSError, RuntimeError) as error:  # a file, a port, a service that would not start
            print(f"error: {error}", file=sys.stderr)
            return 1
        finally:
            while _CLIENTS:
                await _CLIENTS.pop().close()
            await close_session()

    try:
        return asyncio.run(main())
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130


def add_connection(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--url", default=None, help="evaluator URL (default: STEADFAST_EVALUATOR_URL)")
    sub.add_argument("--base-port", type=int, default=None, help="first port of the services")
    sub.add_argument("--start-timeout", type=float, default=180.0)
    sub.add_argument(
        "--api-key",
        default=os.environ.get("STEADFAST_API_KEY"),
        help="key of an evaluator that asks for one (default: STEADFAST_API_KEY)",
    )
