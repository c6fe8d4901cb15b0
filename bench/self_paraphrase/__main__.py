"""Which self-paraphrase strategy buys how much reliability for how much cost (docs/method.md §1.5).

    python -m bench.self_paraphrase                      # 10 GSM8K + 10 SimpleQA items, local-small
    python -m bench.self_paraphrase --model local --math 20 --factual 20 --k 5 --flip-k 5
    # the asked size on a small CPU, over as many runs as it takes (both records are kept:
    # recorded-local.jsonl and recorded-local-flips.jsonl beside it)
    python -m bench.self_paraphrase --model local --math 100 --factual 100 --k 5 --flip-k 5 \
        --chunk 2 --concurrency 4 --state-dir /tmp/sp-state \
        --record bench/self_paraphrase/recorded-local.jsonl
    # the table of what is recorded so far (no model calls)
    python -m bench.self_paraphrase --model local --math 100 --factual 100 --k 5 --flip-k 5 \
        --report --record bench/self_paraphrase/recorded-local.jsonl

Starts the whole stack (gateway, perturb, verify, scoring, evaluator; a fresh response cache,
the local model files reused from the default data directory). Each item of the bundled GSM8K
and SimpleQA samples is answered by a plain single call (the baseline) and by every strategy
through ``POST /v1/self-paraphrase``, every call made with the cache off so each strategy pays
for its own calls; the answers are graded by scoring's reference grader, and one table is printed
per dataset and strategy: accuracy, flip rate, model calls, latency and tokens per request.

Flip rate (``--flip-k K``, 0 to skip) comes from the evaluator, which evaluates a strategy like
any model, chunk by chunk after the accuracy part: see ``flips.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bench.self_paraphrase import flips
from bench.self_paraphrase.flips import (
    CURRENT_SET_RULE,
    SET_RULES,
    Consistency,
    FlipRecord,
    FlipSettings,
    Rate,
)
from bench.self_paraphrase.items import PLAIN, STRATEGIES, Item, load_items, prompts_part
from bench.stack import local_services
from steadfast.client import AsyncClient
from steadfast.services.evaluator.domain.prompts import INSTRUCTIONS
from steadfast.services.gateway.domain.routes import BUILTIN_ROUTES
from steadfast.services.scoring.domain.bootstrap import model_rng, ratio_intervals
from steadfast.shared.clients.gateway import GatewayClient
from steadfast.shared.clients.scoring import ScoringClient
from steadfast.shared.contracts.base import Task
from steadfast.shared.contracts.gateway import ChatMessage, GenerateRequest
from steadfast.shared.contracts.proxy import (
    SelfParaphraseRequest,
    SelfParaphraseResponse,
    StrategyOptions,
)
from steadfast.shared.contracts.scoring import GradeItem, GradeRequest, Label
from steadfast.shared.http_client import ServiceCallError, ServiceClient, close_session
from steadfast.shared.settings import default_data_dir

#: the whole stack: the evaluator computes the flip rate
SERVICES = ("gateway", "perturb", "verify", "scoring", "evaluator")


@dataclass
class Answer:
    """One request's answer (the text that is graded) and its cost."""

    text: str
    calls: int
    latency_s: float
    tokens: int
    agreement: float | None = None
    item_id: str = ""
    label: Label | None = None
    error: str | None = None


