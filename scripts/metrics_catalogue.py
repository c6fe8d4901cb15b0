"""Writes docs/metrics.md, the catalogue of every ``steadfast_*`` metric the five services
export: ``python scripts/metrics_catalogue.py`` (tests/unit/test_metrics_catalogue.py checks the
committed file against what the services register)."""

from __future__ import annotations

import importlib
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
TARGET = REPO / "docs" / "metrics.md"
HEADER = """# Metrics

Every metric the five services export at `/metrics` (Prometheus text format), generated from
the code by `python scripts/metrics_catalogue.py`; a test fails when this page and the services
disagree. Counters are exported with the `_total` suffix, histograms as `_bucket`, `_sum` and
`_count`. No metric carries a per-question or per-caller label; the monitors' labels are bounded
by the 50 monitors an evaluator keeps, the routes' by the routes file.

| metric | type | labels | meaning |
|---|---|---|---|
"""


#: made on first use, which a catalogue run does not cause: listed as they will be
LAZY = [
    {
        "name": "steadfast_http_requests_error_total",
        "type": "counter",
        "labels": ["method", "path", "status_code", "app_name"],
        "help": "Total errors in requests (answers with a 5xx status; the first one makes it).",
    }
]


def registered() -> list[dict[str, Any]]:
    """The ``steadfast_*`` metrics registered once every service's app was made."""
    from litestar.testing import TestClient
    from prometheus_client import REGISTRY

    from steadfast.shared.settings import SERVICE_NAMES

    for service in SERVICE_NAMES:
        app = importlib.import_module(f"steadfast.services.{service}.app").create_app()
        with TestClient(app) as client:
            client.get("/healthz")  # the HTTP metrics are made on the first request
    found = []
    for collector in list(REGISTRY._collector_to_names):
        name = getattr(collector, "_name", "")
        if not name.startswith("steadfast_"):
            continue
        kind = getattr(collector, "_type", "")
        exported = f"{name}_total" if kind == "counter" else name
        if any(lazy["name"] == f"{name}_total" or lazy["name"] == name for lazy in LAZY):
            continue
        found.append(
            {
                "name": exported,
                "type": kind,
                "labels": list(getattr(collector, "_labelnames", ())),
                "help": " ".join(getattr(collector, "_documentation", "").split()),
            }
        )
    return sorted([*found, *LAZY], key=lambda metric: metric["name"])


def catalogue(metrics: list[dict[str, Any]]) -> str:
    rows = [
        f"| `{m['name']}` | {m['type']} | {', '.join(f'`{label}`' for label in m['labels']) or '–'}"
        f" | {m['help'].replace('|', '/')} |"
        for m in metrics
    ]
    return HEADER + "\n".join(rows) + "\n"


def main() -> int:
    """Write the catalogue; with ``--check``, only say whether the committed one is current."""
    os.environ.setdefault("STEADFAST_DATA_DIR", tempfile.mkdtemp(prefix="steadfast-metrics-"))
    sys.path.insert(0, str(REPO))
    document = catalogue(registered())
    if "--check" in sys.argv:
        if TARGET.read_text() != document:
            print(f"{TARGET} is stale: run python scripts/metrics_catalogue.py", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(document)
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
