"""The evaluator's layers: its adapters keep data and reach other services, and never import
its domain (the domain hands them what to keep: rows, keys, records of ``records.py``)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ADAPTERS = REPO / "services" / "evaluator" / "adapters"
DOMAIN = "steadfast.services.evaluator.domain"


def imported_modules(source: str, package: str) -> set[str]:
    """Every module ``source`` (a module of ``package``) imports, type-checking imports too;
    ``from a import b`` counts as ``a`` and ``a.b`` (``b`` may be a module)."""
    modules: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            # a relative import counts from the package, one level up per extra dot
            package_parts = package.split(".")
            base = package_parts[: len(package_parts) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            modules.add(module)
            modules.update(f"{module}.{alias.name}" for alias in node.names)
    return modules


def package_of(path: Path) -> str:
    """The package a module file is in (an ``__init__.py``'s: its own)."""
    return ".".join(("steadfast", *path.relative_to(REPO).parent.parts))


def imports_domain(module: str) -> bool:
    return module == DOMAIN or module.startswith(f"{DOMAIN}.")


@pytest.mark.parametrize(
    ("source", "package"),
    [
        ("from steadfast.services.evaluator.domain.pipeline import item_id", "x"),
        ("import steadfast.services.evaluator.domain.item_results", "x"),
        ("from steadfast.services.evaluator import domain", "x"),
        ("from ..domain import prompts", "steadfast.services.evaluator.adapters"),
        ("from ...domain.prompts import item_language", "steadfast.services.evaluator.adapters.x"),
        (
            "from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n"
            "    from steadfast.services.evaluator.domain.job_results import StoredResults\n",
            "x",
        ),
    ],
)
def test_every_form_of_a_domain_import_is_seen(source: str, package: str) -> None:
    assert any(imports_domain(module) for module in imported_modules(source, package))


def test_an_import_of_a_neighbour_is_not_taken_for_the_domain() -> None:
    source = "from ..records import ParaphraseSet\nfrom .rows import ItemRow\n"
    modules = imported_modules(source, "steadfast.services.evaluator.adapters")
    assert "steadfast.services.evaluator.records" in modules
    assert not any(imports_domain(module) for module in modules)


def test_no_evaluator_adapter_imports_the_evaluator_domain() -> None:
    paths = sorted(ADAPTERS.rglob("*.py"))
    assert len(paths) > 5
    offending = [
        f"{path.relative_to(REPO)}: {module}"
        for path in paths
        for module in sorted(imported_modules(path.read_text(encoding="utf-8"), package_of(path)))
        if imports_domain(module)
    ]
    assert not offending
