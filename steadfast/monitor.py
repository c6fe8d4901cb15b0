"""``steadfast monitor create|list|show|series|pause|resume|run|delete``: monitors of a running
evaluator (``steadfast up``, or ``--url``): an evaluation repeated every interval."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO, get_args

from steadfast.client import AsyncClient
from steadfast.command_support import (
    add_connection,
    client_for,
    dataset_reference,
    evaluator_address,
    read_jsonl,
    run,
)
from steadfast.shared.contracts.evaluator import EvaluationCreate, EvaluationItem
from steadfast.shared.contracts.monitors import (
    Monitor,
    MonitorCreate,
    MonitorMetric,
    MonitorSeries,
    MonitorUpdate,
)
from steadfast.shared.contracts.position import PositionBiasEvaluate, PositionItem
from steadfast.shared.contracts.verify import VerifyOptions, VerifyStages

MONITOR_METRICS = get_args(MonitorMetric)


def _client(args: argparse.Namespace) -> AsyncClient:
    return client_for(evaluator_address(args), args)


def monitor_request(args: argparse.Namespace) -> MonitorCreate:
    """The monitor the arguments describe: items from a JSONL FILE or a stored dataset."""
    if bool(args.file) == bool(args.dataset):
        raise SystemExit("give a FILE or --dataset NAME")
    path = Path(args.file) if args.file else None
    if args.kind == "position-bias":
        position = PositionBiasEvaluate(
            models=args.model,
            items=read_jsonl(path, PositionItem) if path else None,
            dataset_id=dataset_reference(args.dataset),
            limit=args.limit,
            generator=args.generator,
        )
        return MonitorCreate(
            name=args.name, kind=args.kind, interval_s=args.interval, position_bias=position
        )
    evaluation = EvaluationCreate(
        models=args.model,
        items=read_jsonl(path, EvaluationItem) if path else None,
        dataset_id=dataset_reference(args.dataset),
        limit=args.limit,
        task=args.task,
        k=args.k,
        generator=args.generator,
        verify=VerifyOptions(
            stages=VerifyStages(lexical=not args.no_lexical, semantic=args.semantic)
        ),
    )
    return MonitorCreate(
        name=args.name, kind=args.kind, interval_s=args.interval, evaluation=evaluation
    )


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def print_monitor(monitor: Monitor, out: TextIO = sys.stdout) -> None:
    state = "paused" if monitor.paused else f"next run {monitor.next_run_at}"
    print(
        f"{monitor.name} ({monitor.id}): {monitor.kind}, every {monitor.interval_s:g} s, {state}",
        file=out,
    )
    print(f"models: {', '.join(monitor.models)}; runs: {monitor.runs}", file=out)
    last = monitor.last_run
    if last is not None:
        error = f" — {last.error}" if last.error else ""
        print(
            f"last run: {last.status} (started {last.started_at}, job {last.job_id}){error}",
            file=out,
        )
    if monitor.last_success_at:
        print(f"last success: {monitor.last_success_at}", file=out)
    for model, values in monitor.last_values.items():
        shown = ", ".join(f"{metric} {_cell(v.value)}" for metric, v in values.items())
        print(f"  {model}: {shown}", file=out)


def print_series(series: MonitorSeries, out: TextIO = sys.stdout) -> None:
    print(f"{series.metric} of {series.model}, one run a line:", file=out)
    print(f"{'finished':<34} {'value':>7} {'95% interval':>17} {'n':>6}", file=out)
    for point in series.points:
        interval = (
            f"[{_cell(point.ci_low)}, {_cell(point.ci_high)}]"
            if point.ci_low is not None and point.ci_high is not None
            else "-"
        )
        print(f"{point.at:<34} {_cell(point.value):>7} {interval:>17} {point.n:>6}", file=out)


async def _resolve(client: AsyncClient, key: str) -> str:
    """A monitor's id from its id or its name."""
    for monitor in (await client.monitors()).monitors:
        if key in (monitor.id, monitor.name):
            return monitor.id
    raise SystemExit(f"no monitor {key!r}")


