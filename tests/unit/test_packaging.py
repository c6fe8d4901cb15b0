"""The package's metadata comes from one place and says what it ships."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from steadfast import __version__
from steadfast.shared import __version__ as services_version

REPO = Path(__file__).resolve().parents[2]


def test_the_version_is_written_once() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert "version" not in project["project"]
    assert project["project"]["dynamic"] == ["version"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "steadfast.__version__"}
    assert services_version == __version__


def test_the_changelog_has_a_section_for_this_version() -> None:
    headings = re.findall(r"^## (\S+) ", (REPO / "CHANGELOG.md").read_text(), flags=re.M)
    assert headings[0] == __version__


def test_one_import_package_is_installed() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert project["tool"]["setuptools"]["packages"]["find"]["include"] == ["steadfast*"]
    for linked in ("services", "shared"):
        link = REPO / "steadfast" / linked
        assert link.is_symlink() and link.resolve() == (REPO / linked).resolve()


def test_the_licence_file_is_the_declared_one() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert project["project"]["license"] == "Apache-2.0"
    assert "Apache License" in (REPO / "LICENSE").read_text()[:200]


def test_nothing_imports_the_folders_as_top_level_packages() -> None:
    """In a checkout ``services`` would still import (the repository root is on the path) and
    load a second copy of every module beside ``steadfast.services``; an installed package has
    no such module at all."""
    top_level = re.compile(
        r"^\s*(?:from|import)\s+(?:services|shared)\b|[\"'](?:services|shared)\.[a-z_{]", re.M
    )
    offending = [
        f"{path.relative_to(REPO)}: {match.group(0).strip()}"
        for folder in ("services", "shared", "steadfast", "tests", "bench", "scripts")
        for path in (REPO / folder).rglob("*.py")
        if "steadfast/services" not in path.as_posix() and "steadfast/shared" not in path.as_posix()
        for match in top_level.finditer(path.read_text(encoding="utf-8"))
    ]
    assert not offending
