"""Verification on labelled question pairs: how many faithful rewordings each stage (and the
whole default pipeline) accepts, and how many meaning changes it rejects, on the maths pairs
(GSM-Plus dev) and the factual pairs, separately.

    python -m bench.equivalence                      # starts gateway + verify; both data sets
    python -m bench.equivalence --datasets factual --limit 40
    python -m bench.equivalence --verify-url http://127.0.0.1:8003 --gateway-url http://127.0.0.1:8001

Every check goes through the real verify service, the judge through the real gateway: both of
its questions (verify's equivalence question and the audit's), in both orders, the mean P(YES)
compared with a threshold. Judge verdicts are recorded per pair, judge model and prompt version
(``--judged``), so a run asks only for the pairs not recorded yet.

"At the defaults" is what a user gets with nothing set: lexical overlap < 0.8, quantity
invariance, embedding cosine >= 0.80, and the judge's mean P(YES) at the route's threshold as the
gateway reports it (its calibration, else METHOD's 0.5). "Meaning stages" leaves the lexical
filter out: it rejects near-copies, which most GSM-Plus meaning changes are, so it would hide what
the semantic checks do. The audit's check (docs/method.md §1.4) is measured on the pairs the
defaults accept, which is what it re-checks in a run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import random
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from bench.stack import local_services
from steadfast.shared.clients.gateway import GatewayClient
from steadfast.shared.clients.verify import VerifyClient
from steadfast.shared.contracts.base import Task
from steadfast.shared.contracts.calibration import JudgeThreshold
from steadfast.shared.contracts.verify import (
    CandidateVerdict,
    VerifyRequest,
    VerifyStages,
    VerifyThresholds,
)
from steadfast.shared.http_client import close_session
from steadfast.shared.lexical import overlap

HERE = Path(__file__).resolve().parent
DATASETS = {
    "gsmplus": HERE / "gsmplus_pairs_dev.jsonl",
    "factual": HERE / "factual_pairs.jsonl",
    # meaning changes of GSM-Plus problems that keep every number (MATH_CHANGES.md)
    "mathkept": HERE / "math_changes.jsonl",
    # 30 more of them, written after the checks they measure, from other originals
    "mathkept-heldout": HERE / "math_changes_heldout.jsonl",
    # 40 GSM8K problems, each with a faithful rewording and a numbers-kept change, written by
    # a writer who saw neither the checks nor the sets above, after every check (MATH_CHANGES.md)
    "math-heldout2": HERE / "math_pairs_heldout.jsonl",
    # 40 more, written the same way on 2026-12-06 after the checks of the seventeenth session
    "math-heldout3": HERE / "math_pairs_heldout3.jsonl",
    # SQuAD-it questions reworded in Italian (ITALIAN_PAIRS.md): the judge's threshold was
    # calibrated on English pairs only
    "italian": HERE / "italian_pairs.jsonl",
}
#: the task each data set's questions are (the judge's threshold may be calibrated per task)
TASKS: dict[str, Task] = {
    "gsmplus": "math",
    "factual": "factual",
    "mathkept": "math",
    "mathkept-heldout": "math",
    "math-heldout2": "math",
    "math-heldout3": "math",
    "italian": "factual",
}
RECORDED = HERE / "judged.jsonl"
#: the pairs the bundled judge calibrations were chosen on (the rest are held out)
CALIBRATION_PAIRS = HERE.parents[1] / "steadfast" / "calibration_pairs.jsonl"
GSMPLUS_EQUIVALENT = "problem understanding"
EMBEDDING = VerifyThresholds().embedding
OVERLAP = VerifyThresholds().overlap


@dataclass
class Pair:
    id: str
    dataset: str
    original: str
    candidate: str
    equivalent: bool
    kind: str
    overlap: float = 0.0
    cosine: float = 0.0
    numbers_differ: bool = False
    statement: bool = False
    turned: bool = False
    judge: float | None = None
    audit: float | None = None
    votes: dict[str, list[float | None]] = field(default_factory=dict)
    judge_error: str | None = None


def load(dataset: str, path: Path) -> list[Pair]:
    pairs = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        kind = row.get("kind") or row.get("perturbation_type") or ""
        pairs.append(
            Pair(row["id"], dataset, row["original"], row["candidate"], row["equivalent"], kind)
        )
    return pairs


def calibration_ids() -> set[str]:
    if not CALIBRATION_PAIRS.exists():
        return set()
    rows = (json.loads(line) for line in CALIBRATION_PAIRS.read_text().splitlines() if line)
    return {row["id"] for row in rows}


def sample(pairs: list[Pair], per_label: int, seed: int) -> list[Pair]:
    """``per_label`` pairs of each label, drawn with a fixed seed (0: all)."""
    if not per_label:
        return pairs
    rng = random.Random(seed)
    chosen: list[Pair] = []
    for label in (True, False):
        members = [p for p in pairs if p.equivalent is label]
        chosen += rng.sample(members, min(per_label, len(members)))
    return chosen


# ---- running the checks ------------------------------------------------------------------------


async def _per_original(
    client: VerifyClient,
    pairs: list[Pair],
    request: Callable[[str, list[str]], VerifyRequest],
    record: Callable[[Pair, CandidateVerdict], None],
    concurrency: int,
    budget_s: float | None = None,
    on_done: Callable[[list[Pair]], None] | None = None,
) -> list[Pair]:
    """Verify the pairs grouped by original; the pairs whose group finished within the budget."""
    groups: dict[str, list[Pair]] = defaultdict(list)
    for pair in pairs:
        groups[pair.original].append(pair)
    limit = asyncio.Semaphore(concurrency)
    finished: list[Pair] = []

    async def one(original: str, members: list[Pair]) -> None:
        async with limit:
            response = await client.verify(request(original, [p.candidate for p in members]))
        for pair, verdict in zip(members, response.results, strict=True):
            record(pair, verdict)
        finished.extend(members)
        if on_done is not None:
            on_done(members)
        print(f"  {len(finished)}/{len(pairs)} pairs", file=sys.stderr, end="\r")

    tasks = [asyncio.create_task(one(o, m)) for o, m in groups.items()]
    _, pending = await asyncio.wait(tasks, timeout=budget_s)
    for task in pending:
        task.cancel()
    # a cancelled task is done only once it has run its cancellation
    await asyncio.gather(*pending, return_exceptions=True)
    for task in tasks:
        if not task.cancelled() and task.exception() is not None:
            raise task.exception()  # type: ignore[misc]
    print(file=sys.stderr)
    return finished


async def cheap_stages(client: VerifyClient, pairs: list[Pair]) -> None:
    def scores(original: str, candidates: list[str]) -> VerifyRequest:
        return VerifyRequest(
            original=original,
            candidates=candidates,
            # the lexical stage would decide a change that only moves words round (overlap 1.0)
            # before the numbers stage could: the overlap is measured here instead
            stages=VerifyStages(
                form=True,
                direction=True,
                lexical=False,
                numbers=True,
                judge=False,
                semantic="embedding",
            ),
            thresholds=VerifyThresholds(embedding=-1.0),
            explain_all=True,
        )

    def record(pair: Pair, verdict: CandidateVerdict) -> None:
        pair.overlap, pair.cosine = overlap(pair.original, pair.candidate), verdict.semantic or 0.0
        pair.statement = verdict.deciding_stage == "form"
        pair.turned = verdict.deciding_stage == "direction"
        pair.numbers_differ = verdict.deciding_stage == "numbers"

    await _per_original(client, pairs, scores, record, concurrency=2)


def judge_key(model: str, versions: tuple[str, str]) -> str:
    return f"{model}|{versions[0]}|{versions[1]}"


def load_recorded(path: Path, key: str) -> dict[str, dict[str, object]]:
    if not path.exists():
        return {}
    rows = (json.loads(line) for line in path.read_text().splitlines() if line.strip())
    return {row["id"]: row for row in rows if row.get("key") == key and not row.get("error")}


async def judge(
    client: VerifyClient,
    pairs: list[Pair],
    model: str,
    recorded_path: Path,
    versions: tuple[str, str],
    concurrency: int,
    budget_s: float | None,
) -> tuple[list[Pair], int]:
    """Both judge questions' mean P(YES) for every pair (recorded ones read back); the pairs
    judged, and how many were asked in this run."""
    key = judge_key(model, versions)
    recorded = load_recorded(recorded_path, key)
    for pair in pairs:
        row = recorded.get(f"{pair.dataset}:{pair.id}")
        if row is not None:
            pair.judge, pair.audit = row["judge"], row["audit"]  # type: ignore[assignment]
    to_ask = [p for p in pairs if f"{p.dataset}:{p.id}" not in recorded]

    def request(original: str, candidates: list[str]) -> VerifyRequest:
        return VerifyRequest(
            original=original,
            candidates=candidates,
            stages=VerifyStages(
                direction=False, lexical=False, numbers=False, judge=True, semantic="off"
            ),
            thresholds=VerifyThresholds(judge_p_yes=0.0, audit_p_yes=0.0),
            judge_model=model,
            audit=True,
            explain_all=True,
        )

    def record(pair: Pair, verdict: CandidateVerdict) -> None:
        pair.judge, pair.audit, pair.judge_error = (
            verdict.judge_p_yes,
            verdict.audit_p_yes,
            verdict.error,
        )
        pair.votes = {
            "judge": [v.p_yes for v in verdict.judge_votes or []],
            "audit": [v.p_yes for v in verdict.audit_votes or []],
        }

    def append(group: list[Pair]) -> None:
        with recorded_path.open("a") as out:
            for pair in group:
                row = {
                    "id": f"{pair.dataset}:{pair.id}",
                    "key": key,
                    "judge": pair.judge,
                    "audit": pair.audit,
                    "judge_votes": pair.votes.get("judge"),
                    "audit_votes": pair.votes.get("audit"),
                    "error": pair.judge_error,
                }
                out.write(json.dumps(row) + "\n")

    print(f"judge on {len(to_ask)} pairs ({len(pairs) - len(to_ask)} recorded)", file=sys.stderr)
    if to_ask:
        await _per_original(client, to_ask, request, record, concurrency, budget_s, append)
    judged = [p for p in pairs if p.judge is not None and p.audit is not None]
    return judged, len(to_ask)


# ---- reporting -----------------------------------------------------------------------------------

Rule = Callable[[Pair], bool]  # True: accepted as equivalent


def numbers_kept(pair: Pair) -> bool:
    """Quantity invariance, and (run before it) the form and direction checks."""
    return not pair.numbers_differ and not pair.statement and not pair.turned


def lexically_new(pair: Pair) -> bool:
    return pair.overlap < OVERLAP


def cosine_ok(pair: Pair) -> bool:
    return pair.cosine >= EMBEDDING


def judge_at(threshold: float) -> Rule:
    return lambda pair: pair.judge is not None and pair.judge >= threshold


def audit_at(threshold: float) -> Rule:
    return lambda pair: pair.audit is not None and pair.audit >= threshold


def all_of(*rules: Rule) -> Rule:
    return lambda pair: all(rule(pair) for rule in rules)


def counts(pairs: Iterable[Pair], accepts: Rule) -> tuple[int, int, int, int]:
    """Equivalent pairs accepted and in all; other pairs rejected and in all."""
    listed = list(pairs)
    positives = [p for p in listed if p.equivalent]
    negatives = [p for p in listed if not p.equivalent]
    return (
        sum(accepts(p) for p in positives),
        len(positives),
        sum(not accepts(p) for p in negatives),
        len(negatives),
    )


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole} ({part / whole:.1%})" if whole else "–"


def table(title: str, pairs: list[Pair], rules: dict[str, Rule]) -> str:
    lines = [
        f"\n{title}",
        "rule | equivalent accepted | meaning changes rejected",
        "--- | --- | ---",
    ]
    for name, rule in rules.items():
        accepted, positives, rejected, negatives = counts(pairs, rule)
        lines.append(f"{name} | {_share(accepted, positives)} | {_share(rejected, negatives)}")
    return "\n".join(lines)


def by_kind(title: str, pairs: list[Pair], rule: Rule) -> str:
    kinds: dict[str, list[Pair]] = defaultdict(list)
    for pair in pairs:
        kinds[pair.kind].append(pair)
    lines = [f"\n{title}", "kind | label | pairs | passed the rule", "--- | --- | --- | ---"]
    for kind, members in sorted(
        kinds.items(), key=lambda item: (not item[1][0].equivalent, item[0])
    ):
        label = "equivalent" if members[0].equivalent else "meaning change"
        passed = sum(rule(p) for p in members)
        lines.append(f"{kind} | {label} | {len(members)} | {_share(passed, len(members))}")
    return "\n".join(lines)


@dataclass(frozen=True)
class Thresholds:
    judge: JudgeThreshold
    audit: JudgeThreshold


def defaults(thresholds: Thresholds) -> Rule:
    return all_of(lexically_new, numbers_kept, cosine_ok, judge_at(thresholds.judge.value))


def meaning_stages(thresholds: Thresholds) -> Rule:
    return all_of(numbers_kept, cosine_ok, judge_at(thresholds.judge.value))


def audit_check(thresholds: Thresholds) -> Rule:
    return all_of(numbers_kept, judge_at(thresholds.judge.value), audit_at(thresholds.audit.value))


def report(
    dataset: str,
    pairs: list[Pair],
    judged: list[Pair],
    thresholds: Thresholds,
    grid: list[float],
    held_out: set[str] | None,
) -> str:
    t_judge, t_audit = thresholds.judge.value, thresholds.audit.value
    out = [
        f"\n## {dataset}: {len(pairs)} pairs ({sum(p.equivalent for p in pairs)} equivalent), "
        f"judged {len(judged)}",
        f"judge threshold {t_judge:.2f} ({thresholds.judge.source}: {thresholds.judge.origin}); "
        f"audit question {t_audit:.2f} ({thresholds.audit.source})",
        table(
            "Cheap stages, every pair",
            pairs,
            {
                f"lexical overlap < {OVERLAP}": lexically_new,
                "form, direction and quantity invariance": numbers_kept,
                f"embedding cosine >= {EMBEDDING}": cosine_ok,
            },
        ),
    ]
    if not judged:
        return "\n".join(out)
    rules: dict[str, Rule] = {
        f"**defaults** (form, lexical, numbers, cosine, judge >= {t_judge:.2f})": defaults(
            thresholds
        ),
        f"meaning stages (form, numbers, cosine, judge >= {t_judge:.2f})": meaning_stages(
            thresholds
        ),
        f"judge alone >= {t_judge:.2f}": judge_at(t_judge),
        f"audit check (numbers, judge >= {t_judge:.2f}, audit >= {t_audit:.2f})": audit_check(
            thresholds
        ),
    }
    for t in grid:
        rules[f"numbers + cosine + judge >= {t:.2f}"] = all_of(numbers_kept, cosine_ok, judge_at(t))
    for t in grid:
        rules[f"audit question alone >= {t:.2f}"] = audit_at(t)
    out.append(table("Judged pairs", judged, rules))
    if held_out is not None:
        unseen = [p for p in judged if p.id not in held_out]
        out.append(
            table(
                f"Held out: the {len(unseen)} judged pairs the bundled calibration did not see",
                unseen,
                {k: rules[k] for k in list(rules)[:4]},
            )
        )
    accepted = [p for p in judged if defaults(thresholds)(p)]
    removed = [p for p in accepted if not audit_check(thresholds)(p)]
    out.append(
        f"\nThe audit on what the defaults accept: {len(accepted)} pairs accepted "
        f"({sum(not p.equivalent for p in accepted)} of them meaning changes); the audit check "
        f"removes {sum(not p.equivalent for p in removed)} meaning changes and "
        f"{sum(p.equivalent for p in removed)} faithful rewordings."
    )
    out.append(by_kind("Per kind, at the defaults", judged, defaults(thresholds)))
    out.append(passed_changes(accepted))
    out.append(refused_rewordings(judged, thresholds))
    return "\n".join(out)


def listed(title: str, pairs: list[Pair], why: Callable[[Pair], str]) -> str:
    """Pairs in full, each with why it is listed, for a reader to judge."""
    lines = [f"\nThe {len(pairs)} {title}"]
    lines += [f"- {p.id} ({p.kind}, {why(p)}): {p.original!r} → {p.candidate!r}" for p in pairs]
    return "\n".join(lines)


def passed_changes(accepted: list[Pair]) -> str:
    """Every meaning change the defaults accept."""
    changes = [p for p in accepted if not p.equivalent]
    return listed(
        "meaning changes the defaults accept", changes, lambda p: f"judge {p.judge or 0:.2f}"
    )


def refusing_stage(pair: Pair, thresholds: Thresholds) -> str:
    """The first default stage that refuses the pair, as verify runs them."""
    if pair.statement:
        return "form"
    if pair.turned:
        return "direction"
    if not lexically_new(pair):
        return f"lexical {pair.overlap:.2f}"
    if pair.numbers_differ:
        return "numbers"
    if not cosine_ok(pair):
        return f"cosine {math.floor(pair.cosine * 1000) / 1000:.3f} < {EMBEDDING}"  # not rounded up
    return f"judge {pair.judge or 0:.2f} < {thresholds.judge.value:.2f}"


def refused_rewordings(judged: list[Pair], thresholds: Thresholds) -> str:
    """Every faithful rewording the defaults refuse, with the stage that refused it."""
    refused = [p for p in judged if p.equivalent and not defaults(thresholds)(p)]
    return listed(
        "faithful rewordings the defaults refuse",
        refused,
        lambda p: refusing_stage(p, thresholds),
    )


async def thresholds_of(
    gateway: GatewayClient, model: str, versions: tuple[str, str], task: Task
) -> Thresholds:
    judge_threshold = await gateway.judge_threshold(model, versions[0], task)
    audit_threshold = await gateway.judge_threshold(model, versions[1], task)
    return Thresholds(judge_threshold, audit_threshold)


async def prompt_versions(client: VerifyClient, model: str) -> tuple[str, str]:
    """The versions of the judge's two questions the running verify service asks."""
    response = await client.verify(
        VerifyRequest(
            original="How old is Ann?",
            candidates=["What is Ann's age?"],
            stages=VerifyStages(
                direction=False, lexical=False, numbers=False, judge=True, semantic="off"
            ),
            thresholds=VerifyThresholds(judge_p_yes=0.0, audit_p_yes=0.0),
            judge_model=model,
            audit=True,
        )
    )
    if not response.judge_prompt_version or not response.audit_prompt_version:
        reason = response.results[0].reason if response.results else "no result"
        raise SystemExit(f"the judge {model!r} did not answer a probe pair: {reason}")
    return response.judge_prompt_version, response.audit_prompt_version


