"""Domain code and adapters raise domain errors that know nothing of HTTP; each service's
controllers (or its one exception handler) map them to problem details."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LAYERS = ("domain", "adapters")


def http_references(source: str) -> list[str]:
    """What ``source`` takes from the HTTP side: litestar, ``ProblemError`` and the rest of
    ``steadfast.shared.problems`` (which turns errors into HTTP answers)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if _is_http_module(alias.name)]
        elif isinstance(node, ast.ImportFrom) and node.module:
            found += [
                f"{node.module}.{alias.name}"
                for alias in node.names
                if _is_http_module(node.module) or _is_http_module(f"{node.module}.{alias.name}")
            ]
        elif isinstance(node, ast.Name | ast.Attribute) and _name_of(node) == "ProblemError":
            found.append("ProblemError")
    return found


def _is_http_module(module: str) -> bool:
    return module.split(".")[0] == "litestar" or module == "steadfast.shared.problems"


def _name_of(node: ast.Name | ast.Attribute) -> str:
    return node.id if isinstance(node, ast.Name) else node.attr


def _modules() -> list[Path]:
    return sorted(
        path for layer in LAYERS for path in (REPO / "services").glob(f"*/{layer}/**/*.py")
    )


def test_domain_and_adapters_know_nothing_of_http() -> None:
    offending = {
        str(path.relative_to(REPO)): found
        for path in _modules()
        if (found := http_references(path.read_text(encoding="utf-8")))
    }
    assert not offending


def test_the_services_checked_are_all_there() -> None:
    checked = {path.relative_to(REPO / "services").parts[0] for path in _modules()}
    assert checked == {"evaluator", "gateway", "perturb", "scoring", "verify"}


@pytest.mark.parametrize(
    "source",
    [
        "from litestar import Request",
        "import litestar.exceptions",
        "from steadfast.shared.problems import ProblemError",
        "from steadfast.shared import problems\nraise problems.ProblemError(422, 'x')",
        "from steadfast.shared.problems import field_from_message",
        "from steadfast.shared import problems",
    ],
)
def test_each_way_of_reaching_http_is_found(source: str) -> None:
    assert http_references(source)


def test_other_modules_are_allowed() -> None:
    source = "import aiohttp\nfrom steadfast.shared.errors import field_from_message, NotFound"
    assert http_references(source) == []
