"""Starts the five services as separate processes and stops them cleanly."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from steadfast.shared.settings import SERVICE_NAMES, default_port

_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """Linux: the child gets SIGTERM if the supervisor dies, so no service is orphaned."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except OSError:
        pass


@contextlib.contextmanager
def exit_on_sigterm() -> Iterator[None]:
    """Inside, SIGTERM raises ``SystemExit`` in the main thread, so ``with`` and ``finally``
    blocks run: the default action ends the process on the spot, and the services (told by
    PR_SET_PDEATHSIG) would then outlive it until their generations in progress end, unbounded
    by ``stop``'s timeout. Elsewhere than the main thread, or when SIGTERM already has a
    handler, nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return

    def exit_now(signum: int, _: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, exit_now)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def service_ports(
    base_port: int | None = None, overrides: Mapping[str, int] | None = None
) -> dict[str, int]:
    ports = {name: default_port(name) for name in SERVICE_NAMES}
    if base_port is not None:
        ports = {name: base_port + index for index, name in enumerate(SERVICE_NAMES)}
    ports.update(overrides or {})
    return ports


AUTH_VARIABLE = "STEADFAST_EVALUATOR_AUTH"
INTERNAL_TOKEN_VARIABLE = "STEADFAST_INTERNAL_TOKEN"
GATEWAY_AUTH_VARIABLE = "STEADFAST_GATEWAY_AUTH"
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


def unsafe_bind(host: str, require_keys: bool, environment: Mapping[str, str]) -> str | None:
    """Why the services may not listen on ``host`` as configured, or None: beyond this machine
    the evaluator must ask for API keys and the others for the internal token."""
    if host in LOOPBACK_HOSTS:
        return None
    missing = []
    if not require_keys:
        missing.append("--require-keys (the evaluator then asks for an API key)")
    if not environment.get(INTERNAL_TOKEN_VARIABLE):
        missing.append(f"{INTERNAL_TOKEN_VARIABLE} (the other services then answer only it)")
    if not missing:
        return None
    return (
        f"listening on {host} opens the services to other machines: set "
        + " and ".join(missing)
        + ", or keep the default 127.0.0.1"
    )


def service_environment(
    ports: Mapping[str, int], host: str = "127.0.0.1", extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Environment telling every service where the others listen."""
    env = dict(os.environ)
    for name, port in ports.items():
        env[f"STEADFAST_{name.upper()}_URL"] = f"http://{host}:{port}"
        env[f"STEADFAST_{name.upper()}_PORT"] = str(port)
    env.update(extra or {})
    return env


def readiness(url: str, timeout_s: float = 2.0) -> tuple[bool, str]:
    try:
        with urllib.request.urlopen(f"{url}/readyz", timeout=timeout_s) as response:
            return response.status == 200, response.read().decode()
    except urllib.error.HTTPError as exc:
        return False, exc.read().decode(errors="replace")
    except (urllib.error.URLError, OSError) as exc:
        return False, str(getattr(exc, "reason", exc))


@dataclass
class ServiceProcess:
    name: str
    port: int
    process: subprocess.Popen[bytes]
    log_path: Path | None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@dataclass
