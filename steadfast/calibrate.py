"""``steadfast calibrate --judge ROUTE``: choose the P(YES) threshold of a judge route on labelled
question pairs and store it with the gateway, where every service reads it (docs/method.md §1.1).

The judge is asked both of its questions (verify's equivalence question and the audit's second
one), in both orders, about every labelled pair that passes the checks verification runs before
it by default (lexical overlap with the original, quantity invariance and the semantic check), as
it would in a run. Its mean
P(YES) is tried against every threshold of a grid; one threshold is chosen per question:

- the equivalence question: the lowest threshold at which verification (the checks before the
  judge, then the judge) rejects at least ``--target-reject`` of the meaning-changing pairs,
  keeping as many faithful paraphrases as that safety allows; when none does, the one with the
  best balanced accuracy;
- the audit's question: the highest threshold that still accepts ``--audit-keep`` of the
  equivalent pairs, because the audit re-checks only disagreeing variants and a check that
  wrongly rejects would bias the rates toward consistency (docs/method.md §1.4).

With ``--task`` only the pairs of that kind of question are used (the bundled ones name theirs:
factual or math) and the thresholds are stored for that task: the judge's P(YES) spreads
differently over multi-sentence maths problems than over short factual questions, so a task's
own threshold comes before the route's general one wherever verification knows the task.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import msgspec

from steadfast.command_support import environment_settings, evaluator_url, run
from steadfast.shared.clients.gateway import GatewayClient
from steadfast.shared.clients.verify import VerifyClient
from steadfast.shared.contracts.base import Task
from steadfast.shared.contracts.calibration import (
    METHOD_DEFAULT_THRESHOLD,
    JudgeCalibration,
    ThresholdRates,
)
from steadfast.shared.contracts.verify import VerifyRequest, VerifyStages, VerifyThresholds
from steadfast.shared.language import detect_language
from steadfast.supervisor import readiness, service_ports

#: the labelled pairs bundled with Steadfast (factual and maths; see its LICENSES.md)
BUNDLED_PAIRS = "calibration_pairs.jsonl"
GRID = tuple(round(0.05 * step, 2) for step in range(1, 20))
TARGET_REJECT = 0.95
AUDIT_KEEP = 0.95
#: meaning changes that must reach the judge for its rejections to be measured; with fewer (the
#: checks before it rejected the rest) the judge is held at least to METHOD's default
MIN_JUDGED_CHANGES = 10
TASKS: tuple[Task, ...] = ("factual", "math", "choice")
#: the stages a pair can be rejected by before it reaches the judge
BEFORE_JUDGE = ("form", "direction", "lexical", "numbers", "semantic")


class PairsError(ValueError):
    """The labelled pairs cannot be used; the message names the file and line."""


@dataclass(frozen=True)
class LabelledPair:
    original: str
    candidate: str
    equivalent: bool
    line: int
    #: the kind of question (a ``task`` field of the line), if it says
    task: Task | None = None


@dataclass
class Scored:
    """What the judge said of one pair: its mean P(YES) per question, or why it could not."""

    pair: LabelledPair
    judge: float | None = None
    audit: float | None = None
    screened_out: str | None = None
    error: str | None = None


def read_pairs(path: Path | None, task: Task | None = None) -> tuple[str, list[LabelledPair]]:
    """The pairs of a JSON-lines file (``original``, ``candidate``, ``equivalent``, optionally
    ``task``), or the bundled ones, only those of ``task`` when one is named; the file's name for
    the record. Raises :class:`PairsError` naming the line."""
    if path is None:
        text = resources.files("steadfast").joinpath(BUNDLED_PAIRS).read_text(encoding="utf-8")
        name = f"bundled {BUNDLED_PAIRS}"
    else:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise PairsError(f"{path}: cannot be read: {error}") from error
        name = path.name
    pairs = [
        _pair(line, number, name)
        for number, line in enumerate(text.splitlines(), 1)
        if line.strip()
    ]
    if not pairs:
        raise PairsError(f"{name}: no pairs (one JSON object a line)")
    if task is not None:
        pairs = [p for p in pairs if p.task == task]
        if not pairs:
            raise PairsError(f"{name}: no pair of task {task!r} (a line names it in `task`)")
        name = f"{task} pairs of {name}"
    if all(p.equivalent for p in pairs) or not any(p.equivalent for p in pairs):
        raise PairsError(f"{name}: needs equivalent and meaning-changing pairs, not one kind only")
    return name, pairs


def _pair(line: str, number: int, name: str) -> LabelledPair:
    where = f"{name}, line {number}"
    try:
        row = json.loads(line)
    except json.JSONDecodeError as error:
        raise PairsError(f"{where}: not JSON ({error.msg})") from error
    if not isinstance(row, dict):
        raise PairsError(f"{where}: not a JSON object")
    for field in ("original", "candidate"):
        if not isinstance(row.get(field), str) or not row[field].strip():
            raise PairsError(f"{where}: `{field}` must be a non-empty string")
    if not isinstance(row.get("equivalent"), bool):
        raise PairsError(f"{where}: `equivalent` must be true or false")
    task = row.get("task")
    if task is not None and task not in TASKS:
        raise PairsError(f"{where}: `task` must be one of {', '.join(TASKS)}")
    return LabelledPair(row["original"], row["candidate"], row["equivalent"], number, task)


def rates_at(
    scored: Sequence[tuple[float, bool]],
    grid: Sequence[float] = GRID,
    screened_other: int = 0,
) -> list[ThresholdRates]:
    """How many equivalent pairs are accepted and other pairs rejected at each threshold; the
    ``screened_other`` meaning changes the checks before the judge rejected count as rejected
    at every threshold."""
    return [
        ThresholdRates(
            threshold=threshold,
            accepted_equivalent=sum(1 for p, same in scored if same and p >= threshold),
            rejected_other=screened_other
            + sum(1 for p, same in scored if not same and p < threshold),
        )
        for threshold in grid
    ]


def choose_for_equivalence(
    rates: list[ThresholdRates],
    equivalent: int,
    other: int,
    target_reject: float,
    judged_other: int | None = None,
) -> tuple[float, str]:
    """``judged_other``: the meaning changes that reached the judge (default: all)."""
    safe = [r for r in rates if other and r.rejected_other >= target_reject * other]
    judged = other if judged_other is None else judged_other
    if safe and judged < MIN_JUDGED_CHANGES:
        lowest = min(r.threshold for r in safe)
        # the checks before the judge reject the changes on their own: the pairs say nothing of
        # what the judge would let through, so it is not trusted below METHOD's default
        return max(lowest, METHOD_DEFAULT_THRESHOLD), (
            f"only {judged} meaning-changing pairs reached the judge (the checks before it "
            f"rejected the others), too few to measure it: METHOD's default, or the lowest "
            f"threshold rejecting {target_reject:.0%} of the meaning-changing pairs if higher"
        )
    if safe:
        return min(r.threshold for r in safe), (
            f"the lowest threshold at which verification rejects at least {target_reject:.0%} "
            "of the meaning-changing pairs"
        )
    best = max(rates, key=lambda r: _balanced(r, equivalent, other))
    return best.threshold, (
        f"no threshold rejects {target_reject:.0%} of the meaning-changing pairs: the one with "
        "the best balanced accuracy"
    )


def choose_for_audit(
    rates: list[ThresholdRates], equivalent: int, other: int, keep: float
) -> tuple[float, str]:
    kept = [r for r in rates if equivalent and r.accepted_equivalent >= keep * equivalent]
    if kept:
        return max(r.threshold for r in kept), (
            f"the highest threshold accepting at least {keep:.0%} of the equivalent pairs (the "
            "audit must rarely reject a faithful paraphrase)"
        )
    return min(r.threshold for r in rates), "no threshold keeps enough: the lowest of the grid"


def _balanced(rates: ThresholdRates, equivalent: int, other: int) -> float:
    return rates.accepted_equivalent / max(1, equivalent) + rates.rejected_other / max(1, other)


async def judge_pairs(
    client: VerifyClient,
    route: str,
    pairs: list[LabelledPair],
    *,
    lexical: bool = True,
    concurrency: int = 2,
) -> tuple[list[Scored], str | None, str | None]:
    """Both questions' mean P(YES) for every pair the checks before the judge let through (one
    request a pair: the lexical check would otherwise compare candidates with each other); the
    prompt versions asked."""
    limit = asyncio.Semaphore(concurrency)
    versions: dict[str, str | None] = {"judge": None, "audit": None}
    done = 0

    async def one(pair: LabelledPair) -> Scored:
        nonlocal done
        request = VerifyRequest(
            original=pair.original,
            candidates=[pair.candidate],
            stages=VerifyStages(lexical=lexical, numbers=True, judge=True, semantic="auto"),
            thresholds=VerifyThresholds(judge_p_yes=0.0, audit_p_yes=0.0),
            judge_model=route,
            audit=True,
            task=pair.task,
        )
        async with limit:
            response = await client.verify(request)
        versions["judge"] = response.judge_prompt_version or versions["judge"]
        versions["audit"] = response.audit_prompt_version or versions["audit"]
        (verdict,) = response.results
        before_judge = verdict.deciding_stage in BEFORE_JUDGE
        screened = verdict.reason if before_judge and not verdict.error else None
        done += 1
        print(f"  judged {done}/{len(pairs)} pairs", file=sys.stderr, end="\r")
        return Scored(pair, verdict.judge_p_yes, verdict.audit_p_yes, screened, verdict.error)

    scored = await asyncio.gather(*(one(pair) for pair in pairs))
    print(file=sys.stderr)
    return list(scored), versions["judge"], versions["audit"]


def pair_languages(pairs: Sequence[LabelledPair]) -> list[str]:
    """The languages the pairs' original questions are in, as detected (sorted)."""
    return sorted({code for pair in pairs if (code := detect_language(pair.original))})


