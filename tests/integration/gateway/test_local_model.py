"""The local backend with the real bundled 0.5B model (slow: assembles and loads ~0.5 GB)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import signal
import time
from pathlib import Path

import httpx
import msgspec
import pytest

from steadfast.services.gateway.adapters.backends import BackendContext, create_backend
from steadfast.services.gateway.adapters.backends.local import LocalBackend
from steadfast.services.gateway.domain.gateway import ModelGateway
from steadfast.services.gateway.domain.routes import BUILTIN_ROUTES
from steadfast.shared.contracts.gateway import ChatMessage, GenerateRequest
from steadfast.supervisor import Supervisor, service_ports
from tests.conftest import free_port_block

pytestmark = pytest.mark.slow


def _listeners(port: int) -> list[str]:
    """Local addresses (hex, as in /proc/net/tcp*) of the sockets listening on ``port``."""
    found = []
    for table in ("/proc/self/net/tcp", "/proc/self/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            address, port_hex = fields[1].rsplit(":", 1)
            if fields[3] == "0A" and int(port_hex, 16) == port:  # 0A: LISTEN
                found.append(address)
    return found


def ask(text: str, **params: object) -> GenerateRequest:
    return GenerateRequest(
        model="local-small",
        messages=[ChatMessage(role="user", content=text)],
        max_tokens=12,
        **params,  # type: ignore[arg-type]
    )


async def test_local_small_answers_batches_and_listens_on_loopback_only(tmp_path: Path) -> None:
    context = BackendContext(models_dir=tmp_path / "models")
    gateway = ModelGateway(
        {"local-small": BUILTIN_ROUTES["local-small"]},
        backend_factory=lambda route: create_backend(route, context),
    )
    ticks: list[float] = []

    async def ticker() -> None:
        while True:
            ticks.append(time.perf_counter())
            await asyncio.sleep(0.02)

    # the first request assembles and loads the model (llama.cpp holds the GIL while loading)
    answer = await gateway.generate(
        ask("What is the capital of France? Answer with one word.", top_logprobs=3)
    )
    beat = asyncio.create_task(ticker())
    try:
        concurrent = await asyncio.gather(
            gateway.generate(ask("What is the capital of Italy? Answer with one word.")),
            gateway.generate(ask("What is the capital of Japan? Answer with one word.")),
        )
    finally:
        beat.cancel()
    assert "Paris" in answer.text
    assert answer.backend == "local" and answer.usage.output_tokens >= 1
    assert answer.logprobs is not None and len(answer.logprobs) == 3
    assert "Rome" in concurrent[0].text and "Tokyo" in concurrent[1].text
    # inference ran off the event loop, which kept ticking
    assert max(b - a for a, b in itertools.pairwise(ticks)) < 0.5

    backend = gateway.backend(BUILTIN_ROUTES["local-small"])
    assert isinstance(backend, LocalBackend)
    address = backend.listening_address
    assert address is not None and address.startswith("http://127.0.0.1:")
    listeners = _listeners(int(address.rsplit(":", 1)[1]))
    assert listeners == ["0100007F"]  # 127.0.0.1 only, no wildcard or IPv6 socket
    assert (tmp_path / "models" / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf").is_file()
    # three samples in one llama.cpp request: the prompt is read once
    colour = "Name a colour. One word."
    samples = await gateway.generate(ask(colour, temperature=1.0, seed=3, n=3))
    single = await gateway.generate(ask(colour, temperature=1.0, seed=3))
    assert samples.samples is not None and len(samples.samples) == 3
    assert all(text.strip() for text in samples.samples)
    assert samples.usage.input_tokens == single.usage.input_tokens > 0
    await gateway.close()


def test_a_gateway_busy_with_local_generations_stops_promptly_on_sigterm(tmp_path: Path) -> None:
    """The gateway exits on SIGTERM without waiting for the model to finish the generations
    under way (llama.cpp runs them in native threads Python cannot interrupt)."""
    supervisor = Supervisor(
        ports=service_ports(free_port_block(5)),
        env={"STEADFAST_DATA_DIR": str(tmp_path)},
        services=("gateway",),
        log_dir=tmp_path / "logs",
    )
    supervisor.start()
    process = supervisor.processes[0]
    try:
        assert supervisor.wait_ready(60)["gateway"]
        long_request = {
            "model": "local-tiny",
            "messages": [{"role": "user", "content": "Write every number from 1 to 5000."}],
            "max_tokens": 4000,
            "cache": False,
        }
        for _ in range(4):  # abandoned at once: each keeps a llama.cpp slot busy for minutes
            with contextlib.suppress(httpx.TimeoutException):
                httpx.post(f"{process.url}/v1/generate", json=long_request, timeout=0.5)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not _busy(process.url):
            time.sleep(0.5)
        assert _busy(process.url), "the local generations never started"
        stopping = time.monotonic()
        process.process.send_signal(signal.SIGTERM)
        exit_code = process.process.wait(timeout=30)
        assert time.monotonic() - stopping < 9  # uvicorn's 5 s grace, then out
        assert exit_code in (0, -signal.SIGTERM)  # uvicorn re-raises the signal it handled
    finally:
        supervisor.stop()


def _busy(url: str) -> str:
    """The gateway's in-flight gauge lines for local-tiny with a non-zero value."""
    metrics = httpx.get(f"{url}/metrics", timeout=5).text
    return "\n".join(
        line
        for line in metrics.splitlines()
        if line.startswith('steadfast_model_inflight_requests{route="local-tiny"}')
        and not line.endswith(" 0.0")
    )


