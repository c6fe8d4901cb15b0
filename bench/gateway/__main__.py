"""Gateway overhead and throughput against a zero-latency OpenAI-compatible stand-in, measured in
one run directly, through the gateway (cache off), through its OpenAI-compatible proxy with API
keys off and on (what checking a key adds), and through the LiteLLM proxy; then the local
backend's tokens/s at 1 and 4 concurrent requests.

    python -m bench.gateway [--seconds 3] [--concurrency 1 16 64] [--local-route local-small]
                            [--skip-litellm] [--skip-local]

CPU placement on a 2-core machine: the stand-in and this load generator share core 0; the
gateway, and then LiteLLM, each get core 1 alone (``sched_setaffinity``; ``--no-pin`` leaves
placement to the OS, which gives fairer latencies when other work keeps the cores busy). LiteLLM
(``litellm[proxy]``, one worker, no cache, no database) runs from its own virtualenv
(``$STEADFAST_LITELLM_VENV``, default ``~/.cache/steadfast/litellm-venv``; created with pip on
first use), so it never enters the project's dependencies.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import msgspec

REPO = Path(__file__).resolve().parents[2]
LOAD_CORE, PROXY_CORE = 0, 1
LITELLM_VENV = Path(
    os.environ.get("STEADFAST_LITELLM_VENV", Path.home() / ".cache/steadfast/litellm-venv")
)
QUESTION = [{"role": "user", "content": "What is the capital of France?"}]
LITELLM_KEY = f"sk-{secrets.token_hex(32)}"


@dataclass
class Cell:
    target: str
    concurrency: int
    requests: int
    errors: int
    seconds: float
    latencies: list[float]
    #: CPU seconds the measured server process (tree) used during the cell
    server_cpu_s: float = 0.0

    @property
    def rps(self) -> float:
        return self.requests / self.seconds

    @property
    def cpu_ms_per_request(self) -> float:
        return self.server_cpu_s / max(1, self.requests) * 1000

    def percentile(self, q: float) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


PINNING = True


def pin(pid: int, core: int) -> None:
    if PINNING and hasattr(os, "sched_setaffinity") and (os.cpu_count() or 1) > core:
        os.sched_setaffinity(pid, {core})


def wait_http(
    url: str, timeout_s: float = 120.0, process: subprocess.Popen[bytes] | None = None
) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"process for {url} exited with {process.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"{url} did not come up within {timeout_s} s")


def process_tree_cpu_s(pid: int) -> float:
    """User + system CPU seconds of ``pid`` and its live descendants (Linux /proc)."""
    tick = os.sysconf("SC_CLK_TCK")
    stats: dict[int, tuple[int, float]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            stats[int(entry.name)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / tick)
    family, total, frontier = {pid}, 0.0, [pid]
    while frontier:
        parent = frontier.pop()
        total += stats.get(parent, (0, 0.0))[1]
        children = [child for child, (ppid, _) in stats.items() if ppid == parent]
        family.update(children)
        frontier.extend(children)
    return total


@contextmanager
def process(command: list[str], health_url: str, core: int, **kwargs: object) -> Iterator[int]:
    log_path = Path(tempfile.gettempdir()) / f"bench-gateway-{Path(command[0]).name}-{core}.log"
    with log_path.open("ab") as log:
        child = subprocess.Popen(command, stdout=log, stderr=log, cwd=REPO, **kwargs)  # type: ignore[call-overload]
    try:
        pin(child.pid, core)
        wait_http(health_url, process=child)
        yield child.pid
    finally:
        child.terminate()
        try:
            child.wait(10)
        except subprocess.TimeoutExpired:
            child.kill()


def stand_in(port: int) -> AbstractContextManager[int]:
    command = [sys.executable, "-m", "tests.fakes.openai_server", "--port", str(port)]
    return process(command, f"http://127.0.0.1:{port}/v1/models", LOAD_CORE)


def gateway(
    port: int, upstream: str, data_dir: Path, extra_env: dict[str, str] | None = None
) -> AbstractContextManager[int]:
    data_dir.mkdir(parents=True, exist_ok=True)
    routes = data_dir / "models.toml"
    routes.write_text(
        f'[models.bench]\nbackend = "openai"\nmodel = "fake-model"\nbase_url = "{upstream}"\n'
        "max_concurrency = 512\n"
    )
    env = {
        **os.environ,
        "STEADFAST_DATA_DIR": str(data_dir),
        "STEADFAST_MODELS_FILE": str(routes),
        "STEADFAST_GATEWAY_PORT": str(port),
        **(extra_env or {}),
    }
    app = "steadfast.services.gateway.app:create_app"
    command = [sys.executable, "-m", "uvicorn", "--factory", app,
               "--host", "127.0.0.1", "--port", str(port), "--no-access-log"]  # fmt: skip
    return process(command, f"http://127.0.0.1:{port}/readyz", PROXY_CORE, env=env)


#: limits the bench never reaches, so that checking them is measured with the key
KEY_LIMITS = ["--rpm", "1000000", "--token-budget", str(10**12), "--budget-period", "day"]


def api_key(data_dir: Path) -> str:
    """A key of the one key store, made as an operator makes it (``steadfast keys create``),
    with limits (requests per minute, a token budget) it never reaches."""
    env = {**os.environ, "STEADFAST_DATA_DIR": str(data_dir)}
    env.pop("DATABASE_URL", None)
    command = [sys.executable, "-m", "steadfast.cli", "keys", "create", "bench", *KEY_LIMITS]
    created = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    return created.stdout.splitlines()[1]


def keyed_proxy(work: Path, upstream: str, args: argparse.Namespace) -> list[Cell]:
    """The proxy with API keys on (``STEADFAST_GATEWAY_AUTH=keys``), a key in every request."""
    data_dir = work / "keyed"
    data_dir.mkdir()
    key = api_key(data_dir)
    env = {"STEADFAST_GATEWAY_AUTH": "keys", "STEADFAST_INTERNAL_TOKEN": secrets.token_hex(16)}
    port = free_port()
    with gateway(port, upstream, data_dir, env) as pid:
        print("proxy, keys on", flush=True)
        url = f"http://127.0.0.1:{port}/v1/chat/completions"
        body = {"model": "bench", "messages": QUESTION}
        auth = {"Authorization": f"Bearer {key}"}
        return measure("proxy+key", url, body, args.concurrency, args.seconds, auth, pid)


def print_key_overhead(cells: list[Cell]) -> None:
    """What checking a key adds to a proxy request: p50 with keys on minus off, same run."""
    off = {c.concurrency: c for c in cells if c.target == "proxy"}
    on = {c.concurrency: c for c in cells if c.target == "proxy+key"}
    if not off or not on:
        return
    print(f"\n{'conc':>5}{'p50 keys off ms':>17}{'p50 keys on ms':>16}{'added ms':>10}"
          f"{'req/s ratio on/off':>20}")  # fmt: skip
    for level in sorted(off.keys() & on.keys()):
        before, after = off[level].percentile(0.5), on[level].percentile(0.5)  # ms
        ratio = on[level].rps / off[level].rps if off[level].rps else 0.0
        print(f"{level:>5}{before:>17.3f}{after:>16.3f}{after - before:>10.3f}{ratio:>20.2f}")


def ensure_litellm() -> Path | None:
    binary = LITELLM_VENV / "bin" / "litellm"
    if binary.exists():
        return binary
    print(f"installing litellm[proxy] into {LITELLM_VENV} (once) ...", flush=True)
    try:
        subprocess.run([sys.executable, "-m", "venv", str(LITELLM_VENV)], check=True)
        pip = [str(LITELLM_VENV / "bin" / "pip"), "install", "-q", "litellm[proxy]"]
        subprocess.run(pip, check=True)
    except (subprocess.CalledProcessError, OSError) as exc:
        print(f"LiteLLM could not be installed: {exc}")
        return None
    return binary if binary.exists() else None


def litellm(binary: Path, port: int, upstream: str, work: Path) -> AbstractContextManager[int]:
    config = work / "litellm.yaml"
    config.write_text(
        "model_list:\n"
        "  - model_name: bench\n"
        "    litellm_params:\n"
        "      model: openai/fake-model\n"
        f"      api_base: {upstream}\n"
        "      api_key: not-used\n"
        "litellm_settings:\n"
        "  cache: false\n"
        "  telemetry: false\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env.update(
        {
            "LITELLM_MASTER_KEY": LITELLM_KEY,
            "LITELLM_LOG": "ERROR",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "NO_DOCS": "True",
            "DISABLE_SCHEMA_UPDATE": "True",
        }
    )
    command = [str(binary), "--config", str(config), "--host", "127.0.0.1",
               "--port", str(port), "--num_workers", "1"]  # fmt: skip
    return process(command, f"http://127.0.0.1:{port}/health/liveliness", PROXY_CORE, env=env)


async def load(
    url: str,
    body: dict[str, object],
    concurrency: int,
    seconds: float,
    headers: dict[str, str] | None = None,
    server_pid: int | None = None,
) -> Cell:
    """``concurrency`` closed-loop clients for ``seconds`` (after a short warm-up)."""
    connector = aiohttp.TCPConnector(limit=concurrency)
    latencies: list[float] = []
    errors = 0
    async with aiohttp.ClientSession(connector=connector) as session:

        async def client(until: float, record: bool) -> None:
            nonlocal errors
            while time.perf_counter() < until:
                began = time.perf_counter()
                async with session.post(url, json=body, headers=headers) as response:
                    await response.read()
                    ok = response.status == 200
                if record:
                    latencies.append(time.perf_counter() - began)
                    errors += not ok

        warm = time.perf_counter() + min(1.0, seconds / 3)
        await asyncio.gather(*(client(warm, False) for _ in range(concurrency)))
        cpu_before = process_tree_cpu_s(server_pid) if server_pid else 0.0
        started = time.perf_counter()
        await asyncio.gather(*(client(started + seconds, True) for _ in range(concurrency)))
        elapsed = time.perf_counter() - started
        cpu = process_tree_cpu_s(server_pid) - cpu_before if server_pid else 0.0
    return Cell("", concurrency, len(latencies), errors, elapsed, latencies, cpu)


def measure(
    target: str,
    url: str,
    body: dict[str, object],
    levels: list[int],
    seconds: float,
    headers: dict[str, str] | None = None,
    server_pid: int | None = None,
) -> list[Cell]:
    cells = []
    for concurrency in levels:
        cell = asyncio.run(load(url, body, concurrency, seconds, headers, server_pid))
        cell.target = target
        cells.append(cell)
        print(f"  {target:<8} c={concurrency:<3} {cell.rps:8.0f} req/s", flush=True)
    return cells


def print_http_table(cells: list[Cell]) -> None:
    print()
    print(f"{'target':<9}{'conc':>5}{'requests':>10}{'errors':>8}{'req/s':>10}"
          f"{'p50 ms':>9}{'p99 ms':>9}{'server CPU ms/req':>19}")  # fmt: skip
    for cell in cells:
        p50, p99 = cell.percentile(0.5), cell.percentile(0.99)
        cpu = cell.cpu_ms_per_request
        print(f"{cell.target:<9}{cell.concurrency:>5}{cell.requests:>10}{cell.errors:>8}"
              f"{cell.rps:>10.0f}{p50:>9.2f}{p99:>9.2f}{cpu:>19.3f}")  # fmt: skip
    by = {(c.target, c.concurrency): c for c in cells}
    print()
    print(f"{'vs direct':<18}{'conc':>5}{'added p50 ms':>14}{'added p99 ms':>14}{'RPS ratio':>11}")
    for (target, concurrency), cell in by.items():
        direct = by.get(("direct", concurrency))
        if target == "direct" or direct is None:
            continue
        print(f"{target:<18}{concurrency:>5}"
              f"{cell.percentile(0.5) - direct.percentile(0.5):>14.2f}"
              f"{cell.percentile(0.99) - direct.percentile(0.99):>14.2f}"
              f"{cell.rps / direct.rps:>11.2f}")  # fmt: skip
    for concurrency in sorted({c.concurrency for c in cells}):
        ours, theirs = by.get(("gateway", concurrency)), by.get(("litellm", concurrency))
        if ours and theirs:
            cpu_ratio = theirs.cpu_ms_per_request / max(ours.cpu_ms_per_request, 1e-9)
            print(f"gateway vs litellm at c={concurrency}: {ours.rps / theirs.rps:.1f}x the "
                  f"requests/s, {cpu_ratio:.1f}x less server CPU per request")  # fmt: skip


async def local_tokens_per_second(
    route_name: str,
    levels: tuple[int, ...],
    max_tokens: int,
    threads: int | None = None,
    rounds: int = 2,
) -> dict[int, tuple[float, float]]:
    """Output tokens per second of ``n`` concurrent requests, for each ``n`` in ``levels``: per
    wall-clock second and per CPU second of this process (the model runs in it)."""
    from steadfast.services.gateway.adapters.backends import BackendContext, create_backend
    from steadfast.services.gateway.domain.gateway import ModelGateway
    from steadfast.services.gateway.domain.routes import BUILTIN_ROUTES
    from steadfast.services.gateway.settings import get_settings
    from steadfast.shared.contracts.gateway import ChatMessage, GenerateRequest

    context = BackendContext(models_dir=get_settings().resolved_data_dir() / "models")
    route = msgspec.structs.replace(BUILTIN_ROUTES[route_name], threads=threads)
    model_gateway = ModelGateway(
        {route.name: route}, backend_factory=lambda r: create_backend(r, context)
    )

    def request(index: int) -> GenerateRequest:
        prompt = f"Count from {index * 100} to {index * 100 + 200}, separated by commas."
        return GenerateRequest(
            model=route.name,
            messages=[ChatMessage(role="user", content=prompt)],
            max_tokens=max_tokens,
            cache=False,
        )

    await model_gateway.generate(request(99))  # assemble and load the model, warm up
    rates: dict[int, tuple[float, float]] = {}
    for round_number in range(rounds):  # alternate the levels; keep each one's best round
        for level in levels:
            started, cpu_started = time.perf_counter(), time.process_time()
            responses = await asyncio.gather(
                *(model_gateway.generate(request(100 * round_number + 10 * level + i))
                  for i in range(level))
            )  # fmt: skip
            elapsed = time.perf_counter() - started
            cpu = time.process_time() - cpu_started
            tokens = sum(r.usage.output_tokens for r in responses)
            best = rates.get(level, (0.0, 0.0))
            rates[level] = (max(best[0], tokens / elapsed), max(best[1], tokens / cpu))
    await model_gateway.close()
    return rates


def print_local_table(route: str, max_tokens: int, threads: int | None) -> None:
    print()
    print(f"local backend ({route}, {max_tokens} tokens per request, n_parallel slots, "
          f"threads {threads or 'default'}, best of 2 rounds)")  # fmt: skip
    results = asyncio.run(local_tokens_per_second(route, (1, 4), max_tokens, threads))
    print(f"{'concurrent requests':<22}{'tokens/s':>10}{'vs 1':>8}"
          f"{'tokens/CPU-s':>14}{'vs 1':>8}")  # fmt: skip
    single, single_cpu = results[1]
    for concurrency, (rate, per_cpu) in results.items():
        print(f"{concurrency:<22}{rate:>10.1f}{rate / single:>8.2f}"
              f"{per_cpu:>14.1f}{per_cpu / single_cpu:>8.2f}")  # fmt: skip


def run_http(args: argparse.Namespace) -> list[Cell]:
    cells: list[Cell] = []
    chat = {"model": "fake-model", "messages": QUESTION}
    with tempfile.TemporaryDirectory() as work_dir:
        work = Path(work_dir)
        upstream_port = free_port()
        upstream = f"http://127.0.0.1:{upstream_port}/v1"
        with stand_in(upstream_port) as upstream_pid:
            print("direct (stand-in)", flush=True)
            cells += measure("direct", f"{upstream}/chat/completions", chat, args.concurrency,
                             args.seconds, server_pid=upstream_pid)  # fmt: skip
            port = free_port()
            with gateway(port, upstream, work) as gateway_pid:
                print("gateway (cache off)", flush=True)
                body = {"model": "bench", "messages": QUESTION, "cache": False}
                url = f"http://127.0.0.1:{port}/v1/generate"
                cells += measure("gateway", url, body, args.concurrency, args.seconds,
                                 server_pid=gateway_pid)  # fmt: skip
                print("proxy, keys off", flush=True)
                chat_url = f"http://127.0.0.1:{port}/v1/chat/completions"
                proxy_body = {"model": "bench", "messages": QUESTION}
                cells += measure("proxy", chat_url, proxy_body, args.concurrency, args.seconds,
                                 server_pid=gateway_pid)  # fmt: skip
            cells += keyed_proxy(work, upstream, args)
            binary = None if args.skip_litellm else ensure_litellm()
            if binary is not None:
                port = free_port()
                try:
                    with litellm(binary, port, upstream, work) as litellm_pid:
                        print("litellm proxy", flush=True)
                        body = {"model": "bench", "messages": QUESTION}
                        auth = {"Authorization": f"Bearer {LITELLM_KEY}"}
                        cells += measure("litellm", f"http://127.0.0.1:{port}/chat/completions",
                                         body, args.concurrency, args.seconds, auth,
                                         litellm_pid)  # fmt: skip
                except RuntimeError as exc:
                    print(f"LiteLLM did not run: {exc}")
            elif not args.skip_litellm:
                print("LiteLLM not available: no comparison row")
    return cells


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 16, 64])
    parser.add_argument("--local-route", default="local-small")
    parser.add_argument("--local-tokens", type=int, default=64)
    parser.add_argument("--local-threads", type=int, help="default: the route's (cores - 1)")
    parser.add_argument("--skip-litellm", action="store_true")
    parser.add_argument("--skip-local", action="store_true")
    parser.add_argument("--skip-http", action="store_true", help="only the local backend")
    parser.add_argument(
        "--no-pin", action="store_true", help="let the OS place every process (busy machines)"
    )
    args = parser.parse_args()
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    global PINNING
    PINNING = not args.no_pin
    pin(0, LOAD_CORE)
    print(f"cores: {os.cpu_count()}, load average before: {os.getloadavg()[0]:.1f}")
    if not args.skip_http:
        cells = run_http(args)
        print_http_table(cells)
        print_key_overhead(cells)
        print(f"load average after the HTTP runs: {os.getloadavg()[0]:.1f}")
    if not args.skip_local:
        if hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(0, set(range(os.cpu_count() or 1)))  # the model gets every core
        print_local_table(args.local_route, args.local_tokens, args.local_threads)


if __name__ == "__main__":
    main()
