"""SIGTERM to a program that started services runs its clean-up, which stops them.

The programs that receive SIGTERM run as child processes: without the handler the default
action would end the test run itself."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

from steadfast.supervisor import exit_on_sigterm


def _terminated(program: str) -> subprocess.CompletedProcess[str]:
    """Run ``program`` until it prints ``ready``, send it SIGTERM, and wait for it."""
    process = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(program)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "ready"
    process.send_signal(signal.SIGTERM)
    stdout, stderr = process.communicate(timeout=30)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def test_sigterm_raises_system_exit_inside_and_is_default_again_after() -> None:
    finished = _terminated(
        """
        import signal, time
        from steadfast.supervisor import exit_on_sigterm
        try:
            with exit_on_sigterm():
                print("ready", flush=True)
                time.sleep(30)
        finally:
            print("default again:", signal.getsignal(signal.SIGTERM) is signal.SIG_DFL)
        """
    )
    assert finished.returncode == 128 + signal.SIGTERM, finished.stderr
    assert "default again: True" in finished.stdout


def test_supervisor_block_stops_its_services_on_sigterm() -> None:
    finished = _terminated(
        """
        import time
        from steadfast.supervisor import Supervisor
        Supervisor.stop = lambda self, timeout_s=10.0: print("stopped", flush=True)
        with Supervisor(services=()):
            print("ready", flush=True)
            time.sleep(30)
        """
    )
    assert finished.returncode == 128 + signal.SIGTERM, finished.stderr
    assert finished.stdout.split() == ["stopped"]


def test_a_handler_already_installed_is_left_alone() -> None:
    received: list[int] = []
    previous = signal.signal(signal.SIGTERM, lambda signum, _: received.append(signum))
    try:
        with exit_on_sigterm():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.1)
        assert received == [signal.SIGTERM]
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_nothing_changes_outside_the_main_thread() -> None:
    seen: list[object] = []

    def inside() -> None:
        with exit_on_sigterm():
            seen.append(signal.getsignal(signal.SIGTERM))

    before = signal.getsignal(signal.SIGTERM)
    worker = threading.Thread(target=inside)
    worker.start()
    worker.join()
    assert seen == [before]


def test_a_crashed_service_restarts_after_a_back_off_that_doubles() -> None:
    from collections.abc import Mapping
    from typing import Any

    from steadfast.supervisor import ServiceProcess, Supervisor

    def exited() -> subprocess.Popen[bytes]:
        process = subprocess.Popen([sys.executable, "-c", "pass"])
        process.wait()
        return process

    class Counting(Supervisor):
        spawned: list[str] = []  # noqa: RUF012

        def _spawn(self, name: str, env: Mapping[str, str]) -> ServiceProcess:
            self.spawned.append(name)
            return ServiceProcess(name, 1, exited(), None)  # crashes again at once

    supervisor = Counting(services=())
    supervisor.processes = [ServiceProcess("perturb", 1, exited(), None)]
    restarts: list[Any] = [supervisor.restart_crashed(now=t) for t in (0.0, 0.5, 1.0)]
    assert [len(r) for r in restarts] == [0, 0, 1]  # 1 s after it was seen down
    assert [len(supervisor.restart_crashed(now=t)) for t in (1.0, 2.9, 3.0)] == [0, 0, 1]  # 2 s
    assert supervisor.restarts == {"perturb": 2} and supervisor.spawned == ["perturb"] * 2
