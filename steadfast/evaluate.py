"""``steadfast evaluate``, ``steadfast report`` and ``steadfast demo``: submit evaluations to the
evaluator (starting the services when none is running), show progress, print summaries."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
import time
import uuid
import webbrowser
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path
from typing import TextIO, TypeVar

import msgspec

from steadfast.client import AsyncClient
from steadfast.shared.contracts.evaluator import (
    DEFAULT_PARAPHRASES,
    EvaluationCreate,
    EvaluationReport,
    EvaluationStatus,
    MetricSettings,
    StageProgress,
)
from steadfast.shared.contracts.studies import CONSISTENCY_COLUMNS
from steadfast.shared.contracts.verify import VerifyOptions, VerifyStages
from steadfast.shared.http_client import ServiceCallError, close_session
from steadfast.shared.settings import ServiceSettings, load_settings
from steadfast.shared.trust_text import trust_lines
from steadfast.supervisor import Supervisor, exit_on_sigterm, readiness, service_ports

#: the table's metrics: a study report's consistency columns
SUMMARY_METRICS = CONSISTENCY_COLUMNS
#: the metrics a CI job may gate on (--fail-under / --fail-over)
GATED_METRICS = SUMMARY_METRICS
#: the exit code of an evaluation that ran but missed a --fail-under/--fail-over threshold
GATE_FAILED = 3
TERMINAL = ("succeeded", "failed", "cancelled")
T = TypeVar("T")
DEMO_DATASET = "demo"


# ---- output ----------------------------------------------------------------------------------


def bar(stage: StageProgress, width: int = 16) -> str:
    finished = stage.done + stage.failed
    share = finished / stage.total if stage.total else 0.0
    filled = round(share * width)
    failed = f" ({stage.failed} failed)" if stage.failed else ""
    return f"[{'#' * filled}{'.' * (width - filled)}] {finished}/{stage.total}{failed}"


def progress_line(status: EvaluationStatus, now: float | None = None) -> str:
    progress = status.progress
    line = (
        f"{status.status:<9} paraphrase {bar(progress.paraphrase, 10)}  "
        f"answer {bar(progress.answer)}  grade {bar(progress.grade, 10)}"
    )
    remaining = eta_s(status, time.time() if now is None else now)
    return f"{line}  ETA {_duration(remaining)}" if remaining is not None else line


def eta_s(status: EvaluationStatus, now: float) -> float | None:
    """Seconds left at the pace so far (answered share over time since the start); None before
    there is a pace to go by, or once the job ended."""
    started = status.timings.started_at
    fraction = status.progress.fraction
    if status.status != "running" or started is None or not 0.02 <= fraction < 1:
        return None
    elapsed = now - datetime.fromisoformat(started).timestamp()
    return max(0.0, elapsed * (1 - fraction) / fraction)


def _duration(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def gate_failures(
    report: EvaluationReport, under: dict[str, float], over: dict[str, float]
) -> list[str]:
    """Why the evaluation fails the caller's thresholds: a metric below its ``--fail-under`` or
    above its ``--fail-over`` value for some model (or not measured at all)."""
    failures = []
    for summary in report.models:
        for bounds, below in ((under, True), (over, False)):
            for name, bound in bounds.items():
                metric = summary.metrics.get(name)
                value = metric.value if metric else None
                if value is None:
                    failures.append(f"{summary.model}: {name} was not measured")
                elif (value < bound) if below else (value > bound):
                    side = "below" if below else "above"
                    failures.append(f"{summary.model}: {name} {value:.3f} is {side} {bound:g}")
    return failures


def thresholds(pairs: list[str], option: str) -> dict[str, float]:
    """``METRIC=VALUE`` pairs by the report's metric names (any case); a mistake stops the
    command before anything runs."""
    known = {name.lower(): name for name in GATED_METRICS}
    parsed = {}
    for pair in pairs:
        name, _, value = pair.partition("=")
        if name.lower() not in known:
            raise SystemExit(f"{option} {pair}: metric one of {', '.join(GATED_METRICS)}")
        try:
            parsed[known[name.lower()]] = float(value)
        except ValueError:
            raise SystemExit(f"{option} {pair}: expected METRIC=NUMBER") from None
    return parsed


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def summary_table(report: EvaluationReport) -> str:
    header = ["model", *SUMMARY_METRICS, "agreement", "answered", "unparsed", "failed"]
    rows = [header]
    for summary in report.models:
        cells = [summary.model]
        for name in SUMMARY_METRICS:
            metric = summary.metrics.get(name)
            cells.append(f"{_percent(metric.value)} (n={metric.n})" if metric else "-")
        counts = (summary.answered, summary.unparsed, summary.failed)
        cells += [_percent(summary.mean_agreement), *map(str, counts)]
        rows.append(cells)
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        for row in rows
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)


def print_outcome(report: EvaluationReport, out: TextIO = sys.stdout) -> None:
    print(f"\nevaluation {report.id}: {report.status}", file=out)
    if report.message:
        print(f"note: {report.message}", file=out)
    print(summary_table(report), file=out)
    for line in trust_lines(report):
        print(line, file=out)
    gaps = [
        (s.model, s.metrics.get("A_any"), s.metrics.get("A_strict"))
        for s in report.models
        if s.metrics.get("A_any") and s.metrics.get("A_strict")
    ]
    for model, any_, strict in gaps:
        if any_ and strict and any_.value is not None and strict.value is not None:
            gap = 100 * (any_.value - strict.value)
            print(
                f"{model}: right on at least one wording {_percent(any_.value)}, on every "
                f"wording {_percent(strict.value)} — a gap of {gap:.1f} points",
                file=out,
            )
    for error in report.errors[:10]:
        where = f" {error.model} variant {error.variant}" if error.model else ""
        print(f"  failed: {error.item_id}{where} ({error.stage}): {error.reason}", file=out)
    if len(report.errors) > 10:
        print(f"  ... and {len(report.errors) - 10} more failures", file=out)


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


# ---- services --------------------------------------------------------------------------------


#: services a command starts for itself (the demo, a study) run the local models on this
#: machine: one paraphrase set at a time, and at most two answers in flight, leave the model's
#: other slots to the candidates of that set (which have a time budget) instead of queueing them
#: behind long maths answers; the model gets every core, as little else runs (the demo: 5 of 8
#: sets complete in 294 s, against 3 of 8 in 409 s with one thread, 2026-12-04)
LOCAL_RUN_ENVIRONMENT = {
    "STEADFAST_EVALUATOR_PARAPHRASE_LANES": "1",
    "STEADFAST_EVALUATOR_ANSWER_LANES": "1",
    "STEADFAST_EVALUATOR_ANSWER_BATCH": "2",
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


async def follow(client: AsyncClient, evaluation_id: str, out: TextIO = sys.stdout) -> str:
    """Show progress until the evaluation finishes; returns its final status."""
    interactive = out.isatty()
    last_line, last_print = "", 0.0
    while True:
        status = await client.evaluation(evaluation_id)
        line = progress_line(status)
        now = time.monotonic()
        if interactive:
            print(f"\r{line}", end="", file=out, flush=True)
        elif line != last_line and (now - last_print > 5 or status.status in TERMINAL):
            print(line, file=out, flush=True)
            last_print = now
        last_line = line
        if status.status in TERMINAL:
            if interactive:
                print(file=out)
            return status.status
        await asyncio.sleep(0.5)


# ---- commands --------------------------------------------------------------------------------


def evaluation_request(args: argparse.Namespace, dataset_id: str) -> EvaluationCreate:
    verify = VerifyOptions(stages=VerifyStages(lexical=not args.no_lexical, semantic=args.semantic))
    return EvaluationCreate(
        name=args.name,
        dataset_id=dataset_id,
        limit=args.limit,
        models=args.model,
        task=args.task,
        k=args.k,
        generator=args.generator,
        grader=args.grader,
        verify=verify,
        max_tokens=args.max_tokens,
        time_budget_s=args.time_budget,
        metrics=MetricSettings(strict_threshold=args.strict_threshold),
        seed=args.seed,
    )


async def _dataset_id(client: AsyncClient, args: argparse.Namespace) -> str:
    if args.dataset:
        return str(args.dataset)
    path = Path(args.file)
    content = await asyncio.to_thread(path.read_bytes)
    info = await client.upload_dataset(content, path.name, task=args.task, fmt=args.format)
    print(f"uploaded {path} as dataset {info.id} ({info.item_count} items)")
    return info.id


async def _evaluate(args: argparse.Namespace) -> int:
    under = thresholds(args.fail_under, "--fail-under")
    over = thresholds(args.fail_over, "--fail-over")
    waits = args.wait or args.json or under or over
    async with evaluator_url(args) as url:
        client = client_for(url, args)
        dataset_id = await _dataset_id(client, args)
        accepted = await client.create_evaluation(
            evaluation_request(args, dataset_id), idempotency_key=uuid.uuid4().hex
        )
        print(f"evaluation {accepted.id} submitted to {url}")
        if not waits and not getattr(args, "started_services", False):
            return 0
        final = await follow(client, accepted.id)
        report = await client.report(accepted.id)
        print_outcome(report)
        if args.html:
            await write_html(client, accepted.id, Path(args.html))
        if args.json:
            written = await asyncio.to_thread(save, Path(args.json), msgspec.json.encode(report))
            print(f"JSON result: {written}")
        if final != "succeeded":
            return 1
        for failure in (failed := gate_failures(report, under, over)):
            print(f"threshold missed: {failure}", file=sys.stderr)
        return GATE_FAILED if failed else 0


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


async def write_html(client: AsyncClient, evaluation_id: str, path: Path) -> Path:
    document = await client.rendered_report(evaluation_id, "html")
    written = await asyncio.to_thread(save, path, document)
    print(f"HTML report: {written}")
    return written


async def _report(args: argparse.Namespace) -> int:
    client = client_for(evaluator_address(args), args)
    print_outcome(await client.report(args.id))
    if args.csv:
        content = await client.rendered_report(args.id, "csv")
        print(f"CSV report: {await asyncio.to_thread(save, Path(args.csv), content)}")
    if args.html or args.open:
        path = await write_html(client, args.id, Path(args.html or f"{args.id}.html"))
        if args.open:
            webbrowser.open(path.as_uri())
    return 0


async def _demo(args: argparse.Namespace) -> int:
    args.start = True  # the demo always runs on services of its own, with the embedded defaults
    args.model = args.model or ["local"]
    async with evaluator_url(args, LOCAL_RUN_ENVIRONMENT) as url:
        client = client_for(url, args)
        request = EvaluationCreate(
            name="demo",
            dataset_id=DEMO_DATASET,
            limit=args.limit,
            models=args.model,
            k=args.k,
            generator=args.generator,
            time_budget_s=args.time_budget,
            max_candidates=args.max_candidates,
            plain_per_round=args.per_round - args.per_round // 3,
            toned_per_round=args.per_round // 3,
            # three calls a round, each writing three candidates: the local model's slots
            # work on them together
            candidates_per_call=3,
            max_tokens=args.max_tokens,
            # both judge orders, as the bundled judge's threshold was calibrated
            verify=VerifyOptions(),
            metrics=MetricSettings(bootstrap=200),
        )
        accepted = await client.create_evaluation(request)
        print(
            f"evaluating the bundled demo sample (factual and maths questions) on "
            f"{', '.join(args.model)} with k={args.k} paraphrases each ..."
        )
        started = time.monotonic()
        try:
            final = await follow(client, accepted.id)
        except asyncio.CancelledError:  # Ctrl-C: the demo's job must not hold the queue later
            await client.cancel(accepted.id)
            raise
        report = await client.report(accepted.id)
        path = Path(args.html) if args.html else data_dir() / "reports" / "demo.html"
        await write_html(client, accepted.id, path)
        print_outcome(report)
        print(f"finished in {time.monotonic() - started:.0f} s")
        return 0 if final == "succeeded" else 1


#: the clients a command made, closed when it ends
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


def command_evaluate(args: argparse.Namespace) -> int:
    if not args.file and not args.dataset:
        raise SystemExit("give a FILE or --dataset NAME")
    if args.file and not Path(args.file).is_file():  # before any service is started for it
        raise SystemExit(f"error: no such file: {args.file}")
    return run(_evaluate, args)


def command_report(args: argparse.Namespace) -> int:
    return run(_report, args)


def command_demo(args: argparse.Namespace) -> int:
    return run(_demo, args)


# ---- argument parsing ------------------------------------------------------------------------


def add_connection(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--url", default=None, help="evaluator URL (default: STEADFAST_EVALUATOR_URL)")
    sub.add_argument("--base-port", type=int, default=None, help="first port of the services")
    sub.add_argument("--start-timeout", type=float, default=180.0)
    sub.add_argument(
        "--api-key",
        default=os.environ.get("STEADFAST_API_KEY"),
        help="key of an evaluator that asks for one (default: STEADFAST_API_KEY)",
    )


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    evaluate = commands.add_parser(
        "evaluate", help="evaluate a dataset file or a stored dataset (starts the services if none)"
    )
    evaluate.add_argument("file", nargs="?", help="JSONL, CSV, MMLU CSV or SQuAD JSON file")
    evaluate.add_argument("--dataset", help="a stored dataset id or a sample name (gsm8k, ...)")
    evaluate.add_argument("--model", action="append", required=True, help="gateway route; repeat")
    evaluate.add_argument(
        "--k", type=int, default=DEFAULT_PARAPHRASES, help="paraphrases per question"
    )
    evaluate.add_argument("--task", choices=["factual", "math", "choice"], default="factual")
    evaluate.add_argument("--format", choices=["jsonl", "csv", "mmlu", "squad"], default=None)
    evaluate.add_argument("--limit", type=int, default=None, help="only the first N items")
    evaluate.add_argument("--name", default=None)
    evaluate.add_argument("--generator", default="local", help="route writing the paraphrases")
    evaluate.add_argument("--grader", choices=["reference", "llm"], default="reference")
    evaluate.add_argument(
        "--semantic",
        choices=["auto", "embedding", "nli", "off"],
        default="auto",
        help="semantic check of paraphrases (auto: nli when verify has STEADFAST_VERIFY_NLI_URL, "
        "else embedding)",
    )
    evaluate.add_argument(
        "--no-lexical", action="store_true", help="skip the lexical-overlap filter"
    )
    evaluate.add_argument("--max-tokens", type=int, default=None)
    evaluate.add_argument("--time-budget", type=float, default=75.0, help="s per paraphrase set")
    evaluate.add_argument("--strict-threshold", type=float, default=1.0)
    evaluate.add_argument(
        "--wait",
        action="store_true",
        help="follow progress, print the summary (always, when this command started the services)",
    )
    evaluate.add_argument("--html", default=None, help="with --wait: write the HTML report here")
    evaluate.add_argument(
        "--json", default=None, help="write the whole result (the report as JSON) here; waits"
    )
    evaluate.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of the paraphrase generator (same seed, same sets)",
    )
    evaluate.add_argument(
        "--fail-under",
        action="append",
        default=[],
        metavar="METRIC=VALUE",
        help="exit 3 when a model's METRIC is below VALUE (e.g. A_strict=0.8); waits; repeat",
    )
    evaluate.add_argument(
        "--fail-over",
        action="append",
        default=[],
        metavar="METRIC=VALUE",
        help="exit 3 when a model's METRIC is above VALUE (e.g. flip_rate=0.1); waits; repeat",
    )
    add_connection(evaluate)
    evaluate.set_defaults(handler=command_evaluate)

    report = commands.add_parser("report", help="print an evaluation's summary; write its report")
    report.add_argument("id")
    report.add_argument("--html", default=None, help="write the HTML report to this path")
    report.add_argument("--csv", default=None, help="write the per-item CSV to this path")
    report.add_argument("--open", action="store_true", help="open the HTML report in a browser")
    add_connection(report)
    report.set_defaults(handler=command_report)

    demo = commands.add_parser(
        "demo", help="the main job: start the services, evaluate the bundled sample locally"
    )
    demo.add_argument("--model", action="append", default=None, help="route (default: local)")
    demo.add_argument("--k", type=int, default=3)
    demo.add_argument("--limit", type=int, default=None)
    demo.add_argument("--generator", default="local")
    # 60 s: 7 of 8 sets complete in 264 s on 2 cores, against 5 of 8 in 260-294 s with 45 s
    demo.add_argument("--time-budget", type=float, default=60.0, help="s per paraphrase set")
    # the time budget bounds a set; a cap of 27 (three rounds) stopped sets with time left
    demo.add_argument("--max-candidates", type=int, default=60)
    demo.add_argument("--per-round", type=int, default=9, help="candidates per generation round")
    demo.add_argument("--max-tokens", type=int, default=None)
    demo.add_argument("--html", default=None, help="where to write the HTML report")
    add_connection(demo)
    demo.set_defaults(handler=command_demo)
