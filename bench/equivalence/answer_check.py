"""The audit's answer check (docs/method.md §3, D23) on the labelled factual pairs: how many
faithful rewordings and how many meaning changes it would remove, at several limits.

    python -m bench.equivalence.answer_check              # recorded verdicts: seconds
    python -m bench.equivalence.answer_check --ask        # asks the judge for missing ones

For each pair of ``factual_pairs.jsonl`` whose source sample has a gold answer (SimpleQA,
TruthfulQA, the demo sample; the hand-written questions have none), the judge is asked with the
verify service's own prompt (``answer-fit-v1``) whether the gold answer is a correct answer to the
original and to the candidate. A candidate is removed when the judge is sure of the answer for
the original (P(YES) >= known) and its P(YES) for the candidate is lower by ``drop`` or more.
Verdicts are recorded in ``answer_fit.jsonl`` per route and prompt version.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from bench.stack import local_services
from steadfast.services.verify.domain.judge import Judge
from steadfast.services.verify.domain.prompts import ANSWER_FIT
from steadfast.shared.clients.gateway import GatewayClient

HERE = Path(__file__).parent
SAMPLES = HERE.parent.parent / "services" / "evaluator" / "samples"
SOURCES = ("simpleqa", "truthfulqa", "demo")
LIMITS = ((0.5, 0.2), (0.5, 0.3), (0.5, 0.4), (0.6, 0.3), (0.7, 0.3))


@dataclass
class Pair:
    id: str
    original: str
    candidate: str
    equivalent: bool
    kind: str
    gold: str
    p_original: float | None = None
    p_candidate: float | None = None


def gold_answers() -> dict[tuple[str, str], str]:
    """The best gold answer of every bundled sample item, by (source, id)."""
    found = {}
    for source in SOURCES:
        for line in (SAMPLES / f"{source}.jsonl").read_text().splitlines():
            item = json.loads(line)
            gold = item.get("answer") or (item.get("answers") or [None])[0]
            if gold:
                found[source, item["id"]] = gold
    return found


def load_pairs(path: Path) -> list[Pair]:
    golds = gold_answers()
    pairs = []
    for line in path.read_text().splitlines():
        row = json.loads(line)
        gold = golds.get((row["source"], row["source_id"]))
        if gold:
            pairs.append(
                Pair(
                    row["id"],
                    row["original"],
                    row["candidate"],
                    row["equivalent"],
                    row["kind"],
                    gold,
                )
            )
    return pairs


def recorded(path: Path, key: str) -> dict[tuple[str, str], float]:
    if not path.exists():
        return {}
    rows = (json.loads(line) for line in path.read_text().splitlines() if line.strip())
    return {(r["question"], r["answer"]): r["p_yes"] for r in rows if r["key"] == key}


async def ask_missing(args: argparse.Namespace, asks: set[tuple[str, str]], key: str) -> None:
    judge = Judge(GatewayClient(args.gateway_url, timeout_s=600), args.judge, prompt=ANSWER_FIT)
    meter = judge.meter()
    limit = asyncio.Semaphore(args.concurrency)

    async def one(question: str, answer: str) -> None:
        async with limit:
            p_yes = await judge.fits(meter, question, answer, logprobs=True, cache=True)
        row = {"key": key, "question": question, "answer": answer, "p_yes": p_yes}
        await asyncio.to_thread(_append, Path(args.recorded), json.dumps(row) + "\n")

    print(f"asking the judge {len(asks)} questions", file=sys.stderr)
    await asyncio.gather(*(one(question, answer) for question, answer in sorted(asks)))


def _append(path: Path, line: str) -> None:
    with path.open("a") as out:
        out.write(line)


def _removed(group: list[Pair], known: float, drop: float) -> int:
    return sum(_held(p, known, drop) for p in group)


def _held(pair: Pair, known: float, drop: float) -> bool:
    """Whether the check removes the pair's candidate at these limits."""
    assert pair.p_original is not None and pair.p_candidate is not None
    return pair.p_original >= known and pair.p_original - pair.p_candidate >= drop


def table(pairs: list[Pair]) -> str:
    judged = [p for p in pairs if p.p_original is not None and p.p_candidate is not None]
    faithful = [p for p in judged if p.equivalent]
    changes = [p for p in judged if not p.equivalent]
    lines = [
        f"{len(judged)} labelled factual pairs with a gold answer ({len(faithful)} faithful, "
        f"{len(changes)} meaning changes); the judge is sure of the gold for the original "
        f"(P(YES) >= 0.5) on {sum(p.p_original >= 0.5 for p in judged)}",  # type: ignore[operator]
        "",
        "known (original) | drop (candidate lower by) | faithful removed | changes removed",
        "--- | --- | --- | ---",
    ]
    for known, drop in LIMITS:
        lines.append(
            f"{known} | {drop} | {_removed(faithful, known, drop)}/{len(faithful)} | "
            f"{_removed(changes, known, drop)}/{len(changes)}"
        )
    lines += ["", "Removed at the defaults (0.5 / 0.3):"]
    for p in judged:
        if _held(p, 0.5, 0.3):
            label = "faithful" if p.equivalent else p.kind
            lines.append(
                f"- {p.id} ({label}, {p.p_original:.2f} / {p.p_candidate:.2f}): "
                f"{p.original!r} → {p.candidate!r}, answer {p.gold[:60]!r}"
            )
    return "\n".join(lines)


async def run(args: argparse.Namespace) -> None:
    pairs = load_pairs(Path(args.pairs))
    key = f"{args.judge}|{ANSWER_FIT.version}"
    known = recorded(Path(args.recorded), key)
    asks = {(q, p.gold) for p in pairs for q in (p.original, p.candidate)} - set(known)
    if asks and args.ask:
        await ask_missing(args, asks, key)
        known = recorded(Path(args.recorded), key)
    for pair in pairs:
        pair.p_original = known.get((pair.original, pair.gold))
        pair.p_candidate = known.get((pair.candidate, pair.gold))
    print(table(pairs))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--pairs", default=str(HERE / "factual_pairs.jsonl"))
    parser.add_argument("--recorded", default=str(HERE / "answer_fit.jsonl"))
    parser.add_argument("--judge", default="local", help="gateway route of the judge")
    parser.add_argument("--ask", action="store_true", help="ask the judge for missing verdicts")
    parser.add_argument("--gateway-url", default=None, help="a running gateway (else one starts)")
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args()
    if args.ask and not args.gateway_url:
        with local_services(["gateway"]) as urls:
            args.gateway_url = urls["gateway"]
            asyncio.run(run(args))
    else:
        asyncio.run(run(args))


if __name__ == "__main__":
    main()