async def test_a_generation_given_up_stops_and_frees_its_slot(tmp_path: Path) -> None:
    """One slot: a request asked after another was given up waits only for llama.cpp to notice
    the closed connection, not for the abandoned generation to run its course."""
    route = msgspec.structs.replace(BUILTIN_ROUTES["local-tiny"], n_parallel=1, threads=1)
    backend = create_backend(route, BackendContext(models_dir=tmp_path / "models"))
    numbers = "Write every number from 1 to 5000, separated by commas."

    def tiny(text: str, max_tokens: int, seed: int = 0) -> GenerateRequest:
        message = ChatMessage(role="user", content=text)
        return GenerateRequest(
            model="local-tiny", messages=[message], max_tokens=max_tokens, seed=seed, cache=False
        )

    try:
        await backend.load()
        began = time.perf_counter()
        whole = await backend.complete(tiny(numbers, 600, seed=1), timeout_s=300)
        whole_s = time.perf_counter() - began
        assert whole.finish_reason == "length"  # the prompt keeps the model going

        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(backend.complete(tiny(numbers, 600, seed=2), timeout_s=300), 1.0)
        began = time.perf_counter()
        await backend.complete(tiny("Say yes.", 3), timeout_s=300)
        after_s = time.perf_counter() - began
    finally:
        await backend.close()
    # the abandoned generation had about whole_s - 1 s to go
    assert after_s < 0.5 * whole_s, (after_s, whole_s)


async def test_a_generation_with_a_time_limit_answers_with_what_it_wrote_and_stops(
    tmp_path: Path,
) -> None:
    """One slot: a long generation with a time limit comes back at its limit with the text
    written by then, counted by llama.cpp's own timings, and frees the slot for the next."""
    route = msgspec.structs.replace(BUILTIN_ROUTES["local-tiny"], n_parallel=1, threads=1)
    backend = create_backend(route, BackendContext(models_dir=tmp_path / "models"))
    numbers = ChatMessage(role="user", content="Write every number from 1 to 5000, one a line.")
    limited = GenerateRequest(
        model="local-tiny", messages=[numbers], max_tokens=2000, cache=False, time_limit_s=1.5
    )
    try:
        await backend.load()
        began = time.perf_counter()
        cut = await backend.complete(limited, timeout_s=300)
        cut_s = time.perf_counter() - began
        # the one slot busy: llama.cpp queues the request and sends nothing, headers included
        busy = asyncio.create_task(
            backend.complete(msgspec.structs.replace(limited, time_limit_s=None), timeout_s=300)
        )
        await asyncio.sleep(0.5)
        began = time.perf_counter()
        queued = await backend.complete(
            msgspec.structs.replace(limited, time_limit_s=1.0), timeout_s=300
        )
        queued_s = time.perf_counter() - began
        busy.cancel()
        await asyncio.gather(busy, return_exceptions=True)
        began = time.perf_counter()
        short = await backend.complete(
            GenerateRequest(
                model="local-tiny",
                messages=[ChatMessage(role="user", content="Say yes.")],
                max_tokens=3,
                cache=False,
                time_limit_s=30,
            ),
            timeout_s=300,
        )
        after_s = time.perf_counter() - began
    finally:
        await backend.close()
    assert cut.finish_reason == "time_limit" and cut_s < 3.0
    assert queued.finish_reason == "time_limit" and queued.text == "" and queued_s < 2.5
    assert any(character.isdigit() for character in cut.text)
    assert cut.input_tokens > 5 and cut.output_tokens >= len(cut.text.split())
    # a reply that ends before its limit is whole, counted by the usage at its end
    assert short.finish_reason in ("stop", "length") and short.output_tokens >= 1
    assert after_s < 3.0