def calibration_of(
    route: str,
    version: str,
    scores: list[tuple[float, bool]],
    pairs_name: str,
    failed: int,
    *,
    audit: bool,
    target: float,
    screened: Sequence[bool] = (),
    task: Task | None = None,
    languages: Sequence[str] = (),
) -> JudgeCalibration:
    """``screened``: the labels of the pairs the checks before the judge rejected;
    ``languages``: those the pairs' questions are in."""
    screened_other = sum(1 for same in screened if not same)
    equivalent = sum(1 for _, same in scores if same) + len(screened) - screened_other
    other = len(scores) + len(screened) - equivalent
    rates = rates_at(scores, screened_other=screened_other)
    if audit:
        threshold, rule = choose_for_audit(rates, equivalent, other, target)
    else:
        judged_other = other - screened_other
        threshold, rule = choose_for_equivalence(rates, equivalent, other, target, judged_other)
    return JudgeCalibration(
        route=route,
        prompt_version=version,
        threshold=threshold,
        rule=rule,
        pairs=pairs_name,
        equivalent=equivalent,
        other=other,
        rates=rates,
        failed=failed,
        screened=len(screened),
        calibrated_at=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        task=task,
        languages=list(languages),
    )


def table(calibration: JudgeCalibration) -> str:
    scope = f" ({calibration.task} questions)" if calibration.task else ""
    languages = f", in {', '.join(calibration.languages)}" if calibration.languages else ""
    lines = [
        f"{calibration.prompt_version}{scope}: {calibration.equivalent} equivalent and "
        f"{calibration.other} meaning-changing pairs{languages} ({calibration.screened} "
        "rejected by the checks before the judge, at every threshold)",
        "threshold | equivalent accepted | meaning-changing rejected",
        "--- | --- | ---",
    ]
    for rates in calibration.rates:
        mark = "  <- chosen" if rates.threshold == calibration.threshold else ""
        accepted = _share(rates.accepted_equivalent, calibration.equivalent)
        rejected = _share(rates.rejected_other, calibration.other)
        lines.append(f"{rates.threshold:.2f} | {accepted} | {rejected}{mark}")
    lines.append(f"chosen {calibration.threshold:.2f}: {calibration.rule}")
    return "\n".join(lines)


