"""``promtool test rules``: every alert of deploy/prometheus/alerts.yml on synthetic series that
must fire it and series that must not (tests/prometheus/). The test command installs promtool
(Debian's prometheus package) and sets STEADFAST_REQUIRE_PROMTOOL, so there it cannot be skipped."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

TESTS = Path(__file__).resolve().parents[1] / "prometheus"
ALERTS = Path(__file__).resolve().parents[2] / "deploy" / "prometheus" / "alerts.yml"
RELIABILITY_ALERTS = {
    "SteadfastFlipRateUp",
    "SteadfastShadowAgreementDropping",
    "SteadfastMonitorStale",
    "SteadfastMonitorRunsFailing",
}


def promtool() -> str:
    found = shutil.which("promtool")
    if found is None:
        if os.environ.get("STEADFAST_REQUIRE_PROMTOOL"):
            pytest.fail("promtool is not installed (apt-get install prometheus)")
        pytest.skip("promtool is not installed (./dev.sh test installs it)")
    return found


@pytest.mark.parametrize("rules_test", sorted(TESTS.glob("*_test.yml")), ids=lambda p: p.name)
def test_promtool_rule_tests_pass(rules_test: Path) -> None:
    done = subprocess.run(
        [promtool(), "test", "rules", rules_test.name],
        cwd=rules_test.parent,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout


def test_every_reliability_alert_has_a_firing_and_a_quiet_case() -> None:
    groups = yaml.safe_load(ALERTS.read_text())["groups"]
    alerts = {
        rule["alert"]
        for group in groups
        if group["name"] == "steadfast-reliability"
        for rule in group["rules"]
        if "alert" in rule
    }
    assert alerts == RELIABILITY_ALERTS
    cases = [
        case
        for document in TESTS.glob("*_test.yml")
        for test in yaml.safe_load(document.read_text())["tests"]
        for case in test["alert_rule_test"]
    ]
    for alert in alerts:
        mine = [case for case in cases if case["alertname"] == alert]
        assert any(case["exp_alerts"] for case in mine), f"{alert}: no case where it fires"
        assert any(not case["exp_alerts"] for case in mine), (
            f"{alert}: no case where it stays quiet"
        )
