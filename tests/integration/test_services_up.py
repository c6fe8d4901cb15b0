"""The five services as real processes, talking HTTP to each other."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from steadfast.shared.settings import SERVICE_NAMES
from steadfast.supervisor import Supervisor, readiness, service_ports


def _get(url: str) -> tuple[int, str]:
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.status, response.read().decode()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_five_services_ready_with_metrics_and_clean_stop(port_block: int, tmp_path: Path) -> None:
    supervisor = Supervisor(
        ports=service_ports(port_block),
        env={"STEADFAST_DATA_DIR": str(tmp_path)},
        log_dir=tmp_path / "logs",
    )
    with supervisor:
        ready = supervisor.wait_ready(60)
        assert all(ready.values()), ready
        pids = [proc.process.pid for proc in supervisor.processes]
        for proc in supervisor.processes:
            status, body = _get(f"{proc.url}/readyz")
            assert status == 200
            assert json.loads(body)["service"] == proc.name
            status, metrics = _get(f"{proc.url}/metrics")
            assert status == 200
            assert 'steadfast_build_info{python="' in metrics
            assert f'service="{proc.name}"' in metrics
        evaluator = json.loads(_get(f"{supervisor.processes[0].url}/readyz")[1])
        assert set(evaluator["checks"]) == {"database", "gateway", "perturb", "verify", "scoring"}
        assert (tmp_path / "gateway.sqlite3").exists()
    assert not any(_alive(pid) for pid in pids)


def test_readyz_reports_a_called_service_that_is_down_without_failing(
    port_block: int, tmp_path: Path
) -> None:
    """One service down must not take its callers out of rotation (a Kubernetes Service keeps
    only ready pods): the outage is reported, the caller stays ready."""
    ports = service_ports(port_block)
    supervisor = Supervisor(
        ports=ports, env={"STEADFAST_DATA_DIR": str(tmp_path)}, services=("verify",)
    )
    with supervisor:
        deadline = time.monotonic() + 30
        ok, body = False, ""
        while time.monotonic() < deadline and not ok:
            ok, body = readiness(f"http://127.0.0.1:{ports['verify']}")
            time.sleep(0.3)
        assert ok, body
        document = json.loads(body)
        assert document["status"] == "degraded"
        assert document["checks"]["gateway"].startswith("failed: ")


def _children_of(pid: int) -> list[int]:
    output = subprocess.run(
        ["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True, check=False
    ).stdout
    return [int(line) for line in output.split()]


@pytest.mark.parametrize("stop_signal", [signal.SIGINT, signal.SIGTERM])
def test_cli_up_prints_urls_and_stops_cleanly(
    port_block: int, tmp_path: Path, stop_signal: signal.Signals
) -> None:
    env = {**os.environ, "STEADFAST_DATA_DIR": str(tmp_path)}
    process = subprocess.Popen(
        [sys.executable, "-m", "steadfast.cli", "up", "--base-port", str(port_block)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    lines = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        lines.append(line)
        if "Press Ctrl-C" in line:
            break
    output = "".join(lines)
    for index, name in enumerate(SERVICE_NAMES):
        assert f"http://127.0.0.1:{port_block + index}" in output, output
        assert name in output
    children = _children_of(process.pid)
    assert len(children) == 5
    status = subprocess.run(
        [sys.executable, "-m", "steadfast.cli", "status", "--base-port", str(port_block)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert status.returncode == 0, status.stdout
    assert status.stdout.count("ready") >= 5
    process.send_signal(stop_signal)
    assert process.wait(30) == 0
    time.sleep(0.2)
    assert not any(_alive(child) for child in children)