async def _create(args: argparse.Namespace) -> int:
    monitor = await _client(args).create_monitor(monitor_request(args))
    print(f"created monitor {monitor.name} ({monitor.id}); its first run starts now")
    return 0


async def _list(args: argparse.Namespace) -> int:
    page = await _client(args).monitors()
    print(f"{'name':<24} {'kind':<14} {'every':>8} {'runs':>5} {'last run':<10} models")
    for m in page.monitors:
        last = "paused" if m.paused else (m.last_run.status if m.last_run else "-")
        print(
            f"{m.name:<24} {m.kind:<14} {m.interval_s:>7g}s {m.runs:>5} {last:<10} "
            f"{', '.join(m.models)}"
        )
    return 0


async def _show(args: argparse.Namespace) -> int:
    client = _client(args)
    print_monitor(await client.monitor(await _resolve(client, args.monitor)))
    return 0


async def _series(args: argparse.Namespace) -> int:
    client = _client(args)
    monitor_id = await _resolve(client, args.monitor)
    print_series(await client.monitor_series(monitor_id, args.model, args.metric))
    return 0


async def _pause(args: argparse.Namespace) -> int:
    client = _client(args)
    change = MonitorUpdate(paused=args.monitor_command == "pause")
    print_monitor(await client.update_monitor(await _resolve(client, args.monitor), change))
    return 0


async def _run_now(args: argparse.Namespace) -> int:
    client = _client(args)
    accepted = await client.run_monitor(await _resolve(client, args.monitor))
    print(f"run of {accepted.monitor_id} due at {accepted.due_at}")
    return 0


async def _delete(args: argparse.Namespace) -> int:
    client = _client(args)
    monitor_id = await _resolve(client, args.monitor)
    await client.delete_monitor(monitor_id)
    print(f"deleted {monitor_id}")
    return 0


def _add_create(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    create = actions.add_parser("create", help="a monitor; its first run starts at once")
    create.add_argument("name")
    create.add_argument("file", nargs="?", help="JSONL of items")
    create.add_argument("--dataset", help="a stored dataset id or a sample name")
    create.add_argument("--limit", type=int, default=None, help="only the first N items")
    create.add_argument("--model", action="append", required=True, help="gateway route; repeat")
    create.add_argument("--interval", type=float, required=True, help="seconds between runs")
    create.add_argument("--kind", choices=["consistency", "position-bias"], default="consistency")
    create.add_argument("--k", type=int, default=5, help="paraphrases per question")
    create.add_argument("--task", choices=["factual", "math", "choice"], default="factual")
    create.add_argument("--generator", default="local")
    create.add_argument("--semantic", choices=["auto", "embedding", "nli", "off"], default="auto")
    create.add_argument("--no-lexical", action="store_true", help="skip the lexical-overlap stage")
    create.set_defaults(monitor_handler=_create)


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    monitor = commands.add_parser("monitor", help="monitors: an evaluation repeated every interval")
    actions = monitor.add_subparsers(dest="monitor_command", required=True)
    _add_create(actions)
    actions.add_parser("list", help="every monitor").set_defaults(monitor_handler=_list)
    for name, handler, text in (
        ("show", _show, "a monitor, its last run and values"),
        ("pause", _pause, "stop a monitor's runs"),
        ("resume", _pause, "start a monitor's runs again (one at once)"),
        ("run", _run_now, "run a monitor now"),
        ("delete", _delete, "delete a monitor and its runs"),
    ):
        action = actions.add_parser(name, help=text)
        action.add_argument("monitor", help="id or name")
        action.set_defaults(monitor_handler=handler)
    series = actions.add_parser("series", help="one model's metric over every run")
    series.add_argument("monitor", help="id or name")
    series.add_argument("--model", required=True)
    series.add_argument("--metric", choices=MONITOR_METRICS, default="a_strict")
    series.set_defaults(monitor_handler=_series)
    for action in actions.choices.values():
        add_connection(action)
    monitor.set_defaults(handler=command_monitor)


def command_monitor(args: argparse.Namespace) -> int:
    return run(args.monitor_handler, args)
