"""The benchmarks' local stack."""

from __future__ import annotations

import urllib.request
from pathlib import Path

from bench.stack import local_services


def test_local_services_are_ready_while_the_block_runs_and_gone_after(tmp_path: Path) -> None:
    env = {"STEADFAST_DATA_DIR": str(tmp_path / "data")}
    with local_services(("gateway",), env, log_dir=tmp_path / "logs") as urls:
        assert list(urls) == ["gateway"]
        with urllib.request.urlopen(f"{urls['gateway']}/readyz", timeout=5) as response:
            assert response.status == 200
    assert (tmp_path / "logs" / "gateway.log").exists()
    try:
        urllib.request.urlopen(f"{urls['gateway']}/readyz", timeout=2)
    except OSError:
        pass
    else:
        raise AssertionError("the service still answers after the block")