class Record:
    """Graded answers kept across runs (``--record``): an answer recorded under the same model,
    strategy, k and max_tokens is not asked for again, so the full size can be measured over
    several runs. Failed requests are not recorded (a later run retries them)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.answers: dict[str, Answer] = {}
        if path is not None and path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    row = json.loads(line)
                    key = row.pop("key")
                    self.answers[key] = Answer(**row)

    @staticmethod
    def key(bench: Bench, strategy: str, item: Item) -> str:
        """Model, strategy, k, max_tokens and, for a strategy, the version of its prompts."""
        k = 0 if strategy == PLAIN else bench.k
        max_tokens = bench.max_tokens[item.task]
        prompts = prompts_part(strategy)
        return f"{bench.model}|{strategy}|k={k}|max_tokens={max_tokens}{prompts}|{item.id}"

    def add(self, key: str, answer: Answer) -> None:
        if self.path is None or answer.error is not None:
            return
        self.answers[key] = answer
        with self.path.open("a", encoding="utf-8") as out:
            out.write(json.dumps({"key": key, **vars(answer)}, ensure_ascii=False) + "\n")


@dataclass
class Bench:
    model: str
    k: int
    max_tokens: dict[Task, int]
    gateway: GatewayClient
    proxy: ServiceClient
    scoring: ScoringClient
    limit: asyncio.Semaphore
    record: Record = field(default_factory=lambda: Record(None))

    def messages(self, item: Item, wording: str) -> list[ChatMessage]:
        return [
            ChatMessage(role="system", content=INSTRUCTIONS[item.task]),
            ChatMessage(role="user", content=wording),
        ]

    async def answer(self, strategy: str, item: Item, wording: str) -> Answer:
        async with self.limit:
            started = time.perf_counter()
            try:
                if strategy == PLAIN:
                    return await self._plain(item, wording, started)
                return await self._strategy(strategy, item, wording, started)
            except ServiceCallError as failure:
                elapsed = time.perf_counter() - started
                return Answer("", 0, elapsed, 0, label="invalid", error=str(failure))

    async def _plain(self, item: Item, wording: str, started: float) -> Answer:
        request = GenerateRequest(
            model=self.model,
            messages=self.messages(item, wording),
            max_tokens=self.max_tokens[item.task],
            cache=False,
        )
        response = await self.gateway.generate(request)
        tokens = response.usage.input_tokens + response.usage.output_tokens
        return Answer(response.text, 1, time.perf_counter() - started, tokens)

    async def _strategy(self, strategy: str, item: Item, wording: str, started: float) -> Answer:
        request = SelfParaphraseRequest(
            model=self.model,
            messages=self.messages(item, wording),
            strategy=strategy,  # type: ignore[arg-type]
            k=self.k,
            task=item.task,
            max_tokens=self.max_tokens[item.task],
            cache=False,
        )
        response = await self.proxy.post("/v1/self-paraphrase", request, SelfParaphraseResponse)
        tokens = response.usage.input_tokens + response.usage.output_tokens
        graded = response.answer if response.answer is not None else response.text
        elapsed = time.perf_counter() - started
        return Answer(graded, response.calls, elapsed, tokens, agreement=response.agreement)

    async def grade(self, item: Item, answers: list[Answer]) -> None:
        pending = [answer for answer in answers if answer.label is None]
        if not pending:
            return
        request = GradeRequest(
            task=item.task,
            items=[
                GradeItem(question=item.question, answer_text=answer.text, gold=item.gold)
                for answer in pending
            ],
        )
        results = (await self.scoring.grade(request)).results
        for answer, result in zip(pending, results, strict=True):
            answer.label = result.label


@dataclass
class Row:
    dataset: str
    strategy: str
    originals: list[Answer]
    consistency: Consistency | None = None
    #: the items the flip and conflict rates are over (every strategy has them in the record)
    flip_items: int = 0
    #: paraphrases in each of those items' sets
    flip_paraphrases: list[int] = field(default_factory=list)


async def run_strategy(bench: Bench, strategy: str, items: list[Item]) -> Row:
    """Every item's original question answered by ``strategy``."""

    async def one(item: Item) -> Answer:
        key = Record.key(bench, strategy, item)
        recorded = bench.record.answers.get(key)
        if recorded is not None:
            return recorded
        answer = await bench.answer(strategy, item, item.question)
        answer.item_id = item.id
        await bench.grade(item, [answer])
        bench.record.add(key, answer)
        return answer

    originals = await asyncio.gather(*(one(item) for item in items))
    return Row(items[0].dataset, strategy, list(originals))


