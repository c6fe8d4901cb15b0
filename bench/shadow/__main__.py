"""What shadow checks cost the callers: a burst of plain chat completions through the gateway
with every answer checked (``shadow_rate`` 1) against the same burst with none (0), in one run.

    python -m bench.shadow [--requests 300] [--concurrency 1 8] [--rounds 2] [--latency-ms 20]

The upstream is a stand-in model (``bench/shadow/stand_in.py``) that answers after
``--latency-ms``, writes three paraphrases when asked, and answers them alike, so every check
does its whole work (one paraphrase call, three answers, the comparison). Each request asks a
different question (no response-cache hit). The gateway is started afresh per setting and round,
on its own core; the rounds alternate the settings. The table shows each setting's median p50
and p90 over the rounds, the p50 added by the checks, and what the checks did.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

from bench.gateway.__main__ import LOAD_CORE, PROXY_CORE, free_port, process

OUTCOMES = ("agree", "disagree", "no_paraphrase", "dropped", "failed")


@dataclass
class Burst:
    rate: float
    concurrency: int
    latencies: list[float]
    errors: int
    checks: dict[str, float] = field(default_factory=dict)

    def percentile(self, q: float) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


@contextmanager
def stand_in(port: int, latency_ms: float) -> Iterator[int]:
    command = [sys.executable, "-m", "bench.shadow.stand_in", "--port", str(port),
               "--latency-ms", str(latency_ms)]  # fmt: skip
    with process(command, f"http://127.0.0.1:{port}/v1/models", LOAD_CORE) as pid:
        yield pid


@contextmanager
def gateway(port: int, upstream: str, data_dir: Path, rate: float) -> Iterator[int]:
    routes = data_dir / "models.toml"
    routes.write_text(
        f'[models.bench]\nbackend = "openai"\nmodel = "fake-model"\nbase_url = "{upstream}"\n'
        "max_concurrency = 64\n"
    )
    env = {
        **os.environ,
        "STEADFAST_DATA_DIR": str(data_dir),
        "STEADFAST_MODELS_FILE": str(routes),
        "STEADFAST_GATEWAY_SHADOW_RATE": str(rate),
        "STEADFAST_GATEWAY_SHADOW_QUEUE": "1000",
        "STEADFAST_LOG_LEVEL": "WARNING",
    }
    app = "steadfast.services.gateway.app:create_app"
    command = [sys.executable, "-m", "uvicorn", "--factory", app,
               "--host", "127.0.0.1", "--port", str(port), "--no-access-log"]  # fmt: skip
    with process(command, f"http://127.0.0.1:{port}/readyz", PROXY_CORE, env=env) as pid:
        yield pid


async def burst(url: str, requests: int, concurrency: int, offset: int) -> tuple[list[float], int]:
    """``requests`` completions, ``concurrency`` at a time, each a question of its own."""
    latencies: list[float] = []
    errors = 0
    numbers = iter(range(offset, offset + requests))
    async with aiohttp.ClientSession() as session:

        async def client() -> None:
            nonlocal errors
            for number in numbers:
                body = {
                    "model": "bench",
                    "messages": [
                        {"role": "user", "content": f"Question {number}: the capital of France?"}
                    ],
                }
                began = time.perf_counter()
                async with session.post(f"{url}/v1/chat/completions", json=body) as response:
                    await response.read()
                    errors += response.status != 200
                latencies.append(time.perf_counter() - began)

        await asyncio.gather(*(client() for _ in range(concurrency)))
    return latencies, errors


async def shadow_checks(url: str, expected: int, timeout_s: float = 120.0) -> dict[str, float]:
    """The checks' outcomes once ``expected`` have ended (or the timeout passed)."""
    deadline = time.monotonic() + timeout_s
    counts: dict[str, float] = {}
    async with aiohttp.ClientSession() as session:
        while time.monotonic() < deadline:
            async with session.get(f"{url}/metrics") as response:
                text = await response.text()
            counts = {
                sample.labels["outcome"]: sample.value
                for family in text_string_to_metric_families(text)
                for sample in family.samples
                if sample.name == "steadfast_shadow_checks_total"
            }
            if sum(counts.values()) >= expected:
                break
            await asyncio.sleep(0.2)
    return counts


def run(args: argparse.Namespace) -> list[Burst]:
    bursts: list[Burst] = []
    upstream_port = free_port()
    with stand_in(upstream_port, args.latency_ms):
        upstream = f"http://127.0.0.1:{upstream_port}/v1"
        for round_number in range(args.rounds):
            for rate in (0.0, 1.0):
                with tempfile.TemporaryDirectory() as scratch:
                    port = free_port()
                    with gateway(port, upstream, Path(scratch), rate):
                        url = f"http://127.0.0.1:{port}"
                        asyncio.run(burst(url, 20, 4, 10**6))  # warm-up, not measured
                        for concurrency in args.concurrency:
                            offset = (round_number * 10 + concurrency) * 10**4
                            latencies, errors = asyncio.run(
                                burst(url, args.requests, concurrency, offset)
                            )
                            bursts.append(Burst(rate, concurrency, latencies, errors))
                            p50 = bursts[-1].percentile(0.5)
                            print(f"  round {round_number + 1} rate {rate:g} c={concurrency}: "
                                  f"p50 {p50:.2f} ms", flush=True)  # fmt: skip
                        expected = 20 + args.requests * len(args.concurrency) if rate else 0
                        checks = asyncio.run(shadow_checks(url, expected)) if rate else {}
                        for measured in bursts[-len(args.concurrency) :]:
                            measured.checks = checks
    return bursts


def print_table(bursts: list[Burst], requests: int) -> None:
    print()
    print(f"{'shadow_rate':>11}{'conc':>6}{'requests':>10}{'errors':>8}"
          f"{'p50 ms':>9}{'p90 ms':>9}{'added p50 ms':>14}")  # fmt: skip
    medians: dict[tuple[float, int], float] = {}
    for rate in (0.0, 1.0):
        for concurrency in sorted({b.concurrency for b in bursts}):
            cell = [b for b in bursts if b.rate == rate and b.concurrency == concurrency]
            p50 = statistics.median(b.percentile(0.5) for b in cell)
            p90 = statistics.median(b.percentile(0.9) for b in cell)
            medians[rate, concurrency] = p50
            added = p50 - medians[0.0, concurrency] if rate else 0.0
            print(f"{rate:>11g}{concurrency:>6}{sum(len(b.latencies) for b in cell):>10}"
                  f"{sum(b.errors for b in cell):>8}{p50:>9.2f}{p90:>9.2f}"
                  f"{added:>14.2f}")  # fmt: skip
    print()
    checked = [b for b in bursts if b.rate == 1.0]
    seen: list[dict[str, float]] = []
    for b in checked:
        if b.checks not in seen:
            seen.append(b.checks)
    totals = {outcome: sum(c.get(outcome, 0) for c in seen) for outcome in OUTCOMES}
    done = ", ".join(f"{outcome} {int(n)}" for outcome, n in totals.items())
    print(f"checks run at shadow_rate 1 (warm-ups included): {int(sum(totals.values()))}: {done}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--latency-ms", type=float, default=20.0)
    args = parser.parse_args()
    print_table(run(args), args.requests)


if __name__ == "__main__":
    main()