def _share(count: int, total: int) -> str:
    return f"{count}/{total} ({count / max(1, total):.1%})"


async def calibrate(args: argparse.Namespace) -> int:
    try:
        pairs_name, pairs = read_pairs(Path(args.pairs) if args.pairs else None, args.task)
    except PairsError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if readiness(_service_url(args, "verify"), timeout_s=1.0)[0]:
        return await _calibrate_with(args, pairs_name, pairs)
    async with evaluator_url(args):  # the services, started for this command
        return await _calibrate_with(args, pairs_name, pairs)


async def _calibrate_with(
    args: argparse.Namespace, pairs_name: str, pairs: list[LabelledPair]
) -> int:
    admin_key = os.environ.get("STEADFAST_GATEWAY_ADMIN_KEY")  # needed to store, when set
    token = os.environ.get("STEADFAST_INTERNAL_TOKEN", "")  # verify's and the gateway's, when set
    gateway = GatewayClient(_service_url(args, "gateway"), admin_key=admin_key, token=token)
    known = await gateway.route_names()
    if known is not None and args.judge not in known:
        routes = ", ".join(sorted(name for name in known if ":" not in name))
        print(
            f"error: the gateway has no route {args.judge!r} (its routes: {routes})",
            file=sys.stderr,
        )
        return 2
    verify = VerifyClient(_service_url(args, "verify"), timeout_s=3600, token=token)
    print(f"judging {len(pairs)} labelled pairs with {args.judge!r} ...", file=sys.stderr)
    scored, judge_version, audit_version = await judge_pairs(
        verify, args.judge, pairs, lexical=not args.without_lexical
    )
    return await _report_and_store(args, gateway, pairs_name, scored, judge_version, audit_version)