async def run_chunks(
    bench: Bench, strategies: list[str], datasets: list[list[Item]], chunk: int, started: float
) -> list[Row]:
    """Every strategy on ``chunk`` items of each dataset, then on the next ``chunk``...: a run
    stopped early (or a record, ``--report``) still compares the strategies on the same items
    of every dataset."""
    rows = {
        (items[0].dataset, strategy): Row(items[0].dataset, strategy, [])
        for items in datasets
        for strategy in strategies
    }
    for start in range(0, max(len(items) for items in datasets), chunk):
        for items in datasets:
            part = items[start : start + chunk]
            if not part:
                continue
            for strategy in strategies:
                row = rows[items[0].dataset, strategy]
                row.originals += (await run_strategy(bench, strategy, part)).originals
            print(
                f"  {items[0].dataset}: {start + len(part)} of {len(items)} items, every "
                f"strategy, at {time.perf_counter() - started:.0f} s",
                flush=True,
            )
    return list(rows.values())


def flip_settings(args: argparse.Namespace) -> FlipSettings:
    return FlipSettings(
        route=args.model,
        strategies=tuple(args.strategies),
        flip_k=args.flip_k,
        max_tokens={"math": args.math_tokens, "factual": args.factual_tokens},
        paraphrase_budget_s=args.paraphrase_budget_s,
        sets=SET_RULES[args.flip_sets],
    )


def flip_record_path(args: argparse.Namespace) -> Path | None:
    """``--flip-record``, or beside ``--record``: ``<name>-flips.jsonl``."""
    if args.flip_record:
        return Path(args.flip_record)
    if args.record:
        record = Path(args.record)
        return record.with_name(f"{record.stem}-flips.jsonl")
    return None


def attach_flip_rates(
    rows: list[Row], datasets: list[list[Item]], settings: FlipSettings, record: FlipRecord
) -> None:
    for items in datasets:
        rates, item_count = flips.flip_rates(record, items, settings)
        counts = flips.paraphrase_counts(record, items, settings)
        for row in rows:
            if row.dataset == items[0].dataset:
                row.consistency, row.flip_items = rates.get(row.strategy), item_count
                row.flip_paraphrases = counts


def recorded_rows(args: argparse.Namespace) -> list[Row]:
    """The table's rows from the record alone (``--report``): per dataset, the items every
    strategy has an answer for."""
    record = Record(Path(args.record))
    bench = Bench(
        model=args.model,
        k=args.k,
        max_tokens={"math": args.math_tokens, "factual": args.factual_tokens},
        gateway=None,  # type: ignore[arg-type]
        proxy=None,  # type: ignore[arg-type]
        scoring=None,  # type: ignore[arg-type]
        limit=asyncio.Semaphore(1),
        record=record,
    )
    rows: list[Row] = []
    for dataset, count in (("gsm8k", args.math), ("simpleqa", args.factual)):
        answered = {
            strategy: {
                item.id: record.answers[key]
                for item in load_items(dataset, count)
                if (key := Record.key(bench, strategy, item)) in record.answers
            }
            for strategy in args.strategies
        }
        common = set.intersection(*(set(by_item) for by_item in answered.values()))
        if not common:
            continue
        order = [item.id for item in load_items(dataset, count) if item.id in common]
        for strategy, by_item in answered.items():
            rows.append(Row(dataset, strategy, [by_item[item_id] for item_id in order]))
    if args.flip_k:
        datasets = [load_items("gsm8k", args.math), load_items("simpleqa", args.factual)]
        datasets = [items for items in datasets if items]
        attach_flip_rates(rows, datasets, flip_settings(args), FlipRecord(flip_record_path(args)))
    return rows


#: (strategy's accuracy − the plain call's, 95% interval low, high)
Gain = tuple[float, float, float]


def answered(row: Row) -> list[Answer]:
    """The row's answers whose request did not fail: a failure is counted, not graded (as in
    ``--report``, whose record keeps no failures)."""
    return [answer for answer in row.originals if answer.error is None]


