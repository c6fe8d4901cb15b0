"""docs/metrics.md names every metric the services export, with its type, labels and meaning,
and nothing else (regenerate with ``python scripts/metrics_catalogue.py``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_catalogue_is_what_the_services_export(tmp_path: Path) -> None:
    # a process of its own: this one's registry also holds metrics tests make
    checked = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "metrics_catalogue.py"), "--check"],
        env={**os.environ, "STEADFAST_DATA_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert checked.returncode == 0, checked.stderr[-2000:]
    rows = (REPO / "docs" / "metrics.md").read_text().splitlines()
    monitor = next(row for row in rows if row.startswith("| `steadfast_monitor_value`"))
    assert "`monitor`, `model`, `metric`" in monitor
    assert any(row.startswith("| `steadfast_shadow_checks_total` | counter") for row in rows)
