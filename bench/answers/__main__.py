"""Answer equivalence on the hand-labelled answer pairs (``pairs.jsonl``): how often each cheap
step decides and how often it is right, and how the whole chain (cheap steps, then the judge
route for the pairs they leave undecided) groups same answers together and keeps different ones
apart, with the judge calls it costs per 100 answers.

    python -m bench.answers                       # starts the gateway; judge = local
    python -m bench.answers --no-judge            # the cheap steps only
    python -m bench.answers --gateway-url http://127.0.0.1:8001 --judge local

The judge's P(YES) for a pair is recorded per judge route and prompt version (``--judged``), so a
run asks only for the pairs not recorded yet.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import msgspec

from bench.stack import local_services
from steadfast.services.gateway.domain.routes import BUILTIN_ROUTES
from steadfast.shared.answer_cheap_steps import ASIDES_ASIDE, STEPS, cheap_decision
from steadfast.shared.answer_equivalence import ANSWERS_PROMPT_VERSION, RouteJudge
from steadfast.shared.clients.gateway import GatewayClient
from steadfast.shared.contracts.calibration import JudgeCalibration, ThresholdRates
from steadfast.shared.http_client import ServiceCallError, close_session

HERE = Path(__file__).resolve().parent
PAIRS = HERE / "pairs.jsonl"
RECORDED = HERE / "judged.jsonl"


@dataclass
class Pair:
    id: str
    question: str
    a: str
    b: str
    same: bool
    kind: str
    language: str
    step: str = ""
    decided: bool | None = None
    p_same: float | None = None


def load(path: Path) -> list[Pair]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return [
        Pair(r["id"], r["question"], r["a"], r["b"], r["same"], r["kind"], r["language"])
        for r in rows
    ]


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole} ({part / whole:.1%})" if whole else "–"


def steps_alone(pairs: list[Pair]) -> str:
    lines = [
        "\nEach cheap step alone, on every pair",
        "step | decides | right when it decides | same pairs it calls different | different pairs "
        "it calls same",
        "--- | --- | --- | --- | ---",
    ]
    for name, step in STEPS:
        verdicts = [(pair, step(pair.question, pair.a, pair.b)) for pair in pairs]
        decided = [(p, v) for p, v in verdicts if v is not None]
        right = sum(v == p.same for p, v in decided)
        split = sum(1 for p, v in decided if p.same and v is False)
        merged = sum(1 for p, v in decided if not p.same and v is True)
        lines.append(
            f"{name} | {_share(len(decided), len(pairs))} | {_share(right, len(decided))} | "
            f"{split} | {merged}"
        )
    retried = [p for p in pairs if p.step.endswith(ASIDES_ASIDE)]
    right = sum(p.same for p in retried)
    lines.append(
        f"then, for a pair still undecided, the steps again with asides taken out | "
        f"{_share(len(retried), len(pairs))} | {_share(right, len(retried))} | 0 | "
        f"{len(retried) - right}"
    )
    return "\n".join(lines)


def chain(pairs: list[Pair], threshold: float | None) -> tuple[int, int, int, int]:
    """Same pairs grouped together, of all same pairs; different pairs kept apart, of all."""
    together = apart = 0
    for pair in pairs:
        verdict = pair.decided
        if verdict is None:
            verdict = pair.p_same is not None and threshold is not None and pair.p_same >= threshold
        together += pair.same and verdict
        apart += not pair.same and not verdict
    same = sum(p.same for p in pairs)
    return together, same, apart, len(pairs) - same


def chain_table(pairs: list[Pair], thresholds: list[float | None], calls: int) -> str:
    lines = [
        "\nThe whole chain: cheap steps, then the judge for the pairs left undecided",
        "rule | language | same grouped together | different kept apart",
        "--- | --- | --- | ---",
    ]
    for threshold in thresholds:
        name = "cheap steps only" if threshold is None else f"judge P(YES) >= {threshold:.2f}"
        for language in ("all", "en", "it"):
            chosen = [p for p in pairs if language in ("all", p.language)]
            together, same, apart, different = chain(chosen, threshold)
            lines.append(
                f"{name} | {language} | {_share(together, same)} | {_share(apart, different)}"
            )
    answers = 2 * len(pairs)
    lines.append(
        f"\njudge calls: {calls} for {len(pairs)} pairs ({answers} answers): "
        f"{100 * calls / answers:.1f} per 100 answers; none for a pair a cheap step decides"
    )
    return "\n".join(lines)


GRID = tuple(round(0.05 * step, 2) for step in range(1, 20))


def answer_calibration(route: str, pairs: list[Pair], keep_apart: float) -> JudgeCalibration:
    """The answer judge's threshold: the lowest at which the whole chain keeps ``keep_apart``
    of the different answers apart (a merge of two different answers would hide an
    inconsistency the metrics exist to show), with the chain's rates at every threshold."""
    rates = []
    for threshold in GRID:
        together, _, apart, _ = chain(pairs, threshold)
        rates.append(
            ThresholdRates(threshold=threshold, accepted_equivalent=together, rejected_other=apart)
        )
    same = sum(p.same for p in pairs)
    different = len(pairs) - same
    safe = [r.threshold for r in rates if r.rejected_other >= keep_apart * different]
    chosen = min(safe) if safe else max(GRID)
    return JudgeCalibration(
        route=route,
        prompt_version=ANSWERS_PROMPT_VERSION,
        threshold=chosen,
        rule=f"the lowest threshold at which the answer grouping keeps at least "
        f"{keep_apart:.0%} of the different answers apart",
        pairs=f"bench/answers/pairs.jsonl ({len(pairs)} answer pairs)",
        equivalent=same,
        other=different,
        rates=rates,
        calibrated_at=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        # a built-in local route's model, by which the gateway finds a bundled calibration
        # (``services/gateway/calibrations.json``); a stored one gets its route's model anyway
        model=BUILTIN_ROUTES[route].model if route in BUILTIN_ROUTES else None,
    )