def gains_over_plain(rows: list[Row], resamples: int = 4000) -> dict[tuple[str, str], Gain]:
    """``{(dataset, strategy): gain}``: each strategy's accuracy minus the plain call's on the
    items both answered, with a paired percentile bootstrap interval over those items (the
    scoring service's resampler, seeded per dataset)."""
    gains: dict[tuple[str, str], Gain] = {}
    plain_rows = {row.dataset: row for row in rows if row.strategy == PLAIN}
    for row in rows:
        plain = plain_rows.get(row.dataset)
        if plain is None or row is plain:
            continue
        plain_correct = {a.item_id: a.label == "correct" for a in answered(plain)}
        pairs = [
            float(a.label == "correct") - float(plain_correct[a.item_id])
            for a in answered(row)
            if a.item_id in plain_correct
        ]
        if not pairs:
            continue
        differences = np.array(pairs, dtype=np.float64)[:, None]
        rng = model_rng(0, row.strategy, salt=row.dataset)
        low, high = ratio_intervals(differences, np.ones_like(differences), resamples, rng)
        mean = float(differences.mean())
        gains[row.dataset, row.strategy] = (mean, float(low[0]), float(high[0]))
    return gains


def shown_gain(gain: Gain | None) -> str:
    return "-" if gain is None else f"{gain[0]:+.2f} [{gain[1]:+.2f}, {gain[2]:+.2f}]"


def shown_rate(rate: Rate, items: int) -> str:
    """``0.25 (8/40)``: the rate, its denominator and the items it was measured on."""
    value, n = rate
    return f"{value:.2f} ({n}/{items})" if value is not None else f"null (0/{items})"


def print_table(rows: list[Row], args: argparse.Namespace, wall_s: float | None) -> None:
    header = (
        f"{'dataset':<9} {'strategy':<16} {'n':>3} {'accuracy':>9} {'vs plain [95% CI]':>21} "
        f"{'flip rate':>14} "
        f"{'conflict':>14} "
        f"{'agreement':>9} {'calls/req':>9} {'latency s/req':>13} {'p50 s':>7} "
        f"{'tokens/req':>10} {'errors':>6}"
    )
    print(
        f"\nmodel={args.model} k={args.k} max_tokens={args.math_tokens}/{args.factual_tokens} "
        f"(math/factual) flip_k={args.flip_k} "
        f"concurrency={args.concurrency}  "
        + (f"(wall {wall_s:.0f} s)" if wall_s is not None else f"(from {args.record})")
    )
    print(header)
    print("-" * len(header))
    gains = gains_over_plain(rows)
    ties = "dropped" if flips.CONSISTENCY.drop_majority_ties else "kept, broken towards correct"
    for row in rows:
        answers = answered(row)
        if not answers:
            print(f"{row.dataset:<9} {row.strategy:<16} every request failed")
            continue
        correct = sum(answer.label == "correct" for answer in answers)
        gain = shown_gain(gains.get((row.dataset, row.strategy)))
        flip = conflict = "n/a"
        if row.consistency is not None:
            flip = shown_rate(row.consistency.flip, row.flip_items)
            conflict = shown_rate(row.consistency.conflict, row.flip_items)
        latencies = [answer.latency_s for answer in answers]
        agreements = [a.agreement for a in answers if a.agreement is not None]
        agreement = f"{statistics.mean(agreements):.2f}" if agreements else "-"
        print(
            f"{row.dataset:<9} {row.strategy:<16} {len(answers):>3} "
            f"{correct / len(answers):>9.2f} {gain:>21} {flip:>14} {conflict:>14} {agreement:>9} "
            f"{statistics.mean(a.calls for a in answers):>9.1f} "
            f"{statistics.mean(latencies):>13.1f} {statistics.median(latencies):>7.1f} "
            f"{statistics.mean(a.tokens for a in answers):>10.0f} "
            f"{len(row.originals) - len(answers):>6}"
        )
    print(
        "accuracy: reference grader on the original question, over the n requests that did "
        "not fail (errors: those that did); vs plain: accuracy minus the "
        "plain call's on the same items, 95% paired bootstrap interval over the items; flip "
        "rate (originals correct / items, over the items every strategy has in the flip "
        "record), by the evaluator "
        "(strategies with their default options, k=5): share of the originals correct whose "
        "majority over the paraphrases is not correct; conflict: share of the items whose "
        "paraphrases' answers got different labels (same items); latency is wall time "
        "per request from the client, under the stated concurrency; agreement: the strategy's "
        "consistency score (paraphrase-vote: the majority's share of the variants); majority "
        f"ties {ties}."
    )
    for line in flip_set_lines(rows, args.flip_k):
        print(line)


