"""Writes the Grafana dashboards: `python deploy/grafana/build_dashboard.py`.

``steadfast-dashboard.json`` shows how the services are doing; ``steadfast-reliability-
dashboard.json`` ("Steadfast — model reliability") how the *models* are doing, per model over
time: the monitors' values, the proxy's and the shadow checks' agreement. Kept as code so every
panel has the same shape; tests/unit/test_deploy.py checks that every metric a panel queries is
one the services export.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

RATE = "[$__rate_interval]"

PANELS: list[tuple[str, str, list[tuple[str, str]]]] = [
    # (title, unit, [(legend, PromQL)])
    (
        "HTTP requests/s by service",
        "reqps",
        [
            ("{{app_name}}", f"sum by (app_name) (rate(steadfast_http_requests_total{RATE}))"),
        ],
    ),
    (
        "HTTP p95 latency by service",
        "s",
        [
            (
                "{{app_name}}",
                "histogram_quantile(0.95, sum by (le, app_name) "
                f"(rate(steadfast_http_request_duration_seconds_bucket{RATE})))",
            ),
        ],
    ),
    (
        "HTTP 5xx/s by service",
        "reqps",
        [
            (
                "{{app_name}}",
                "sum by (app_name) "
                f'(rate(steadfast_http_requests_total{{status_code=~"5.."}}{RATE}))',
            ),
        ],
    ),
    (
        "Model calls/s by route and outcome",
        "reqps",
        [
            (
                "{{route}} {{outcome}}",
                f"sum by (route, outcome) (rate(steadfast_model_requests_total{RATE}))",
            ),
        ],
    ),
    (
        "Model call p50 / p95 by route",
        "s",
        [
            (
                "p50 {{route}}",
                "histogram_quantile(0.5, sum by (le, route) "
                f"(rate(steadfast_model_request_duration_seconds_bucket{RATE})))",
            ),
            (
                "p95 {{route}}",
                "histogram_quantile(0.95, sum by (le, route) "
                f"(rate(steadfast_model_request_duration_seconds_bucket{RATE})))",
            ),
        ],
    ),
    (
        "Gateway overhead p99",
        "s",
        [
            (
                "p99",
                "histogram_quantile(0.99, sum by (le) "
                f"(rate(steadfast_gateway_overhead_seconds_bucket{RATE})))",
            ),
        ],
    ),
    (
        "Response cache hit ratio",
        "percentunit",
        [
            (
                "hit ratio",
                f'sum(rate(steadfast_model_cache_requests_total{{result="hit"}}{RATE})) / '
                f"sum(rate(steadfast_model_cache_requests_total{RATE}))",
            ),
        ],
    ),
    (
        "Model retries/s by reason",
        "reqps",
        [
            (
                "{{route}} {{reason}}",
                f"sum by (route, reason) (rate(steadfast_model_retries_total{RATE}))",
            ),
        ],
    ),
    (
        "Tokens/s by route",
        "short",
        [
            (
                "{{route}} {{direction}}",
                f"sum by (route, direction) (rate(steadfast_model_tokens_total{RATE}))",
            ),
        ],
    ),
    (
        "Model calls in flight",
        "short",
        [
            ("{{route}}", "sum by (route) (steadfast_model_inflight_requests)"),
        ],
    ),
    (
        "Proxy requests/s by strategy",
        "reqps",
        [
            (
                "{{strategy}} {{outcome}}",
                f"sum by (strategy, outcome) (rate(steadfast_proxy_requests_total{RATE}))",
            ),
        ],
    ),
    (
        "Proxy answer agreement (median) and upstream calls per request",
        "short",
        [
            (
                "agreement p50",
                "histogram_quantile(0.5, sum by (le) "
                f"(rate(steadfast_proxy_agreement_ratio_bucket{RATE})))",
            ),
            (
                "upstream calls / request",
                f"sum(rate(steadfast_proxy_upstream_calls_per_request_sum{RATE})) / "
                f"sum(rate(steadfast_proxy_upstream_calls_per_request_count{RATE}))",
            ),
        ],
    ),
    (
        "Paraphrase sets/min (complete or not)",
        "short",
        [
            (
                "complete={{complete}}",
                f"60 * sum by (complete) (rate(steadfast_paraphrase_sets_total{RATE}))",
            ),
        ],
    ),
    (
        "Paraphrase candidates/s by outcome",
        "short",
        [
            (
                "{{outcome}}",
                f"sum by (outcome) (rate(steadfast_paraphrase_candidates_total{RATE}))",
            ),
            (
                "verify: {{decision}}",
                f"sum by (decision) (rate(steadfast_verify_candidates_total{RATE}))",
            ),
        ],
    ),
    (
        "Evaluation answers/s by outcome",
        "short",
        [
            ("{{outcome}}", f"sum by (outcome) (rate(steadfast_evaluation_answers_total{RATE}))"),
        ],
    ),
    (
        "Evaluations and position-bias jobs finished by status (last hour)",
        "short",
        [
            ("{{status}}", "sum by (status) (increase(steadfast_evaluations_finished_total[1h]))"),
            (
                "position-bias job {{status}}",
                "sum by (status) (increase(steadfast_position_jobs_finished_total[1h]))",
            ),
        ],
    ),
    (
        "Rows deleted by the retention sweeps (last day)",
        "short",
        [
            ("{{kind}}", "sum by (kind) (increase(steadfast_evaluator_purged_total[1d]))"),
            (
                "cached answer",
                "sum(increase(steadfast_model_cache_purged_total[1d]))",
            ),
        ],
    ),
    (
        "Answers graded/s by label",
        "short",
        [
            (
                "{{task}} {{label}}",
                f"sum by (task, label) (rate(steadfast_scoring_answers_graded_total{RATE}))",
            ),
        ],
    ),
    (
        "API calls refused for their key/s",
        "reqps",
        [
            ("{{reason}}", f"sum by (reason) (rate(steadfast_api_auth_rejections_total{RATE}))"),
        ],
    ),
    (
        "Requests over a key's limit (429)/s",
        "reqps",
        [
            ("{{limit}}", f"sum by (limit) (rate(steadfast_key_limit_rejections_total{RATE}))"),
        ],
    ),
    (
        "Running builds",
        "short",
        [
            ("{{service}} {{version}}", "sum by (service, version) (steadfast_build_info)"),
        ],
    ),
]


#: the monitors' series, narrowed by the dashboard's monitor and model variables (every
#: evaluator exports the same values: one line per monitor and model, not per instance)
MONITORED = (
    'max by (monitor, model) (steadfast_monitor_value{monitor=~"$monitor", model=~"$model", '
    'metric="%s"})'
)

RELIABILITY_PANELS: list[tuple[str, str, list[tuple[str, str]]]] = [
    (
        "A_strict: right on every wording (monitors)",
        "percentunit",
        [("{{monitor}} {{model}}", MONITORED % "a_strict")],
    ),
    (
        "Flip rate (monitors)",
        "percentunit",
        [("{{monitor}} {{model}}", MONITORED % "flip_rate")],
    ),
    (
        "Conflict rate (monitors)",
        "percentunit",
        [("{{monitor}} {{model}}", MONITORED % "conflict_rate")],
    ),
    (
        "Position bias: PF and PC (monitors)",
        "short",
        [
            ("{{monitor}} {{model}} PF", MONITORED % "pf"),
            ("{{monitor}} {{model}} PC", MONITORED % "pc"),
        ],
    ),
    (
        "Proxy agreement, median of the votes",
        "percentunit",
        [
            (
                "paraphrase-vote",
                "histogram_quantile(0.5, sum by (le) "
                f"(rate(steadfast_proxy_agreement_ratio_bucket{RATE})))",
            ),
        ],
    ),
    (
        "Shadow agreement on live traffic, median by route",
        "percentunit",
        [
            (
                "{{route}}",
                "histogram_quantile(0.5, sum by (le, route) "
                f"(rate(steadfast_shadow_agreement_ratio_bucket{RATE})))",
            ),
        ],
    ),
    (
        "Shadow checks/s by route and outcome",
        "short",
        [
            (
                "{{route}} {{outcome}}",
                f"sum by (route, outcome) (rate(steadfast_shadow_checks_total{RATE}))",
            ),
        ],
    ),
    (
        "Monitor runs by outcome (last day) and hours since the last success",
        "short",
        [
            (
                "{{monitor}} {{status}}",
                "sum by (monitor, status) "
                '(increase(steadfast_monitor_runs_total{monitor=~"$monitor"}[1d]))',
            ),
            (
                "{{monitor}} hours since success",
                "(time() - max by (monitor) "
                '(steadfast_monitor_last_success_timestamp_seconds{monitor=~"$monitor"})) / 3600',
            ),
        ],
    ),
]


def variable(name: str, query: str) -> dict[str, Any]:
    return {
        "name": name,
        "type": "query",
        "datasource": {"type": "prometheus", "uid": "prometheus"},
        "query": {"query": query, "refId": f"{name}-values"},
        "definition": query,
        "refresh": 2,
        "includeAll": True,
        "multi": True,
        "current": {"text": "All", "value": "$__all"},
        "sort": 1,
    }


def panel(index: int, title: str, unit: str, targets: list[tuple[str, str]]) -> dict[str, Any]:
    return {
        "id": index + 1,
        "type": "timeseries",
        "title": title,
        "datasource": {"type": "prometheus", "uid": "prometheus"},
        "gridPos": {"h": 8, "w": 12, "x": 12 * (index % 2), "y": 8 * (index // 2)},
        "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
        "targets": [
            {"refId": chr(ord("A") + position), "expr": expr, "legendFormat": legend}
            for position, (legend, expr) in enumerate(targets)
        ],
    }


def dashboard() -> dict[str, Any]:
    return {
        "uid": "steadfast",
        "title": "Steadfast",
        "tags": ["steadfast"],
        "schemaVersion": 39,
        "time": {"from": "now-6h", "to": "now"},
        "refresh": "30s",
        "panels": [panel(i, *spec) for i, spec in enumerate(PANELS)],
    }


def reliability_dashboard() -> dict[str, Any]:
    return {
        "uid": "steadfast-reliability",
        "title": "Steadfast — model reliability",
        "tags": ["steadfast"],
        "schemaVersion": 39,
        "time": {"from": "now-30d", "to": "now"},
        "refresh": "5m",
        "templating": {
            "list": [
                variable("monitor", "label_values(steadfast_monitor_value, monitor)"),
                variable(
                    "model", 'label_values(steadfast_monitor_value{monitor=~"$monitor"}, model)'
                ),
            ]
        },
        "panels": [panel(i, *spec) for i, spec in enumerate(RELIABILITY_PANELS)],
    }


#: file name → the dashboard written to it
DASHBOARDS = {
    "steadfast-dashboard.json": dashboard,
    "steadfast-reliability-dashboard.json": reliability_dashboard,
}

if __name__ == "__main__":
    for name, build in DASHBOARDS.items():
        path = Path(__file__).with_name(name)
        path.write_text(json.dumps(build(), indent=2, ensure_ascii=False) + "\n")
        print(f"wrote {path}")
