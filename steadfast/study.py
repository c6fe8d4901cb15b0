"""``steadfast study run STUDY.toml``, ``steadfast study status ID`` and ``steadfast study
report ID``: a study (data sets × models × both protocols) from a TOML file, through a running
evaluator (or services started for the command).

A part of the file names its data set as ``dataset``: a built-in sample's short name
(``truthfulqa``), a stored dataset's id, or a file beside the study file (uploaded first);
``limit`` takes the first items; ``[parts.settings]`` holds anything of the part's request
(``POST /v1/evaluations`` for ``consistency``, ``POST /v1/position-bias/jobs`` for
``position-bias``: ``k``, ``verify``, ``conditions``, ``language``...)."""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

import msgspec

from steadfast.client import AsyncClient
from steadfast.command_support import (
    LOCAL_RUN_ENVIRONMENT,
    add_connection,
    client_for,
    dataset_reference,
    evaluator_url,
    run,
    save,
)
from steadfast.shared.contracts.studies import StudyCreate, StudyReport, StudyStatus

#: the keys of a part in the file, beside its request's own settings
PART_KEYS = {"name", "protocol", "dataset", "limit", "settings", "task", "format"}


class StudyFileError(ValueError):
    """The study file cannot be used; the message names the part and the key."""


def read_study_file(path: Path) -> dict[str, Any]:
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise StudyFileError(f"{path}: cannot be read: {error}") from error
    except tomllib.TOMLDecodeError as error:
        raise StudyFileError(f"{path}: not valid TOML: {error}") from error
    parts = document.get("parts")
    if not isinstance(parts, list) or not parts:
        raise StudyFileError(f"{path}: needs at least one [[parts]] table")
    for index, part in enumerate(parts):
        if not isinstance(part, dict):
            raise StudyFileError(f"{path}: parts[{index}]: must be a table")
        unknown = sorted(set(part) - PART_KEYS)
        if unknown:
            raise StudyFileError(f"{path}: parts[{index}]: unknown key {unknown[0]!r}")
        for needed in ("name", "dataset"):
            if needed not in part:
                raise StudyFileError(f"{path}: parts[{index}]: needs a `{needed}`")
        if not isinstance(part.get("settings", {}), dict):
            raise StudyFileError(f"{path}: parts[{index}]: `settings` must be a table")
    return document


async def study_request(client: AsyncClient, document: dict[str, Any], base: Path) -> StudyCreate:
    """The study the file describes; a part's data set given as a file is uploaded, once the
    study is known to be valid."""
    checked(document, {index: "file" for index, _ in enumerate(document["parts"])})
    dataset_ids = {
        index: await _dataset_id(client, part, base) for index, part in enumerate(document["parts"])
    }
    return checked(document, dataset_ids)


def checked(document: dict[str, Any], dataset_ids: dict[int, str]) -> StudyCreate:
    """The study of the file with each part's dataset id; StudyFileError naming what is wrong."""
    parts = []
    for index, part in enumerate(document["parts"]):
        dataset_id = dataset_ids[index]
        protocol = part.get("protocol", "consistency")
        request = {**part.get("settings", {}), "dataset_id": dataset_id}
        if "limit" in part:
            request["limit"] = part["limit"]
        if protocol == "consistency" and "task" in part:
            request["task"] = part["task"]
        key = "evaluation" if protocol == "consistency" else "position_bias"
        parts.append({"name": part["name"], "protocol": protocol, key: request})
    body = {"name": document.get("name"), "models": document.get("models"), "parts": parts}
    try:
        return msgspec.convert(body, StudyCreate)
    except msgspec.ValidationError as error:
        raise StudyFileError(f"the study is not valid: {error}") from error


async def _dataset_id(client: AsyncClient, part: dict[str, Any], base: Path) -> str:
    name = str(part["dataset"])
    path = base / name
    if not path.is_file():
        return str(dataset_reference(name))
    content = await asyncio.to_thread(path.read_bytes)
    task = "choice" if part.get("format") == "mmlu" else part.get("task", "factual")
    info = await client.upload_dataset(content, path.name, task=task, fmt=part.get("format"))
    print(f"uploaded {path} as dataset {info.id} ({info.item_count} items)", file=sys.stderr)
    return info.id