def flip_set_lines(rows: list[Row], flip_k: int) -> list[str]:
    """Per dataset, how full the flip rate's paraphrase sets are: a set the candidate cap ended
    short of k has fewer paraphrases to flip on."""
    lines = []
    for row in rows:
        counts = row.flip_paraphrases
        if row.strategy != rows[0].strategy or not counts:
            continue
        short = sum(count < flip_k for count in counts)
        lines.append(
            f"{row.dataset} flip-rate sets: {statistics.mean(counts):.1f} paraphrases per item "
            f"(k={flip_k}); {short} of {len(counts)} sets short of k"
        )
    return lines


async def run(
    args: argparse.Namespace, gateway_url: str, scoring_url: str, evaluator_url: str | None
) -> None:
    bench = Bench(
        model=args.model,
        k=args.k,
        max_tokens={"math": args.math_tokens, "factual": args.factual_tokens},
        gateway=GatewayClient(gateway_url, timeout_s=3600),
        proxy=ServiceClient("gateway", gateway_url, timeout_s=3600),
        scoring=ScoringClient(scoring_url),
        limit=asyncio.Semaphore(args.concurrency),
        record=Record(Path(args.record) if args.record else None),
    )
    started = time.perf_counter()
    datasets = [
        items
        for dataset, count in (("gsm8k", args.math), ("simpleqa", args.factual))
        if (items := load_items(dataset, count))
    ]
    rows = await run_chunks(bench, args.strategies, datasets, args.chunk, started)
    if args.flip_k and evaluator_url:
        settings, record = flip_settings(args), FlipRecord(flip_record_path(args))
        async with AsyncClient(evaluator_url, timeout_s=60) as evaluator:
            await flips.measure(
                evaluator,
                datasets,
                settings,
                record,
                args.chunk,
                args.evaluation_timeout_s,
                started,
            )
        attach_flip_rates(rows, datasets, settings, record)
    await close_session()
    print_table(rows, args, time.perf_counter() - started)
    if args.save:
        save(rows, Path(args.save))


def save(rows: list[Row], path: Path) -> None:
    with path.open("w", encoding="utf-8") as out:
        for row in rows:
            for answer in row.originals:
                record = {"dataset": row.dataset, "strategy": row.strategy, **vars(answer)}
                out.write(json.dumps(record, ensure_ascii=False) + "\n")


