"""The deploy/ files stay true to the code: dashboards and alerts query metrics that exist."""

from __future__ import annotations

import importlib
import json
import re
import runpy
from pathlib import Path

import pytest
import yaml
from litestar.testing import TestClient
from prometheus_client import REGISTRY, generate_latest

from steadfast.shared.settings import SERVICE_NAMES

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
METRIC_NAME = re.compile(r"\bsteadfast_[a-z_]+")
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")


def exported_metric_names() -> set[str]:
    """Every metric family the five services register, after one request through each app."""
    for service in SERVICE_NAMES:
        app = importlib.import_module(f"steadfast.services.{service}.app").create_app()
        with TestClient(app) as client:
            client.get("/healthz")
    text = generate_latest(REGISTRY).decode()
    return set(re.findall(r"^# TYPE (\S+) ", text, flags=re.MULTILINE))


def queried_metric_names(expressions: list[str]) -> set[str]:
    names = set()
    for expression in expressions:
        for name in METRIC_NAME.findall(expression):
            for suffix in HISTOGRAM_SUFFIXES:
                if name.endswith(suffix):
                    name = name.removesuffix(suffix)
            names.add(name)
    return names


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("STEADFAST_DATA_DIR", str(tmp_path_factory.mktemp("data")))
        return exported_metric_names()


DASHBOARDS = ["steadfast-dashboard.json", "steadfast-reliability-dashboard.json"]


@pytest.mark.parametrize("name", DASHBOARDS)
def test_dashboard_is_generated_from_its_builder(name: str) -> None:
    builder = runpy.run_path(str(DEPLOY / "grafana" / "build_dashboard.py"))
    committed = json.loads((DEPLOY / "grafana" / name).read_text())
    assert committed == builder["DASHBOARDS"][name](), (
        "run python deploy/grafana/build_dashboard.py"
    )


@pytest.mark.parametrize(("name", "at_least"), [(DASHBOARDS[0], 15), (DASHBOARDS[1], 6)])
def test_dashboard_queries_only_exported_metrics(
    exported: set[str], name: str, at_least: int
) -> None:
    dashboard = json.loads((DEPLOY / "grafana" / name).read_text())
    expressions = [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]
    expressions += [v["query"]["query"] for v in dashboard.get("templating", {}).get("list", [])]
    queried = queried_metric_names(expressions)
    assert len(queried) >= at_least
    assert queried - exported == set()


def test_the_reliability_dashboard_follows_every_monitored_metric() -> None:
    dashboard = json.loads((DEPLOY / "grafana" / DASHBOARDS[1]).read_text())
    expressions = " ".join(t["expr"] for p in dashboard["panels"] for t in p["targets"])
    for metric in ("a_strict", "flip_rate", "conflict_rate", "pf", "pc"):
        assert f'metric="{metric}"' in expressions
    assert "steadfast_proxy_agreement_ratio_bucket" in expressions
    assert "steadfast_shadow_agreement_ratio_bucket" in expressions
    names = [v["name"] for v in dashboard["templating"]["list"]]
    assert names == ["monitor", "model"]


def test_alert_rules_query_only_exported_metrics(exported: set[str]) -> None:
    rules = yaml.safe_load((DEPLOY / "prometheus" / "alerts.yml").read_text())
    expressions = [rule["expr"] for group in rules["groups"] for rule in group["rules"]]
    # the recorded margins (steadfast:...) are the rules' own, not the services'
    assert queried_metric_names(expressions) - exported == set()


def test_compose_publishes_only_the_keyed_evaluator_beyond_this_machine() -> None:
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    published = {
        name: port
        for name, service in compose["services"].items()
        for port in service.get("ports", [])
    }
    open_to_all = {name for name, port in published.items() if not port.startswith("127.0.0.1:")}
    assert open_to_all == {"evaluator"}  # it asks for API keys; the gateway and the rest do not
