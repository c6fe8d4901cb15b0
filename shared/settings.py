"""Typed settings read from the environment.

Each service declares one ``msgspec.Struct`` subclass of :class:`ServiceSettings` and exposes it
through a cached getter. A field ``foo_bar`` of the gateway's settings is read from
``STEADFAST_GATEWAY_FOO_BAR``; fields shared by every service (:data:`GLOBAL_FIELDS`) are read
from ``STEADFAST_<FIELD>`` (and ``DATABASE_URL``) unless the service-specific variable is set.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, TypeVar

import msgspec

SERVICE_PORTS: dict[str, int] = {
    "evaluator": 8000,
    "gateway": 8001,
    "perturb": 8002,
    "verify": 8003,
    "scoring": 8004,
}
SERVICE_NAMES: tuple[str, ...] = tuple(SERVICE_PORTS)


def default_port(service: str) -> int:
    """The port ``service`` listens on unless told otherwise: ``STEADFAST_<SERVICE>_PORT``,
    else its fixed one (8000-8004)."""
    value = os.environ.get(f"STEADFAST_{service.upper()}_PORT", "")
    return int(value) if value.isdigit() else SERVICE_PORTS[service]


def default_data_dir() -> Path:
    """Per-user data directory: ``$XDG_DATA_HOME/steadfast`` or ``~/.local/share/steadfast``."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "steadfast"


class ServiceSettings(msgspec.Struct, kw_only=True):
    """Settings every service has."""

    #: the port a launcher binds (``steadfast up`` and the container read the same variable)
    port: int = 0
    log_level: str = "INFO"
    log_json: bool = True
    max_body_bytes: int = 2 * 1024 * 1024
    data_dir: str = ""
    database_url: str = ""
    #: base URLs of the other services, used by readiness checks and clients
    evaluator_url: str = ""
    gateway_url: str = ""
    perturb_url: str = ""
    verify_url: str = ""
    scoring_url: str = ""
    #: default timeout of one service-to-service call
    call_timeout_s: float = 300.0
    #: a service with a database upgrades its tables when it starts; false where a job runs
    #: ``steadfast migrate`` before the services roll out (Kubernetes): a service then refuses
    #: to start on tables that are not at its version
    migrate_on_start: bool = True
    #: the secret the services send each other (``X-Steadfast-Internal-Token``); set, perturb,
    #: verify, scoring and the gateway's internal endpoints refuse calls without it. Needed
    #: wherever they listen beyond 127.0.0.1; empty: the open local mode
    internal_token: str = ""

    def resolved_data_dir(self) -> Path:
        return Path(self.data_dir) if self.data_dir else default_data_dir()

    def service_url(self, service: str) -> str:
        url: str = getattr(self, f"{service}_url")
        return url or f"http://127.0.0.1:{default_port(service)}"


GLOBAL_FIELDS = frozenset(
    {
        "log_level",
        "log_json",
        "data_dir",
        "database_url",
        "call_timeout_s",
        "migrate_on_start",
        "internal_token",
        *(f"{name}_url" for name in SERVICE_NAMES),
    }
)

S = TypeVar("S", bound=ServiceSettings)


def _environment_value(service: str, field: str) -> str | None:
    specific = os.environ.get(f"STEADFAST_{service.upper()}_{field.upper()}")
    if specific is not None:
        return specific
    if field in GLOBAL_FIELDS:
        if field == "database_url" and "DATABASE_URL" in os.environ:
            return os.environ["DATABASE_URL"]
        return os.environ.get(f"STEADFAST_{field.upper()}")
    return None


def load_settings(service: str, settings_type: type[S], **overrides: Any) -> S:
    """Build ``settings_type`` from the environment; ``SettingsError`` names a bad variable."""
    raw: dict[str, Any] = {}
    for field in msgspec.structs.fields(settings_type):
        value = _environment_value(service, field.name)
        if value is not None:
            raw[field.name] = value
    raw.setdefault("port", SERVICE_PORTS.get(service, 0))
    raw.update(overrides)
    try:
        return msgspec.convert(raw, type=settings_type, strict=False)
    except msgspec.ValidationError as exc:
        raise SettingsError(f"invalid setting for {service}: {exc}") from exc


class SettingsError(ValueError):
    """A setting read from the environment has the wrong type or value."""