def routes_file(directory: Path, timeout_s: float, threads: int | None) -> Path:
    """The built-in local routes with a per-call timeout that fits a busy CPU."""
    lines = []
    for name, route in BUILTIN_ROUTES.items():
        lines += [
            f"[models.{name}]",
            f'backend = "{route.backend}"',
            f'model = "{route.model}"',
            f"timeout_s = {timeout_s}",
            f"deadline_s = {timeout_s * 2}",
            *([f"threads = {threads}"] if threads else []),
            "",
        ]
    path = directory / "models.toml"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="local-small", help="gateway route")
    parser.add_argument("--math", type=int, default=10, help="GSM8K items (of 100)")
    parser.add_argument("--factual", type=int, default=10, help="SimpleQA items (of 100)")
    parser.add_argument(
        "--k",
        type=int,
        default=StrategyOptions().k,
        help="paraphrases of paraphrase-vote etc. (default: the strategies' own, as in the flip "
        "rates' evaluations)",
    )
    parser.add_argument(
        "--flip-k", type=int, default=0, help="paraphrases per item for the flip rate (evaluator)"
    )
    parser.add_argument(
        "--flip-sets",
        choices=(*SET_RULES,),
        default=CURRENT_SET_RULE,
        help="the paraphrase sets' rule of the flip records to report: 'plain-target' (with "
        "--report only) shows those recorded before perturb filled a set without toned "
        "paraphrases with plain ones (at most 4 of 5)",
    )
    parser.add_argument(
        "--paraphrase-budget-s",
        type=float,
        default=FlipSettings.paraphrase_budget_s,
        help="paraphrase time per item of the flip-rate evaluations",
    )
    parser.add_argument(
        "--evaluation-timeout-s", type=float, default=7200.0, help="per flip-rate evaluation"
    )
    parser.add_argument("--math-tokens", type=int, default=512, help="max_tokens, maths")
    parser.add_argument("--factual-tokens", type=int, default=128, help="max_tokens, factual")
    parser.add_argument("--save", default=None, help="write every graded answer as JSON lines")
    parser.add_argument(
        "--record",
        default=None,
        help="JSON lines of graded answers kept across runs: recorded answers (same model, "
        "strategy, k, max_tokens) are not asked again, this run's are appended",
    )
    parser.add_argument(
        "--flip-record",
        default=None,
        help="JSON lines of every (item, strategy)'s graded variants from the flip-rate "
        "evaluations, kept across runs (default: beside --record, <name>-flips.jsonl)",
    )
    parser.add_argument(
        "--state-dir",
        default=None,
        help="the services' data directory (databases, response cache) instead of a temporary "
        "one: an interrupted flip-rate evaluation's answers are reused by the next run",
    )
    parser.add_argument(
        "--report",
        action="store_true",
        help="no model calls: print the table of the --record file over the items every "
        "strategy has an answer for",
    )
    parser.add_argument(
        "--chunk", type=int, default=10, help="items answered by every strategy before the next"
    )
    parser.add_argument("--concurrency", type=int, default=2, help="requests in flight")
    parser.add_argument("--strategies", nargs="*", default=list(STRATEGIES), choices=STRATEGIES)
    parser.add_argument(
        "--timeout-s", type=float, default=900.0, help="per-call timeout of the local routes"
    )
    parser.add_argument(
        "--threads", type=int, default=None, help="local model CPU threads (default: cores - 1)"
    )
    parser.add_argument("--gateway-url", default=None, help="use running services instead")
    parser.add_argument("--scoring-url", default=None)
    parser.add_argument("--evaluator-url", default=None, help="needed for --flip-k")
    return parser


def main() -> None:
    parser = argument_parser()
    args = parser.parse_args()
    if args.report:
        if not args.record:
            parser.error("--report prints the table of a --record file: name it")
        print_table(recorded_rows(args), args, None)
        return
    if args.flip_sets != CURRENT_SET_RULE:
        parser.error("--flip-sets other than the current rule only reports: add --report")
    if args.gateway_url and args.scoring_url:
        if args.flip_k and not args.evaluator_url:
            parser.error("--flip-k with running services needs --evaluator-url")
        asyncio.run(run(args, args.gateway_url, args.scoring_url, args.evaluator_url))
        return
    with tempfile.TemporaryDirectory() as directory:
        data = Path(args.state_dir or directory)
        data.mkdir(parents=True, exist_ok=True)
        # the assembled model files are reused; the response cache starts empty (unless kept)
        if not (data / "models").exists():
            shared_models = default_data_dir() / "models"
            shared_models.mkdir(parents=True, exist_ok=True)  # a fresh machine has none yet
            (data / "models").symlink_to(shared_models, target_is_directory=True)
        env = {
            "STEADFAST_DATA_DIR": str(data),
            "STEADFAST_LOG_LEVEL": "WARNING",
            "STEADFAST_MODELS_FILE": str(routes_file(data, args.timeout_s, args.threads)),
            # a strategy answer is several local-model calls: the evaluator waits for them
            "STEADFAST_CALL_TIMEOUT_S": str(args.timeout_s * 4),
            "STEADFAST_EVALUATOR_ANSWER_LANES": str(args.concurrency),
            "STEADFAST_EVALUATOR_ANSWER_BATCH": "4",
            "STEADFAST_EVALUATOR_PARAPHRASE_LANES": str(args.concurrency),
        }
        services = SERVICES if args.flip_k else ("gateway", "scoring")
        with local_services(services, env, log_dir=data / "logs") as urls:
            asyncio.run(run(args, urls["gateway"], urls["scoring"], urls.get("evaluator")))


if __name__ == "__main__":
    main()