def progress_line(status: StudyStatus) -> str:
    parts = ", ".join(
        f"{part.name} {part.status} {part.progress.done}/{part.progress.total}"
        for part in status.parts
    )
    return f"{status.status:<9} {status.progress.done}/{status.progress.total} answers  {parts}"


def print_report(report: StudyReport) -> None:
    print(f"\nstudy {report.name} ({report.id}): {report.status}")
    for part in report.parts:
        where = f"{part.dataset or 'items'}, {part.language or '?'}"
        print(f"\n{part.name} [{part.protocol}; {where}]: {part.status}")
        if part.error:
            print(f"  {part.error}")
        if part.consistency is not None:
            for model, metrics in part.consistency.models.items():
                shown = "  ".join(
                    f"{name} {_percent(value.value)}" for name, value in metrics.items()
                )
                print(f"  {model:<20} {shown}")
            for line in part.consistency.verification:
                print(f"  {line}")
        if part.position_bias is not None:
            for condition, models in part.position_bias.by_condition.items():
                for model, metrics in models.items():
                    shown = "  ".join(
                        f"{name} {_number(value.value)}" for name, value in metrics.items()
                    )
                    print(f"  {condition:<7} {model:<20} {shown}")


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def _number(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


async def follow(client: AsyncClient, study_id: str) -> StudyStatus:
    last, last_print = "", 0.0

    def show(status: StudyStatus) -> None:
        nonlocal last, last_print
        line = progress_line(status)
        if line != last and (time.monotonic() - last_print > 5 or status.status != "running"):
            print(line, flush=True)
            last, last_print = line, time.monotonic()

    return await client.wait_study(study_id, progress=show, poll_s=1.0)


async def write_reports(client: AsyncClient, study_id: str, args: argparse.Namespace) -> None:
    report = await client.study_report(study_id)
    print_report(report)
    if args.json:
        document = msgspec.json.format(msgspec.json.encode(report))
        print(f"JSON report: {await asyncio.to_thread(save, Path(args.json), document)}")
    for fmt in ("html", "csv"):
        if target := getattr(args, fmt):
            content = await client.rendered_study_report(study_id, fmt)
            written = await asyncio.to_thread(save, Path(target), content)
            print(f"{fmt.upper()} report: {written}")


async def _run_study(args: argparse.Namespace) -> int:
    path = Path(args.file)
    document = read_study_file(path)
    async with evaluator_url(args, LOCAL_RUN_ENVIRONMENT) as url:
        client = client_for(url, args)
        request = await study_request(client, document, path.parent)
        accepted = await client.create_study(request)
        print(f"study {accepted.id} started on {url}: {len(request.parts)} part(s)")
        final = await follow(client, accepted.id)
        await write_reports(client, accepted.id, args)
    return 0 if final.status == "succeeded" else 1


async def _status(args: argparse.Namespace) -> int:
    async with evaluator_url(args) as url:
        status = await client_for(url, args).study(args.id)
    print(progress_line(status))
    for part in status.parts:
        reason = f" — {part.error}" if part.error else ""
        print(f"  {part.name:<20} {part.protocol:<14} {part.job_id}  {part.status}{reason}")
    return 0


async def _report(args: argparse.Namespace) -> int:
    async with evaluator_url(args) as url:
        await write_reports(client_for(url, args), args.id, args)
    return 0


def command_study(args: argparse.Namespace) -> int:
    try:
        return run(args.study_handler, args)
    except StudyFileError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    study = commands.add_parser(
        "study", help="a study: data sets × models × both protocols, one report"
    )
    actions = study.add_subparsers(dest="study_command", required=True)
    running = actions.add_parser("run", help="run the study a TOML file describes")
    running.add_argument("file", help="the study (see studies/*.toml)")
    running.add_argument(
        "--start", action="store_true", help="start services of its own, even if some run"
    )
    status = actions.add_parser("status", help="a study's progress over its parts")
    status.add_argument("id")
    report = actions.add_parser("report", help="write a study's report")
    report.add_argument("id")
    for sub, handler in ((running, _run_study), (status, _status), (report, _report)):
        add_connection(sub)
        sub.set_defaults(handler=command_study, study_handler=handler)
    for sub in (running, report):
        sub.add_argument("--html", help="write the self-contained HTML report here")
        sub.add_argument("--json", help="write the JSON report here")
        sub.add_argument("--csv", help="write the CSV report here")
