"""Routes from a TOML file; a broken file names the route and the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from steadfast.services.gateway.domain.routes import BUILTIN_ROUTES, RoutesFileError, load_routes


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "models.toml"
    path.write_text(text)
    return path


def test_no_file_gives_the_bundled_local_routes() -> None:
    routes = load_routes("")
    assert set(routes) == {"local", "local-small", "local-tiny"}
    assert {route.backend for route in routes.values()} == {"local"}
    assert routes["local-tiny"].model == "smollm2-135m-instruct"
    assert routes == BUILTIN_ROUTES


def test_file_routes_with_defaults(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        """
[models.gpt-mini]
backend = "openai"
model = "gpt-4.1-mini"
api_key_env = "OPENAI_API_KEY"
max_concurrency = 4
requests_per_minute = 500
timeout_s = 30
max_retries = 2

[models.gemini-flash]
backend = "gemini"
model = "gemini-2.5-flash"

[models.tiny]
backend = "local"
model = "smollm2-135m-instruct"
n_parallel = 2
""",
    )
    routes = load_routes(path)
    assert list(routes) == ["gpt-mini", "gemini-flash", "tiny"]
    mini = routes["gpt-mini"]
    assert (mini.name, mini.max_concurrency, mini.requests_per_minute) == ("gpt-mini", 4, 500)
    assert (mini.timeout_s, mini.max_retries) == (30.0, 2)
    assert mini.resolved_base_url() == "https://api.openai.com/v1"
    assert routes["gemini-flash"].resolved_base_url() is None
    assert routes["tiny"].n_parallel == 2


@pytest.mark.parametrize(
    ("table", "route", "key"),
    [
        (
            '[models.a]\nbackend = "openai"\nmodel = "m"\nmax_concurency = 3\n',
            "a",
            "max_concurency",
        ),
        ('[models.b]\nbackend = "openai"\nmodel = "m"\ntimeout_s = "soon"\n', "b", "timeout_s"),
        ('[models.c]\nbackend = "openai"\n', "c", "model"),
        ('[models.d]\nbackend = "telepathy"\nmodel = "m"\n', "d", "backend"),
        (
            '[models.e]\nbackend = "openai"\nmodel = "m"\nmax_concurrency = 0\n',
            "e",
            "max_concurrency",
        ),
        ('[models.f]\nbackend = "local"\nmodel = "llama-70b"\n', "f", "model"),
    ],
)
def test_broken_route_names_route_and_key(tmp_path: Path, table: str, route: str, key: str) -> None:
    good = '[models.fine]\nbackend = "ollama"\nmodel = "llama3"\n'
    with pytest.raises(RoutesFileError) as error:
        load_routes(_write(tmp_path, good + table))
    message = str(error.value)
    assert f"route {route!r}" in message
    assert f"key {key!r}" in message
    assert "fine" not in message.split("route", 1)[1].split(",")[0]


def test_file_errors_are_clear(tmp_path: Path) -> None:
    with pytest.raises(RoutesFileError, match="cannot be read"):
        load_routes(tmp_path / "missing.toml")
    with pytest.raises(RoutesFileError, match="not valid TOML"):
        load_routes(_write(tmp_path, "[models.a\n"))
    with pytest.raises(RoutesFileError, match=r"\[models.<name>\]"):
        load_routes(_write(tmp_path, "title = 'x'\n"))