class Supervisor:
    """Owns the service processes; use as a context manager to guarantee they stop (also on
    SIGTERM, see ``exit_on_sigterm``)."""

    ports: dict[str, int] = field(default_factory=service_ports)
    env: Mapping[str, str] | None = None
    log_dir: Path | None = None
    services: tuple[str, ...] = SERVICE_NAMES
    #: the services listen on 127.0.0.1 only, so by default the evaluator runs in open local
    #: mode (no API key) unless ``STEADFAST_EVALUATOR_AUTH`` says otherwise; False: it asks
    #: for a key whatever the environment says
    open_local: bool = True
    #: the address the services listen on; beyond 127.0.0.1 see ``unsafe_bind``
    host: str = "127.0.0.1"
    processes: list[ServiceProcess] = field(default_factory=list)
    #: how often each service was restarted, and when one that exited restarts next
    restarts: dict[str, int] = field(default_factory=dict)
    _restart_at: dict[str, float] = field(default_factory=dict, repr=False)
    _signals: contextlib.ExitStack = field(default_factory=contextlib.ExitStack, repr=False)

    def environment(self) -> dict[str, str]:
        env = service_environment(self.ports, extra=self.env)
        if self.open_local:
            env.setdefault(AUTH_VARIABLE, "open")
        else:
            env[AUTH_VARIABLE] = "keys"
            if env.get(INTERNAL_TOKEN_VARIABLE):  # the services then reach it with the token
                env[GATEWAY_AUTH_VARIABLE] = "keys"
        return env

    def start(self) -> None:
        env = self.environment()
        for name in self.services:
            self.processes.append(self._spawn(name, env))

    def _spawn(self, name: str, env: Mapping[str, str]) -> ServiceProcess:
        port = self.ports[name]
        command = [
            sys.executable,
            "-m",
            "uvicorn",
            "--factory",
            f"steadfast.services.{name}.app:create_app",
            "--host",
            self.host,
            "--port",
            str(port),
            "--no-access-log",
            "--timeout-graceful-shutdown",
            "5",
        ]
        log_path = None
        output: Any = subprocess.DEVNULL
        if self.log_dir is not None:
            self.log_dir.mkdir(parents=True, exist_ok=True)
            log_path = self.log_dir / f"{name}.log"
            output = log_path.open("ab")
        process = subprocess.Popen(
            command,
            env=dict(env),
            stdout=output,
            stderr=output,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )
        return ServiceProcess(name, port, process, log_path)

    def restart_crashed(self, now: float | None = None) -> list[ServiceProcess]:
        """Start again every service that exited, once its back-off has passed (1 s, doubling
        per restart of that service, at most 30 s: a service that cannot start is not spun);
        the services it started. The others run on: one crash does not stop them all."""
        now = time.monotonic() if now is None else now
        env: dict[str, str] | None = None
        started = []
        for index, proc in enumerate(self.processes):
            if proc.process.poll() is None:
                continue
            count = self.restarts.get(proc.name, 0)
            due = self._restart_at.setdefault(proc.name, now + min(30.0, 2.0**count))
            if now < due:
                continue
            env = env or self.environment()
            self.processes[index] = self._spawn(proc.name, env)
            self.restarts[proc.name] = count + 1
            del self._restart_at[proc.name]
            started.append(self.processes[index])
        return started

    def wait_ready(self, timeout_s: float = 60.0) -> dict[str, bool]:
        deadline = time.monotonic() + timeout_s
        ready = {proc.name: False for proc in self.processes}
        while time.monotonic() < deadline and not all(ready.values()):
            for proc in self.processes:
                if proc.process.poll() is not None:
                    raise RuntimeError(
                        f"{proc.name} exited with code {proc.process.returncode}"
                        + (f"; see {proc.log_path}" if proc.log_path else "")
                    )
                if not ready[proc.name]:
                    ready[proc.name] = readiness(proc.url, timeout_s=1.0)[0]
            if not all(ready.values()):
                time.sleep(0.2)
        return ready

    def stop(self, timeout_s: float = 10.0) -> None:
        for proc in self.processes:
            if proc.process.poll() is None:
                proc.process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + timeout_s
        for proc in self.processes:
            remaining = max(0.1, deadline - time.monotonic())
            try:
                proc.process.wait(remaining)
            except subprocess.TimeoutExpired:
                os.killpg(proc.process.pid, signal.SIGKILL)
                proc.process.wait()
        self.processes.clear()

    def __enter__(self) -> Supervisor:
        self._signals.enter_context(exit_on_sigterm())
        try:
            self.start()
        except BaseException:
            self.stop()
            self._signals.close()
            raise
        return self

    def __exit__(self, *_: object) -> None:
        try:
            self.stop()
        finally:
            self._signals.close()
