"""Start the services a benchmark needs on free local ports, for the length of a ``with``."""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from steadfast.shared.settings import SERVICE_NAMES
from steadfast.supervisor import Supervisor, service_ports


@contextmanager
def local_services(
    services: Sequence[str],
    env: Mapping[str, str] | None = None,
    log_dir: Path | None = None,
    ready_timeout_s: float = 120.0,
) -> Iterator[dict[str, str]]:
    """The URL of each of ``services`` once all are ready (exits naming the logs if one is
    not); logs go to ``log_dir``, else to a folder removed afterwards."""
    from tests.conftest import free_port_block

    ports = service_ports(free_port_block(len(SERVICE_NAMES)))
    with tempfile.TemporaryDirectory() as scratch:
        logs = log_dir or Path(scratch)
        supervisor = Supervisor(ports=ports, env=env, services=tuple(services), log_dir=logs)
        with supervisor as running:
            if not all(running.wait_ready(ready_timeout_s).values()):
                sys.exit(f"services did not become ready; logs in {logs}")
            yield {name: f"http://127.0.0.1:{ports[name]}" for name in services}