def load_recorded(path: Path, key: str) -> dict[str, float]:
    if not path.exists():
        return {}
    rows = (json.loads(line) for line in path.read_text().splitlines() if line.strip())
    return {row["id"]: row["p_same"] for row in rows if row["key"] == key}


def _append(path: Path, line: str) -> None:
    with path.open("a") as out:
        out.write(line)


async def judge_undecided(args: argparse.Namespace, pairs: list[Pair]) -> tuple[int, float]:
    key = f"{args.judge}|{ANSWERS_PROMPT_VERSION}"
    recorded = load_recorded(Path(args.judged), key)
    todo = [p for p in pairs if p.decided is None and p.id not in recorded]
    for pair in pairs:
        pair.p_same = recorded.get(pair.id, pair.p_same)
    judge = RouteJudge(GatewayClient(args.gateway_url, timeout_s=600), args.judge)
    limit = asyncio.Semaphore(args.concurrency)
    started = time.monotonic()

    async def one(pair: Pair) -> None:
        first, second = sorted((pair.a, pair.b))
        async with limit:
            try:
                pair.p_same = await judge.p_same(pair.question, first, second)
            except ServiceCallError as error:
                print(f"  {pair.id}: judge failed: {error}", file=sys.stderr)
                return
        row = json.dumps({"id": pair.id, "key": key, "p_same": pair.p_same}) + "\n"
        await asyncio.to_thread(_append, Path(args.judged), row)

    print(f"judge on {len(todo)} undecided pairs", file=sys.stderr)
    await asyncio.gather(*(one(pair) for pair in todo))
    return len(todo), time.monotonic() - started


async def run(args: argparse.Namespace) -> None:
    pairs = load(Path(args.pairs))
    if args.limit:
        pairs = pairs[: args.limit]
    for pair in pairs:
        decision = cheap_decision(pair.question, pair.a, pair.b)
        pair.step, pair.decided = decision.step, decision.same
    undecided = sum(p.decided is None for p in pairs)
    print(
        f"{len(pairs)} labelled pairs ({sum(p.same for p in pairs)} same); {undecided} left "
        "undecided by the cheap steps"
    )
    print(steps_alone(pairs))
    thresholds: list[float | None] = [None]
    if not args.no_judge:
        asked, seconds = await judge_undecided(args, pairs)
        print(
            f"judge {args.judge!r} ({ANSWERS_PROMPT_VERSION}): {asked} pairs asked in this run, "
            f"{seconds:.0f} s"
        )
        thresholds += args.grid
    print(chain_table(pairs, thresholds, undecided if not args.no_judge else 0))
    if args.save_calibration and not args.no_judge:
        calibration = answer_calibration(args.judge, pairs, args.keep_apart)
        document = msgspec.json.format(msgspec.json.encode(calibration)).decode()
        await asyncio.to_thread(Path(args.save_calibration).write_text, document + "\n")
        print(f"\ncalibration: threshold {calibration.threshold:.2f} ({calibration.rule})")
    wrong = [p for p in pairs if p.decided is not None and p.decided != p.same]
    print(f"\ncheap steps wrong on {len(wrong)} pairs:")
    for pair in wrong:
        print(
            f"  {pair.id} ({pair.step}, labelled {'same' if pair.same else 'different'}): "
            f"{pair.a!r} / {pair.b!r}"
        )
    await close_session()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--pairs", default=str(PAIRS))
    parser.add_argument("--gateway-url", default=None, help="use a running gateway")
    parser.add_argument("--judge", default="local", help="the judge's gateway route")
    parser.add_argument("--no-judge", action="store_true")
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--grid", type=float, nargs="*", default=[0.5, 0.7, 0.8, 0.85, 0.9])
    parser.add_argument("--judged", default=str(RECORDED), help="recorded judge verdicts")
    parser.add_argument(
        "--save-calibration", default=None, help="write the answer judge's calibration (JSON)"
    )
    parser.add_argument(
        "--keep-apart",
        type=float,
        default=0.97,
        help="the share of different answers the calibrated threshold must keep apart (#27's "
        "target: a merge hides an inconsistency from the metrics)",
    )
    args = parser.parse_args()
    if args.no_judge or args.gateway_url:
        asyncio.run(run(args))
        return
    with local_services(("gateway",), {"STEADFAST_LOG_LEVEL": "WARNING"}) as urls:
        args.gateway_url = urls["gateway"]
        asyncio.run(run(args))


if __name__ == "__main__":
    main()
