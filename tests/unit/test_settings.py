from __future__ import annotations

from pathlib import Path

import pytest

from steadfast.services.evaluator.settings import EvaluatorSettings
from steadfast.services.gateway.settings import GatewaySettings
from steadfast.shared.settings import SettingsError, default_data_dir, load_settings


def test_service_specific_variable_wins_over_global(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STEADFAST_LOG_LEVEL", "WARNING")
    monkeypatch.setenv("STEADFAST_GATEWAY_LOG_LEVEL", "DEBUG")
    monkeypatch.setenv("STEADFAST_GATEWAY_PORT", "9123")
    settings = load_settings("gateway", GatewaySettings)
    assert settings.log_level == "DEBUG"
    assert settings.port == 9123


def test_defaults_port_and_database_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("STEADFAST_GATEWAY_PORT", raising=False)
    monkeypatch.setenv("DATABASE_URL", "postgresql://u@h/db")
    settings = load_settings("gateway", GatewaySettings)
    assert settings.port == 8001
    assert settings.database_url == "postgresql://u@h/db"
    assert settings.service_url("scoring") == "http://127.0.0.1:8004"


def test_wrong_type_names_the_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STEADFAST_GATEWAY_MAX_BODY_BYTES", "lots")
    with pytest.raises(SettingsError, match="max_body_bytes"):
        load_settings("gateway", GatewaySettings)


def test_a_retention_period_is_read_in_days_and_cannot_be_negative(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("STEADFAST_EVALUATOR_RETENTION_DAYS", "30")
    assert load_settings("evaluator", EvaluatorSettings).retention_days == 30.0
    monkeypatch.setenv("STEADFAST_EVALUATOR_RETENTION_DAYS", "-1")
    with pytest.raises(SettingsError, match="retention_days"):
        load_settings("evaluator", EvaluatorSettings)


def test_default_data_dir_is_per_user(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_data_dir() == tmp_path / "steadfast"
    monkeypatch.delenv("XDG_DATA_HOME")
    assert default_data_dir() == Path.home() / ".local" / "share" / "steadfast"


def test_a_retry_base_of_zero_is_refused_at_start(monkeypatch: pytest.MonkeyPatch) -> None:
    # it once hung the evaluator's start-up: waits of 0 s never add up to the unreachable wait
    monkeypatch.setenv("STEADFAST_EVALUATOR_RETRY_BASE_S", "0")
    with pytest.raises(SettingsError, match="retry_base_s"):
        load_settings("evaluator", EvaluatorSettings)


def test_a_port_set_in_the_environment_is_where_services_listen_and_are_looked_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from steadfast.shared.settings import ServiceSettings
    from steadfast.supervisor import service_ports

    monkeypatch.setenv("STEADFAST_EVALUATOR_PORT", "9000")
    monkeypatch.delenv("STEADFAST_EVALUATOR_URL", raising=False)
    assert service_ports()["evaluator"] == 9000 and service_ports()["gateway"] == 8001
    assert ServiceSettings().service_url("evaluator") == "http://127.0.0.1:9000"
    assert service_ports(base_port=7000)["evaluator"] == 7000  # an explicit base still wins
