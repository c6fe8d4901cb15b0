"""``steadfast up`` restarts a service that crashed (kill -9), with back-off, and leaves the
others running: one crash no longer stops all five."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from steadfast.supervisor import readiness, service_ports


def service_pid(name: str, port: int) -> int | None:
    """The pid of the uvicorn process serving ``name`` on ``port`` (Linux /proc)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if (
            f"steadfast.services.{name}.app:create_app".encode() in command
            and str(port).encode() in command
        ):
            return int(entry.name)
    return None


def wait_for(predicate, timeout_s: float = 90.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError("timed out")


def test_a_crashed_service_is_restarted_and_the_others_run_on(
    tmp_path: Path, port_block: int
) -> None:
    ports = service_ports(port_block)
    env = {**os.environ, "STEADFAST_DATA_DIR": str(tmp_path / "data")}
    env.pop("STEADFAST_MODELS_FILE", None)
    up = subprocess.Popen(
        [sys.executable, "-m", "steadfast.cli", "up", "--base-port", str(port_block),
         "--log-dir", str(tmp_path / "logs"), "--timeout", "90"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )  # fmt: skip
    try:
        assert up.stdout is not None and up.stderr is not None
        while "Press Ctrl-C" not in (line := up.stdout.readline()):
            assert line, up.stderr.read()
        evaluator = service_pid("evaluator", ports["evaluator"])
        crashed = service_pid("perturb", ports["perturb"])
        assert evaluator and crashed
        os.kill(crashed, signal.SIGKILL)
        assert "perturb exited with code -9" in up.stderr.readline()
        assert "perturb restarted (1 so far)" in up.stderr.readline()
        url = f"http://127.0.0.1:{ports['perturb']}"
        wait_for(lambda: readiness(url, timeout_s=1.0)[0])
        restarted = service_pid("perturb", ports["perturb"])
        assert restarted not in (None, crashed)
        assert service_pid("evaluator", ports["evaluator"]) == evaluator  # never stopped
        assert up.poll() is None
    finally:
        up.send_signal(signal.SIGINT)
        up.wait(30)
