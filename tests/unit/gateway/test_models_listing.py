"""``GET /v1/models`` names every route, and never a credential in its address."""

from __future__ import annotations

from pathlib import Path

from litestar.testing import TestClient

from steadfast.services.gateway.app import create_app
from steadfast.services.gateway.settings import GatewaySettings

ROUTES = """
[models.remote]
backend = "openai"
model = "m"
base_url = "https://team:hunter2@llm.example.com:8443/v1?api_key=abcdef123456"
"""


def test_a_route_address_is_listed_without_its_credentials(tmp_path: Path) -> None:
    routes = tmp_path / "models.toml"
    routes.write_text(ROUTES)
    app = create_app(GatewaySettings(models_file=str(routes), data_dir=str(tmp_path)))
    with TestClient(app) as client:
        listing = client.get("/v1/models")
    assert listing.status_code == 200, listing.text
    [route] = [m for m in listing.json()["models"] if m["name"] == "remote"]
    assert route["base_url"] == "https://llm.example.com:8443/v1"
    assert "hunter2" not in listing.text and "abcdef123456" not in listing.text
