"""The stand-in as a bare client sees it: ``n`` chat completions, ``concurrency`` in flight,
from a process of its own on uvloop + aiohttp (as the gateway calls it), no Steadfast between.

    python -m bench.pipeline.bare_client BASE_URL N CONCURRENCY   # prints {"wall_s", "mean_s"}

The pipeline bench uses it as the machine's baseline: what 32 slots of the stand-in deliver
here and now, whatever the latency it was configured with.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time

import aiohttp
import uvloop


async def drive(base_url: str, n: int, concurrency: int) -> dict[str, float]:
    latencies: list[float] = []
    slots = asyncio.Semaphore(concurrency)
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def call(index: int) -> None:
            body = {
                "model": "steady-model",
                "messages": [{"role": "user", "content": f"What is {index} + 1?"}],
            }
            async with slots:
                started = time.perf_counter()
                async with session.post(f"{base_url}/chat/completions", json=body) as response:
                    response.raise_for_status()
                    await response.read()
                latencies.append(time.perf_counter() - started)

        started = time.perf_counter()
        await asyncio.gather(*(call(index) for index in range(n)))
        wall_s = time.perf_counter() - started
    return {"wall_s": wall_s, "mean_s": statistics.mean(latencies)}


def main() -> None:
    base_url, n, concurrency = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    print(json.dumps(uvloop.run(drive(base_url, n, concurrency))))


if __name__ == "__main__":
    main()
