"""Verify stages on the labelled GSM-Plus pairs: accept rate of equivalent pairs, reject rate of
meaning-changing ones, per stage, combined and per perturbation type.

    python -m bench.equivalence                     # starts gateway + verify itself
    python -m bench.equivalence --judge-per-type 12 --verify-url http://127.0.0.1:8003
    python -m bench.equivalence --judge-equivalent 1000 --judge-per-type 1000 \
        --judged bench/equivalence/judged-local.jsonl --judge-budget-s 3600   # all, over runs

The embedding stage and the lexical baseline run on every pair; the judge (slow on a CPU) on a
stratified subset: ``--judge-equivalent`` equivalent pairs and ``--judge-per-type`` pairs of each
meaning-changing type, drawn with a fixed seed. Every check goes through the real verify service
(and the judge through the real gateway).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.stack import local_services
from services.verify.domain.prompts import JUDGE_PROMPT_VERSION
from shared.clients.verify import VerifyClient
from shared.contracts.verify import CandidateVerdict, VerifyRequest, VerifyStages, VerifyThresholds
from shared.http_client import close_session

REPO = Path(__file__).resolve().parents[2]
PAIRS = REPO.parent / "shared" / "data" / "equivalence" / "gsmplus_pairs_dev.jsonl"
EQUIVALENT_TYPE = "problem understanding"


@dataclass
class Pair:
    id: str
    original: str
    candidate: str
    equivalent: bool
    type: str
    overlap: float | None = None
    numbers_differ: bool = False
    cosine: float | None = None
    p_yes: list[float | None] = field(default_factory=list)
    replies: list[str] = field(default_factory=list)
    judge_error: str | None = None

    def judge_yes(self, threshold: float) -> bool:
        """The stricter order decides; P(YES) where logprobs exist, else the reply."""
        if self.judge_error or not self.replies:
            return False
        for p_yes, reply in zip(self.p_yes, self.replies, strict=True):
            passed = p_yes >= threshold if p_yes is not None else reply.upper().startswith("Y")
            if not passed:
                return False
        return True


def verdict_key(model: str) -> str:
    """Recorded verdicts count only for the same judge model and judge prompt."""
    return f"{model}|{JUDGE_PROMPT_VERSION}"


def load_verdicts(path: Path, model: str) -> dict[str, dict[str, Any]]:
    """Judge verdicts recorded by earlier runs (``--judged``), by pair id."""
    if not path.exists():
        return {}
    wanted = verdict_key(model)
    rows = (json.loads(line) for line in path.read_text().splitlines() if line.strip())
    return {row["id"]: row for row in rows if row["judge"] == wanted and not row["judge_error"]}


def append_verdicts(path: Path, model: str, pairs: Iterable[Pair]) -> None:
    rows = [
        json.dumps(
            {
                "id": pair.id,
                "judge": verdict_key(model),
                "p_yes": pair.p_yes,
                "replies": pair.replies,
                "judge_error": pair.judge_error,
            }
        )
        for pair in pairs
    ]
    with path.open("a") as out:
        out.writelines(row + "\n" for row in rows)


def load_pairs(path: Path) -> list[Pair]:
    pairs = []
    for line in path.read_text().splitlines():
        row = json.loads(line)
        pairs.append(
            Pair(
                row["id"],
                row["original"],
                row["candidate"],
                row["equivalent"],
                row["perturbation_type"],
            )
        )
    return pairs


def stratified(pairs: list[Pair], equivalent: int, per_type: int, seed: int) -> list[Pair]:
    by_type: dict[str, list[Pair]] = defaultdict(list)
    for pair in pairs:
        by_type[pair.type].append(pair)
    rng = random.Random(seed)
    chosen: list[Pair] = []
    for kind, members in sorted(by_type.items()):
        count = equivalent if kind == EQUIVALENT_TYPE else per_type
        chosen.extend(rng.sample(members, min(count, len(members))))
    return chosen


def _grouped(pairs: Iterable[Pair]) -> dict[str, list[Pair]]:
    groups: dict[str, list[Pair]] = defaultdict(list)
    for pair in pairs:
        groups[pair.original].append(pair)
    return groups


async def _verify_groups(
    client: VerifyClient,
    pairs: list[Pair],
    make_request: Callable[[str, list[str]], VerifyRequest],
    record: Callable[[Pair, CandidateVerdict], None],
    concurrency: int,
    budget_s: float | None = None,
    on_finished: Callable[[list[Pair]], None] | None = None,
) -> list[Pair]:
    """Verify the pairs grouped by original; the pairs whose group finished within the budget.

    ``on_finished`` sees each group as soon as it is done, so a run stopped midway keeps them.
    """
    limit = asyncio.Semaphore(concurrency)
    finished: list[Pair] = []
    done = 0
    groups = _grouped(pairs)

    async def one(original: str, members: list[Pair]) -> None:
        nonlocal done
        async with limit:
            response = await client.verify(make_request(original, [p.candidate for p in members]))
        for pair, verdict in zip(members, response.results, strict=True):
            record(pair, verdict)
        finished.extend(members)
        if on_finished is not None:
            on_finished(members)
        done += len(members)
        print(f"  {done}/{len(pairs)} pairs", file=sys.stderr, end="\r")

    tasks = [asyncio.create_task(one(original, members)) for original, members in groups.items()]
    _, pending = await asyncio.wait(tasks, timeout=budget_s)
    for task in pending:
        task.cancel()
    for task in tasks:
        error = None if task.cancelled() else task.exception()
        if error is not None:
            raise error
    print(file=sys.stderr)
    return finished


async def score_cheap_stages(client: VerifyClient, pairs: list[Pair]) -> None:
    """Overlap and cosine of every pair, then (alone, so no other stage decides) numbers."""

    def scores(original: str, candidates: list[str]) -> VerifyRequest:
        return VerifyRequest(
            original=original,
            candidates=candidates,
            stages=VerifyStages(lexical=True, judge=False, semantic="embedding"),
            thresholds=VerifyThresholds(overlap=1.0, embedding=-1.0),
            explain_all=True,
        )

    def record_scores(pair: Pair, verdict: CandidateVerdict) -> None:
        pair.overlap, pair.cosine = verdict.overlap, verdict.semantic

    def numbers(original: str, candidates: list[str]) -> VerifyRequest:
        return VerifyRequest(
            original=original,
            candidates=candidates,
            stages=VerifyStages(lexical=False, numbers=True, judge=False, semantic="off"),
        )

    def record_numbers(pair: Pair, verdict: CandidateVerdict) -> None:
        pair.numbers_differ = verdict.deciding_stage == "numbers"

    await _verify_groups(client, pairs, scores, record_scores, concurrency=2)
    await _verify_groups(client, pairs, numbers, record_numbers, concurrency=2)


async def score_judge(
    client: VerifyClient,
    pairs: list[Pair],
    model: str,
    concurrency: int,
    budget_s: float | None,
    on_finished: Callable[[list[Pair]], None] | None = None,
) -> list[Pair]:
    def request(original: str, candidates: list[str]) -> VerifyRequest:
        return VerifyRequest(
            original=original,
            candidates=candidates,
            stages=VerifyStages(lexical=False, judge=True, semantic="off"),
            thresholds=VerifyThresholds(judge_p_yes=0.0),
            judge_model=model,
            task="math",
        )

    def record(pair: Pair, verdict: CandidateVerdict) -> None:
        votes = verdict.judge_votes or []
        pair.p_yes = [vote.p_yes for vote in votes]
        pair.replies = [vote.reply for vote in votes]
        pair.judge_error = verdict.error

    return await _verify_groups(client, pairs, request, record, concurrency, budget_s, on_finished)


# ----- reporting -----

Rule = Callable[[Pair], bool]  # True: the pair is accepted as equivalent


def rates(pairs: list[Pair], accepts: Rule) -> tuple[float, float, int, int]:
    """Accept rate of the equivalent pairs (or of all, when none is), reject rate of the others."""
    positives = [p for p in pairs if p.equivalent] or pairs
    negatives = [p for p in pairs if not p.equivalent]
    accept = sum(accepts(p) for p in positives) / max(1, len(positives))
    reject = sum(not accepts(p) for p in negatives) / max(1, len(negatives))
    return accept, reject, len(positives), len(negatives)


def table(title: str, pairs: list[Pair], rules: dict[str, Rule]) -> str:
    types = sorted({p.type for p in pairs if not p.equivalent})
    header = ["rule", "n", "accept eq.", "reject non-eq.", *(t[:14] for t in types)]
    lines = [f"\n{title}", " | ".join(header), " | ".join("---" for _ in header)]
    for name, rule in rules.items():
        accept, reject, n_pos, n_neg = rates(pairs, rule)
        per_type = [f"{1 - rates([p for p in pairs if p.type == t], rule)[0]:.0%}" for t in types]
        lines.append(
            " | ".join([name, f"{n_pos}+{n_neg}", f"{accept:.1%}", f"{reject:.1%}", *per_type])
        )
    return "\n".join(lines)


def best_threshold(pairs: list[Pair], score: Callable[[Pair], float], min_accept: float) -> float:
    """The highest threshold that still accepts ``min_accept`` of the equivalent pairs."""
    positives = sorted((score(p) for p in pairs if p.equivalent), reverse=True)
    index = max(0, int(len(positives) * min_accept + 0.999999) - 1)
    return positives[min(index, len(positives) - 1)]


def cosine_at(threshold: float) -> Rule:
    return lambda pair: (pair.cosine or 0.0) >= threshold


def judge_at(threshold: float) -> Rule:
    return lambda pair: pair.judge_yes(threshold)


def numbers_kept(pair: Pair) -> bool:
    return not pair.numbers_differ


def lexically_new(pair: Pair) -> bool:
    return (pair.overlap or 0.0) < 0.8


def all_of(*rules: Rule) -> Rule:
    return lambda pair: all(rule(pair) for rule in rules)


def report(pairs: list[Pair], judged: list[Pair], args: argparse.Namespace) -> str:
    cos_t = args.embedding_threshold
    cos_85 = best_threshold(pairs, lambda p: p.cosine or 0.0, 0.85)
    everything: dict[str, Rule] = {
        "accept all (baseline)": lambda _: True,
        "lexical overlap < 0.8": lexically_new,
        f"embedding cos >= {cos_t}": cosine_at(cos_t),
        f"embedding cos >= {cos_85:.3f} (85% eq. kept)": cosine_at(cos_85),
        "numbers stage (opt-in)": numbers_kept,
        f"numbers + cos >= {cos_t}": all_of(numbers_kept, cosine_at(cos_t)),
    }
    out = [
        f"pairs: {len(pairs)} ({sum(p.equivalent for p in pairs)} equivalent); judged subset: "
        f"{len(judged)} ({sum(p.equivalent for p in judged)} equivalent), judge model "
        f"{args.judge_model!r}, both orders, stricter verdict",
        table("All pairs: cheap stages (reject rate per type)", pairs, everything),
    ]
    if not judged:
        return "\n".join(out)
    rules: dict[str, Rule] = {
        f"embedding cos >= {cos_t}": cosine_at(cos_t),
        "numbers stage (opt-in)": numbers_kept,
    }
    for t in args.p_yes_grid:
        rules[f"judge P(yes) >= {t}"] = judge_at(t)
    for t in args.p_yes_grid:
        for c in args.cos_grid:
            rules[f"judge P(yes) >= {t} + cos >= {c}"] = all_of(judge_at(t), cosine_at(c))
    for t in args.p_yes_grid:
        rules[f"numbers + judge >= {t} + cos >= {cos_t}"] = all_of(
            numbers_kept, judge_at(t), cosine_at(cos_t)
        )
    out.append(table("Judged subset: judge, judge + embedding, + numbers", judged, rules))
    errors = sum(bool(p.judge_error) for p in judged)
    with_p = sum(bool(p.p_yes) and all(v is not None for v in p.p_yes) for p in judged)
    out.append(f"\njudge calls failed: {errors}; pairs with P(yes): {with_p}/{len(judged)}")
    return "\n".join(out)


async def run(args: argparse.Namespace) -> None:
    pairs = load_pairs(Path(args.pairs))
    if args.limit:
        pairs = stratified(pairs, args.limit, args.limit, args.seed)
    judged = stratified(pairs, args.judge_equivalent, args.judge_per_type, args.seed)
    client = VerifyClient(args.verify_url, timeout_s=7200)
    started = time.monotonic()
    print(f"embedding + overlap on {len(pairs)} pairs", file=sys.stderr)
    await score_cheap_stages(client, pairs)
    embedding_s = time.monotonic() - started
    judge_s = 0.0
    fresh: list[Pair] = []
    if judged and not args.no_judge:
        recorded = load_verdicts(Path(args.judged), args.judge_model) if args.judged else {}
        earlier = [pair for pair in judged if pair.id in recorded]
        for pair in earlier:
            pair.p_yes, pair.replies = recorded[pair.id]["p_yes"], recorded[pair.id]["replies"]
        to_judge = [pair for pair in judged if pair.id not in recorded]
        print(f"judge on {len(to_judge)} pairs ({len(earlier)} recorded)", file=sys.stderr)
        started = time.monotonic()

        def record_verdicts(group: list[Pair]) -> None:
            append_verdicts(Path(args.judged), args.judge_model, group)

        if to_judge:
            fresh = await score_judge(
                client,
                to_judge,
                args.judge_model,
                args.concurrency,
                args.judge_budget_s,
                record_verdicts if args.judged else None,
            )
        judge_s = time.monotonic() - started
        judged = earlier + fresh
    else:
        judged = []
    print(report(pairs, judged, args))
    print(
        f"\ntime: embedding+overlap {embedding_s:.1f} s for {len(pairs)} pairs; judge "
        f"{judge_s:.1f} s for {len(fresh)} pairs judged in this run "
        f"({judge_s / max(1, len(fresh)):.2f} s/pair)"
    )
    if args.save:
        lines = [json.dumps(p.__dict__) for p in pairs]
        await asyncio.to_thread(Path(args.save).write_text, "\n".join(lines) + "\n")
    await close_session()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--pairs", default=str(PAIRS))
    parser.add_argument("--verify-url", default=None, help="use running services")
    parser.add_argument("--judge-model", default="local")
    parser.add_argument("--judge-equivalent", type=int, default=40)
    parser.add_argument("--judge-per-type", type=int, default=12)
    parser.add_argument("--no-judge", action="store_true")
    parser.add_argument(
        "--judge-budget-s",
        type=float,
        default=None,
        help="stop judging after this long; report the pairs judged by then",
    )
    parser.add_argument("--concurrency", type=int, default=2, help="verify calls in flight")
    parser.add_argument("--embedding-threshold", type=float, default=VerifyThresholds().embedding)
    parser.add_argument("--p-yes-grid", type=float, nargs="*", default=[0.3, 0.4, 0.5, 0.6])
    parser.add_argument("--cos-grid", type=float, nargs="*", default=[0.8])
    parser.add_argument("--limit", type=int, default=0, help="smoke run: pairs per type")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--save", default=None, help="write the scored pairs as JSON lines")
    parser.add_argument(
        "--judged",
        default=None,
        help="JSON lines of judge verdicts: pairs recorded there (same judge model and prompt "
        "version) are not asked again, and this run's verdicts are appended, so the judge can "
        "cover the whole file over several runs",
    )
    parser.add_argument("--data-dir", default=None, help="gateway data dir (model cache)")
    args = parser.parse_args()
    if args.verify_url:
        asyncio.run(run(args))
        return
    env = {"STEADFAST_LOG_LEVEL": "WARNING"}
    if args.data_dir:
        env["STEADFAST_DATA_DIR"] = args.data_dir
    with local_services(("gateway", "verify"), env) as urls:
        args.verify_url = urls["verify"]
        asyncio.run(run(args))


if __name__ == "__main__":
    main()