async def run(args: argparse.Namespace) -> None:
    client = VerifyClient(args.verify_url, timeout_s=7200)
    gateway = GatewayClient(args.gateway_url)
    versions = await prompt_versions(client, args.judge_model)
    held_out = calibration_ids()
    sections = []
    for dataset in args.datasets:
        thresholds = await thresholds_of(gateway, args.judge_model, versions, TASKS[dataset])
        pairs = sample(load(dataset, DATASETS[dataset]), args.limit, args.seed)
        started = time.monotonic()
        print(f"{dataset}: cheap stages on {len(pairs)} pairs", file=sys.stderr)
        await cheap_stages(client, pairs)
        cheap_s = time.monotonic() - started
        judged, asked = [], 0
        if not args.no_judge:
            started = time.monotonic()
            judged, asked = await judge(
                client,
                pairs,
                args.judge_model,
                Path(args.judged),
                versions,
                args.concurrency,
                args.budget_s,
            )
            judge_s = time.monotonic() - started
        seen = {i.split(":", 1)[1] for i in held_out if i.startswith(f"{dataset}:")}
        section = report(dataset, pairs, judged, thresholds, args.grid, seen if held_out else None)
        timing = f"\ntime: cheap stages {cheap_s:.0f} s for {len(pairs)} pairs"
        if asked:
            timing += f"; judge {judge_s:.0f} s for {asked} pairs ({judge_s / asked:.1f} s/pair)"
        sections.append(section + timing)
    print(f"judge {args.judge_model!r}, prompts {versions[0]} and {versions[1]}, both orders")
    print("\n".join(sections))
    await close_session()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument(
        "--datasets",
        nargs="+",
        choices=sorted(DATASETS),
        default=list(DATASETS),
    )
    parser.add_argument("--verify-url", default=None, help="use running services")
    parser.add_argument("--gateway-url", default=None)
    parser.add_argument("--judge-model", default="local")
    parser.add_argument(
        "--limit", type=int, default=0, help="pairs per label and data set (0: all)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-judge", action="store_true")
    parser.add_argument("--budget-s", type=float, default=None, help="stop judging after this long")
    parser.add_argument("--concurrency", type=int, default=2, help="verify calls in flight")
    parser.add_argument("--grid", type=float, nargs="*", default=[0.3, 0.4, 0.5, 0.6, 0.7])
    parser.add_argument(
        "--judged", default=str(RECORDED), help="recorded judge verdicts (JSON lines)"
    )
    parser.add_argument("--data-dir", default=None, help="gateway data dir (model cache)")
    args = parser.parse_args()
    if args.verify_url:
        args.gateway_url = args.gateway_url or args.verify_url.rsplit(":", 1)[0] + ":8001"
        asyncio.run(run(args))
        return
    env = {"STEADFAST_LOG_LEVEL": "WARNING"}
    if args.data_dir:
        env["STEADFAST_DATA_DIR"] = args.data_dir
    with local_services(("gateway", "verify"), env) as urls:
        args.verify_url, args.gateway_url = urls["verify"], urls["gateway"]
        asyncio.run(run(args))


if __name__ == "__main__":
    main()
