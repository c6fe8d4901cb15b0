"""``steadfast position-bias``: docs/method.md §2's option-order protocol on a file or a stored
dataset, through a running evaluator (or services started for the command)."""

from __future__ import annotations

import argparse
import asyncio
import sys
import uuid
from pathlib import Path
from typing import TextIO

import msgspec

from steadfast.client import AsyncClient
from steadfast.command_support import (
    add_connection,
    client_for,
    dataset_reference,
    evaluator_url,
    read_jsonl,
    run,
    save,
)
from steadfast.shared.contracts.position import (
    CONDITIONS,
    PositionBiasEvaluate,
    PositionBiasEvaluation,
    PositionItem,
)
from steadfast.shared.contracts.scoring import MetricValue
from steadfast.shared.http_client import ServiceCallError

TOO_LARGE = 413
#: failed status requests in a row before the CLI stops waiting for a job
POLL_MISSES = 10
COLUMNS = ("PF", "abs_PF", "PC", "acc_correct_first", "acc_correct_second", "invalid_rate")


def read_items(path: Path) -> list[PositionItem]:
    """One JSON object per line, as ``POST /v1/position-bias`` takes its items."""
    return read_jsonl(path, PositionItem)


def request_of(args: argparse.Namespace) -> PositionBiasEvaluate:
    if bool(args.file) == bool(args.dataset):
        raise SystemExit("give a FILE or --dataset NAME")
    dataset = dataset_reference(args.dataset)
    return PositionBiasEvaluate(
        models=args.model,
        items=read_items(Path(args.file)) if args.file else None,
        dataset_id=dataset,
        limit=args.limit,
        conditions=args.condition,
        generator=args.generator,
        calibrate=args.calibrate,
    )


def _cell(value: float | None, signed: bool = True) -> str:
    if value is None:
        return "-"
    return f"{value:+.2f}" if signed else f"{value:.0f}"


def _metric_row(model: str, condition: str, metrics: dict[str, MetricValue]) -> list[str]:
    values = [_cell(metrics[name].value) for name in COLUMNS]
    return [model, condition, *values, _cell(metrics["n_pairs"].value, signed=False)]


def print_table(result: PositionBiasEvaluation, out: TextIO | None = None) -> None:
    out = out or sys.stdout
    rows = [["model", "condition", *COLUMNS, "n_pairs"]]
    for model, metrics in result.models.items():
        rows.append(_metric_row(model, "all", metrics))
        for condition, by_model in sorted(result.by_condition.items()):
            if model in by_model:
                rows.append(_metric_row("", condition, by_model[model]))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        cells = (cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        print("  ".join(cells).rstrip(), file=out)
    agreed = sum(1 for t in result.trials for m in t.models if m.agreed is not None)
    answered = sum(len(t.models) for t in result.trials)
    print(f"\nswap-and-agree gave an option on {agreed} of {answered} trials", file=out)
    for model, failed in result.failed_replies.items():
        if failed:
            print(f"{model}: {failed} replies failed after every retry (in no metric)", file=out)
    for note in result.notes:
        print(f"note: {note}", file=out)
    for skipped in result.skipped:
        print(f"skipped {skipped.item_id} ({skipped.condition}): {skipped.reason}", file=out)


async def evaluated(
    client: AsyncClient, request: PositionBiasEvaluate, *, job: bool, poll_s: float = 1.0
) -> PositionBiasEvaluation:
    """The evaluation, asked for in one request or, with ``job`` or when the evaluator finds
    it too large for one (413), run as a job that is polled until it finishes."""
    if not job:
        try:
            return await client.position_bias(request)
        except ServiceCallError as error:
            if error.status != TOO_LARGE:
                raise
            print("too large for one request: running it as a job", file=sys.stderr)
    submitted = await client.create_position_job(request, idempotency_key=uuid.uuid4().hex)
    print(f"job {submitted.id}: {submitted.order_count} answers at most", file=sys.stderr)
    status, misses = submitted, 0
    while status.status in ("queued", "running"):
        await asyncio.sleep(poll_s)
        try:
            status = await client.position_job(submitted.id)
            misses = 0
        except ServiceCallError as error:  # the job runs on: a passing outage ends no wait
            misses += 1
            if error.refused or misses >= POLL_MISSES:
                raise
            print(f"job {submitted.id}: no status ({error}), asking again", file=sys.stderr)
    if status.result is None:
        raise SystemExit(f"job {submitted.id} failed: {status.error}")
    return status.result


async def _position_bias(args: argparse.Namespace) -> int:
    async with evaluator_url(args) as url:
        client = client_for(url, args)
        result = await evaluated(client, args.request, job=args.job)
    print_table(result)
    if args.json:
        document = msgspec.json.format(msgspec.json.encode(result))
        written = await asyncio.to_thread(save, Path(args.json), document)
        print(f"JSON result: {written}")
    return 0


def command_position_bias(args: argparse.Namespace) -> int:
    try:
        args.request = request_of(args)
    except OSError as error:  # no such file, unreadable: said in a line, before any service starts
        raise SystemExit(f"error: {error}") from error
    return run(_position_bias, args)


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sub = commands.add_parser(
        "position-bias", help="ask every item with its options in each order: PF, PC, mitigations"
    )
    sub.add_argument("file", nargs="?", help="JSONL of items ({question, answer, ...})")
    sub.add_argument("--dataset", help="a stored dataset id or a sample name (mmlu, simpleqa...)")
    sub.add_argument("--limit", type=int, default=None, help="only the first N items")
    sub.add_argument("--model", action="append", required=True, help="gateway route; repeat")
    sub.add_argument("--condition", action="append", choices=CONDITIONS, default=None)
    sub.add_argument("--generator", default="local", help="route writing the distractors")
    sub.add_argument("--calibrate", action="store_true", help="balanced position calibration")
    sub.add_argument("--json", default=None, help="write the whole result here")
    sub.add_argument(
        "--job",
        action="store_true",
        help="run it as a job and wait for it (done anyway when it is too large for a request)",
    )
    add_connection(sub)
    sub.set_defaults(handler=command_position_bias)
