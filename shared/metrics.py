"""Prometheus helpers: build info, HTTP metrics per route template, the /metrics endpoint."""

from __future__ import annotations

import platform

from litestar.plugins.prometheus import PrometheusConfig, PrometheusController
from prometheus_client import Gauge

from steadfast.shared import __version__

BUILD_INFO = Gauge(
    "steadfast_build_info",
    "Build of the running Steadfast service (value is always 1).",
    ["service", "version", "python"],
)


def record_build_info(service: str) -> None:
    BUILD_INFO.labels(service=service, version=__version__, python=platform.python_version()).set(1)


def http_metrics_config(service: str) -> PrometheusConfig:
    """HTTP request counters and latency histograms labelled by route template, not raw path.

    Metric names: ``steadfast_http_requests_total``, ``steadfast_http_request_duration_seconds``,
    ``steadfast_http_requests_in_progress``, ``steadfast_http_requests_error_total``.
    """
    return PrometheusConfig(
        app_name=service,
        prefix="steadfast_http",
        group_path=True,
        exclude=["/metrics"],
        buckets=[
            0.001,
            0.0025,
            0.005,
            0.01,
            0.025,
            0.05,
            0.1,
            0.25,
            0.5,
            1,
            2.5,
            5,
            10,
            30,
            60,
            120,
            300,
        ],
    )


class MetricsController(PrometheusController):
    """``/metrics``: the service's Prometheus metrics (not in the OpenAPI document)."""

    path = "/metrics"
    include_in_schema = False