def _service_url(args: argparse.Namespace, service: str) -> str:
    if args.base_port is not None:
        return f"http://127.0.0.1:{service_ports(args.base_port)[service]}"
    return environment_settings().service_url(service)


async def _report_and_store(
    args: argparse.Namespace,
    gateway: GatewayClient,
    pairs_name: str,
    scored: list[Scored],
    judge_version: str | None,
    audit_version: str | None,
) -> int:
    screened = [s for s in scored if s.screened_out]
    failed = [s for s in scored if s.error and not s.screened_out]
    judged = [s for s in scored if not s.screened_out and not s.error]
    print(
        f"{len(screened)} pairs rejected by the checks before the judge "
        f"({sum(s.pair.equivalent for s in screened)} of them equivalent); "
        f"{len(failed)} failed judge calls; {len(judged)} judged"
    )
    if not judged:
        print(
            "error: no pair reached the judge (every one was rejected by the checks before it "
            "or its judge call failed): nothing to calibrate",
            file=sys.stderr,
        )
        return 1
    if any(s.judge is None for s in judged):
        print(
            f"error: {args.judge!r} gives no log-probabilities, so no P(YES) to calibrate: "
            "METHOD's reply rule applies to it",
            file=sys.stderr,
        )
        return 1
    made = []
    for version, audit, target in (
        (judge_version, False, args.target_reject),
        (audit_version, True, args.audit_keep),
    ):
        if version is None:
            continue
        values = [(s.audit if audit else s.judge, s.pair.equivalent) for s in judged]
        scores = [(p, same) for p, same in values if p is not None]
        calibration = calibration_of(
            args.judge,
            version,
            scores,
            pairs_name,
            len(failed),
            audit=audit,
            target=target,
            screened=[] if audit else [s.pair.equivalent for s in screened],
            task=args.task,
            languages=pair_languages([s.pair for s in scored]),
        )
        print("\n" + table(calibration))
        made.append(calibration)
    if args.save:
        document = msgspec.json.format(msgspec.json.encode(made)).decode() + "\n"
        await asyncio.to_thread(Path(args.save).write_text, document, encoding="utf-8")
    if args.dry_run:
        print("\n--dry-run: nothing stored")
        return 0
    for calibration in made:
        stored = await gateway.store_calibration(calibration)
        version = calibration.prompt_version
        print(f"stored: {version} of {args.judge!r} is {stored.value:.2f} ({stored.origin})")
        if stored.source == "configured":
            print("  note: the route's configuration sets it, and wins over the calibration")
    return 0


def command_calibrate(args: argparse.Namespace) -> int:
    return run(calibrate, args)


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    calibrate_parser = commands.add_parser(
        "calibrate",
        help="choose and store a judge route's P(YES) threshold on labelled pairs",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    calibrate_parser.add_argument("--judge", required=True, help="the gateway route to calibrate")
    calibrate_parser.add_argument(
        "--pairs",
        default=None,
        help="JSON lines with original, candidate, equivalent (default: the bundled pairs)",
    )
    calibrate_parser.add_argument(
        "--task",
        choices=TASKS,
        default=None,
        help="calibrate for this kind of question only, on the pairs that name it (its threshold "
        "then comes before the route's general one for that task)",
    )
    calibrate_parser.add_argument("--target-reject", type=float, default=TARGET_REJECT)
    calibrate_parser.add_argument("--audit-keep", type=float, default=AUDIT_KEEP)
    calibrate_parser.add_argument("--dry-run", action="store_true", help="print, store nothing")
    calibrate_parser.add_argument(
        "--without-lexical",
        action="store_true",
        help="calibrate for verification without the lexical filter (stages.lexical false)",
    )
    calibrate_parser.add_argument(
        "--save", default=None, help="also write the calibrations as JSON"
    )
    calibrate_parser.add_argument("--base-port", type=int, default=None)
    calibrate_parser.add_argument("--start-timeout", type=float, default=180.0)
    calibrate_parser.set_defaults(handler=command_calibrate, url=None)
